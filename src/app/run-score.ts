/**
 * The score a run list shows of a run (total EX, scored questions, samples), from the same
 * summary as the dashboard (`scoreOf`, core/run/score-run.ts). A run evaluated whole gets it from
 * its evaluation; a resumed or generated run from all its samples once they are stored; an
 * imported run file from its samples.
 */
import { scoreOf } from '../core/run/score-run.ts';
import type { RunHeader } from '../core/run/types.ts';
import type { RunRepositoryPort } from './ports.ts';

/** `run`, finished, with the score of all its stored samples written into its header; unchanged when they cannot be read. */
export async function withStoredScore(runs: RunRepositoryPort, run: RunHeader): Promise<RunHeader> {
  if (run.status !== 'done' || run.score) return run;
  try {
    const scored: RunHeader = { ...run, score: scoreOf(await runs.samples(run.id), run.config.metrics) };
    await runs.put(scored);
    return scored;
  } catch {
    return run;
  }
}
