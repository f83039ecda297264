/**
 * A step's evaluation executes only SQL the series has not executed before: a verdict of an
 * earlier step is taken for an item with the same database, gold and prediction under the rules
 * of src/core/run/reuse.ts (never for non-deterministic or writing SQL, nor from a result that
 * changed the database or failed for a reason outside the SQL; never with R-VES). The rest goes
 * through the run recipe (scoreRun: findings included), which also reuses within the step.
 *
 * This is the one place a series evaluates a step (the CLI's `series` calls it; the app's series
 * will): when the shared run recipe (scoreRun) lands, `evaluateSeriesStep` is the function to
 * switch to it.
 */
import { summarize, type Summary } from '../eval/summary.ts';
import { scoreRun, type ScoreConfig, type ScoreRunPorts } from '../run/score-run.ts';
import { copyResult, reusable, reuseKey, shareable } from '../run/reuse.ts';
import type { EvalItem, ItemResult } from '../types.ts';

/** Shareable verdicts of the series so far, by reuse key. */
export class SeriesVerdicts {
  private readonly byKey = new Map<string, ItemResult>();

  get size(): number {
    return this.byKey.size;
  }

  lookup(item: EvalItem): ItemResult | undefined {
    return reusable(item) ? this.byKey.get(reuseKey(item)) : undefined;
  }

  remember(item: EvalItem, result: ItemResult): void {
    if (!reusable(item) || !shareable(result)) return;
    const key = reuseKey(item);
    if (!this.byKey.has(key)) this.byKey.set(key, result);
  }
}

export interface StepEvaluation {
  /** In item order. */
  results: ItemResult[];
  summary: Summary;
  cancelled: boolean;
  /** Items executed by this step, items given the verdict of an earlier step, items given one of this step (runEvaluation's reuse). */
  executed: number;
  fromEarlierSteps: number;
  reusedInStep: number;
}

export async function evaluateSeriesStep(
  items: readonly EvalItem[],
  options: ScoreConfig,
  ports: ScoreRunPorts,
  verdicts: SeriesVerdicts,
): Promise<StepEvaluation> {
  const results: Array<ItemResult | undefined> = new Array(items.length);
  const rest: EvalItem[] = [];
  const restAt: number[] = [];
  const crossStep = !options.metrics.includes('r-ves') && (ports.reuse ?? true);
  items.forEach((it, i) => {
    const known = crossStep ? verdicts.lookup(it) : undefined;
    if (known) results[i] = copyResult(known, it);
    else {
      rest.push(it);
      restAt.push(i);
    }
  });
  const fromEarlierSteps = items.length - rest.length;
  const out = rest.length === 0 ? null : await scoreRun(rest, options, ports);
  if (out) {
    // runEvaluation keeps item order; a cancelled run holds only what finished, matched by (index, sample).
    const at = new Map(rest.map((it, j) => [`${it.index}\u0000${it.sample ?? 0}`, j]));
    for (const r of out.results) {
      const j = at.get(`${r.index}\u0000${r.sample ?? 0}`);
      if (j === undefined) continue;
      results[restAt[j]!] = r;
      verdicts.remember(rest[j]!, r);
    }
  }
  const done = results.filter((r): r is ItemResult => r !== undefined);
  return {
    results: done,
    summary: summarize(done, options.metrics),
    cancelled: out?.cancelled ?? false,
    executed: out?.executed ?? 0,
    fromEarlierSteps,
    reusedInStep: out?.reused ?? 0,
  };
}
