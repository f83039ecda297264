/**
 * A series (a training run): an ordered list of steps on one dataset, each step one run with its
 * training step, the wall time when known, where it came from, its samples (or, in a store, the
 * id of the run holding them) and the trainer's own score of each sample beside our verdict.
 */
import { WorkbenchError } from '../errors.ts';
import type { RunFile } from '../run/types.ts';
import type { Exclusion } from '../eval/exclusions.ts';

/**
 * Where a step's wall time came from: the dump's own time (an Inspect log's, the date of an
 * lm-eval results file), the file's modification time, or (runs grouped by hand) the run's creation.
 */
export type WallTimeSource = 'dump' | 'file' | 'run';
export const WALL_TIME_SOURCES: readonly WallTimeSource[] = ['dump', 'file', 'run'];

export interface SeriesStep {
  step: number;
  /** ISO 8601: when the step's dump was written (the dump's own time, else its file's modification time); null when unknown. */
  wallTime: string | null;
  /** Where `wallTime` came from; null when it is unknown (series files written before it was kept). */
  wallTimeSource: WallTimeSource | null;
  /** The file (or files) the step was read from, as named to the user. */
  source: string;
  /** The step's run: header, every sample and the questions' text. */
  run: RunFile;
  /**
   * The trainer's own score of each sample (verl `score`, lm-eval's first metric, Inspect's
   * first score), parallel to `run.samples`; null where the dump gave none.
   */
  trainerScores: Array<number | null>;
  /**
   * The trainer's reward columns of each sample, name to value (TRL: one per reward function and
   * `advantage`; prime-rl traces: each reward's score), parallel to `run.samples`; null for a
   * sample the dump gives none. Absent when the dump has no reward columns (and in older files).
   */
  trainerRewards?: Array<TrainerRewards | null>;
  /** How the step was read (rows paired and not, the mapping report); absent when none were kept. */
  notes?: string[];
}

/** One sample's reward columns as the trainer's dump has them; null where a column has no value (NaN, None). */
export type TrainerRewards = Record<string, number | null>;

export interface Series {
  id: string;
  name: string;
  /** ISO 8601. */
  createdAt: string;
  /** The dataset every step ran on (its questions file name). */
  dataset: string;
  /** How steps were read from file names (the rule shown to the user). */
  stepRule: string;
  /** Ordered by `step`, each step once. */
  steps: SeriesStep[];
  /** Questions left out of every step's numbers (src/core/eval/exclusions.ts); absent when none. */
  exclusions?: Exclusion[];
}

/** The series with `step` inserted at its place; a step number already in the series is refused. */
export function withStep(series: Series, step: SeriesStep): Series {
  if (series.steps.some((s) => s.step === step.step)) {
    const had = series.steps.find((s) => s.step === step.step)!;
    throw new WorkbenchError(
      'MISMATCH',
      `step ${step.step} is already in the series (from ${had.source}); each step is evaluated once`,
      step.source,
    );
  }
  if (step.trainerScores.length !== step.run.samples.length) {
    throw new WorkbenchError(
      'INTERNAL',
      `step ${step.step}: ${step.trainerScores.length} trainer scores for ${step.run.samples.length} samples`,
    );
  }
  if (step.trainerRewards && step.trainerRewards.length !== step.run.samples.length) {
    throw new WorkbenchError(
      'INTERNAL',
      `step ${step.step}: ${step.trainerRewards.length} trainer reward entries for ${step.run.samples.length} samples`,
    );
  }
  return { ...series, steps: [...series.steps, step].sort((a, b) => a.step - b.step) };
}

/**
 * One sample's reward columns as the views show them beside the trainer's score:
 * `accuracy_reward 1 · format_reward 0.5 · advantage 0.7143` (4 decimals at most; `none` where the
 * dump has no value). Empty for none.
 */
export function trainerRewardsText(rewards: TrainerRewards | null | undefined): string {
  return Object.entries(rewards ?? {})
    .map(([k, v]) => `${k} ${v === null ? 'none' : String(Number(v.toFixed(4)))}`)
    .join(' · ');
}
