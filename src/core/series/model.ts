/**
 * A series (a training run): an ordered list of steps on one dataset, each step one run with its
 * training step, the wall time when known, where it came from, its samples (or, in a store, the
 * id of the run holding them) and the trainer's own score of each sample beside our verdict.
 */
import { WorkbenchError } from '../errors.ts';
import type { RunFile } from '../run/types.ts';

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
}

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
  return { ...series, steps: [...series.steps, step].sort((a, b) => a.step - b.step) };
}
