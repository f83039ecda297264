/**
 * A step's evaluation executes only SQL the series has not executed before: a verdict of an
 * earlier step is taken for an item with the same database, gold and prediction under the rules
 * of src/core/run/reuse.ts (never for non-deterministic or writing SQL, nor from a result that
 * changed the database or failed for a reason outside the SQL; never with R-VES). The rest goes
 * through the run recipe (scoreRun: findings included), which also reuses within the step.
 *
 * This is the one place a series evaluates a step, called by the application's step scoring
 * (src/app/series-step.ts), which the CLI's `series` and the app's series service both call. An app series that gains a step after a
 * reload first remembers its stored steps' verdicts (`rememberSample`).
 */
import { summarize, type Summary } from '../eval/summary.ts';
import { scoreRun, type ScoreRunPorts } from '../run/score-run.ts';
import { copyResult, reusable, reuseKey, shareable } from '../run/reuse.ts';
import type { RunConfig, SampleRecord } from '../run/types.ts';
import type { EvalItem, ItemResult } from '../types.ts';

/** Shareable verdicts of the series so far, by reuse key. */
export class SeriesVerdicts {
  private readonly byKey = new Map<string, ItemResult>();
  /** Keys whose texts may write or are not deterministic: never shared (reusability depends only on the key's texts). */
  private readonly refused = new Set<string>();

  get size(): number {
    return this.byKey.size;
  }

  lookup(item: EvalItem): ItemResult | undefined {
    // Only reusable keys are remembered, so a hit is reusable without reading the SQL again.
    return this.byKey.get(reuseKey(item));
  }

  remember(item: EvalItem, result: ItemResult): void {
    const key = reuseKey(item);
    if (this.byKey.has(key) || this.refused.has(key)) return;
    if (!reusable(item)) this.refused.add(key);
    else if (shareable(result)) this.byKey.set(key, result);
  }

  /**
   * A stored sample of an earlier step: its item (database, gold, prediction) and its result,
   * without what belongs to the sample rather than the verdict (texts, reward, rubric, generation).
   */
  rememberSample(s: SampleRecord): void {
    const {
      sample: _s,
      sql,
      goldSql,
      completion: _c,
      format: _f,
      reward: _r,
      meanLogprob: _m,
      rubricScore: _rs,
      rubric: _ru,
      generation: _g,
      ...result
    } = s;
    this.remember(
      {
        index: s.index,
        questionId: s.questionId,
        dbId: s.dbId,
        difficulty: s.difficulty,
        predSql: sql,
        goldSql,
        extraction: s.extraction,
      },
      result,
    );
  }
}

interface StepEvaluation {
  /** In item order. */
  results: ItemResult[];
  summary: Summary;
  cancelled: boolean;
  /**
   * Items whose SQL this step executed (a sample whose database is missing executes nothing and
   * is not counted), items given the verdict of an earlier step, items given one of this step
   * (runEvaluation's reuse).
   */
  executed: number;
  fromEarlierSteps: number;
  reusedInStep: number;
  /** Items whose verdict came from the verdict cache across runs (scoreRun's `verdictCache`), not executed. */
  fromCache: number;
  /** `select sqlite_version()` of the engine that gave the new verdicts; null when nothing was executed. */
  sqliteVersion: string | null;
}

export async function evaluateSeriesStep(
  items: readonly EvalItem[],
  config: RunConfig,
  ports: ScoreRunPorts,
  verdicts: SeriesVerdicts,
): Promise<StepEvaluation> {
  const results: Array<ItemResult | undefined> = new Array(items.length);
  const rest: EvalItem[] = [];
  const restAt: number[] = [];
  const crossStep = !config.metrics.includes('r-ves') && (ports.reuse ?? true);
  items.forEach((it, i) => {
    const known = crossStep ? verdicts.lookup(it) : undefined;
    if (known) results[i] = copyResult(known, it);
    else {
      rest.push(it);
      restAt.push(i);
    }
  });
  const fromEarlierSteps = items.length - rest.length;
  // Progress counts the step's items: those given an earlier step's verdict are done already.
  const stepPorts: ScoreRunPorts = { ...ports, doneBefore: (ports.doneBefore ?? 0) + fromEarlierSteps };
  const out = rest.length === 0 ? null : await scoreRun(rest, config, stepPorts);
  // runEvaluation counts every item it settled as executed; one whose database is missing ran no SQL.
  let missingDb = 0;
  if (out) {
    // runEvaluation keeps item order; a cancelled run holds only what finished, matched by (index, sample).
    const at = new Map(rest.map((it, j) => [`${it.index}\u0000${it.sample ?? 0}`, j]));
    for (const r of out.results) {
      const j = at.get(`${r.index}\u0000${r.sample ?? 0}`);
      if (j === undefined) continue;
      results[restAt[j]!] = r;
      verdicts.remember(rest[j]!, r);
      // Never shared nor cached (reuse.ts `shareable`): each was settled, and counted, once.
      if (r.status === 'missing-db' && !out.fromCache.has(j)) missingDb++;
    }
  }
  const done = results.filter((r): r is ItemResult => r !== undefined);
  return {
    results: done,
    summary: summarize(done, config.metrics),
    cancelled: out?.cancelled ?? false,
    // What ran: a verdict from the cache is counted apart (as the runs' executions), a missing database not at all.
    executed: (out?.executed ?? 0) - (out?.fromCache.size ?? 0) - missingDb,
    fromEarlierSteps,
    reusedInStep: out?.reused ?? 0,
    fromCache: out?.fromCache.size ?? 0,
    sqliteVersion: out?.facts.sqliteVersion ?? null,
  };
}
