/**
 * The score a run list shows of a run (total EX, scored questions, samples), from the same
 * summary as the dashboard. A run evaluated whole gets it from its evaluation; a resumed or
 * generated run from all its samples once they are stored; an imported run file from its samples.
 */
import type { MetricName } from '../core/eval/executor.ts';
import { summarize } from '../core/eval/summary.ts';
import type { RunHeader, SampleRecord } from '../core/run/types.ts';
import { allSamples } from '../adapters/store/sample-blocks.ts';
import type { WorkbenchIdb } from '../adapters/store/schema.ts';

export function scoreOf(samples: readonly SampleRecord[], metrics: readonly MetricName[]): NonNullable<RunHeader['score']> {
  const total = summarize(samples, metrics).byDifficulty.total;
  return { ex: total.ex, questions: total.count, samples: total.samples };
}

/** `run`, finished, with the score of all its stored samples written into its header; unchanged when they cannot be read. */
export async function withStoredScore(idb: WorkbenchIdb, run: RunHeader): Promise<RunHeader> {
  if (run.status !== 'done' || run.score) return run;
  try {
    const scored: RunHeader = { ...run, score: scoreOf(await allSamples(idb, run.id), run.config.metrics) };
    await idb.put('runs', scored);
    return scored;
  } catch {
    return run;
  }
}
