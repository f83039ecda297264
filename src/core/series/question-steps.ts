/**
 * One question across the steps of a series (`#/series/<id>/question/<index>`): per step, its
 * samples grouped by result with the majority vote (src/core/rl/question-samples.ts), the
 * majority SQL (the first sample of the largest result group, A) and that SQL's difference from
 * the previous step's majority SQL. Pure: the analysis worker computes it.
 */
import { questionSamples, type QuestionSamples } from '../rl/question-samples.ts';
import type { SampleRecord } from '../run/types.ts';
import { sqlDiff, type DiffPart } from './sql-diff.ts';
import type { TrainerRewards } from './model.ts';

export interface QuestionStep {
  step: number;
  runId: string;
  /** The question's samples at this step (empty when the step has none of it). */
  view: QuestionSamples;
  /** SQL of group A's first sample; null when no sample voted (no result, no SQL). */
  majoritySql: string | null;
  /** The majority SQL's difference from the previous step that had one; null at the first such step. */
  diff: DiffPart[] | null;
  /** The trainer's own score of each sample of `view.samples` (same order); null where the dump gave none. */
  trainerScores: Array<number | null>;
  /** The trainer's reward columns of each sample of `view.samples` (same order; null where none); absent when the step has none. */
  trainerRewards?: Array<TrainerRewards | null>;
}

function majoritySqlOf(view: QuestionSamples): string | null {
  const a = view.groups[0];
  if (!a) return null;
  return view.samples.find((s) => s.sample === a.samples[0])?.sql ?? null;
}

export function questionAcrossSteps(
  steps: ReadonlyArray<{
    step: number;
    runId: string;
    samples: readonly SampleRecord[];
    /** Parallel to `samples`; absent: none. */
    trainerScores?: ReadonlyArray<number | null>;
    /** Parallel to `samples`; absent: none. */
    trainerRewards?: ReadonlyArray<TrainerRewards | null>;
  }>,
): QuestionStep[] {
  let previous: string | null = null;
  return steps.map((s) => {
    const view = questionSamples(s.samples);
    const majoritySql = majoritySqlOf(view);
    const diff = majoritySql !== null && previous !== null ? sqlDiff(previous, majoritySql) : null;
    if (majoritySql !== null) previous = majoritySql;
    // `view.samples` is in sample order; the scores follow the samples they were given with.
    const scoreOf = new Map(s.samples.map((x, k) => [x.sample, s.trainerScores?.[k] ?? null]));
    const trainerScores = view.samples.map((x) => scoreOf.get(x.sample) ?? null);
    if (!s.trainerRewards) return { step: s.step, runId: s.runId, view, majoritySql, diff, trainerScores };
    const rewardsOf = new Map(s.samples.map((x, k) => [x.sample, s.trainerRewards?.[k] ?? null]));
    const trainerRewards = view.samples.map((x) => rewardsOf.get(x.sample) ?? null);
    return { step: s.step, runId: s.runId, view, majoritySql, diff, trainerScores, trainerRewards };
  });
}
