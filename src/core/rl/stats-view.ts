/**
 * What the app's RL view shows of a run's statistics, small enough to cross from the analysis
 * worker to the page without a long task: every prompt's numbers, and instead of its samples
 * (500,000 records at RL scale) one character per sample saying whether it was right.
 */
import type { PromptStats, RunStats } from './run-stats.ts';

/** A prompt's statistics without its sample records (the exports and the Parquet table need no more). */
export type PromptNumbers = Omit<PromptStats, 'samples'>;

export interface PromptRow extends PromptNumbers {
  /** One character per sample in sample order: `1` for EX 1, `0` otherwise. */
  marks: string;
}

export interface RunStatsView extends Omit<RunStats, 'prompts'> {
  prompts: PromptRow[];
  /** Questions of the run excluded from every number here (its own exclusions and its training runs'); absent means none. */
  excluded?: number;
}

export function toStatsView(stats: RunStats): RunStatsView {
  const prompts = stats.prompts.map(({ samples, ...numbers }): PromptRow => ({
    ...numbers,
    marks: samples.map((s) => (s.ex === 1 ? '1' : '0')).join(''),
  }));
  return {
    ks: stats.ks,
    overall: stats.overall,
    byDifficulty: stats.byDifficulty,
    missingDb: stats.missingDb,
    prompts,
  };
}
