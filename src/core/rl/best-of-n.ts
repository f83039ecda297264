/**
 * Best-of-n: a scorer ranks the n samples of a question and the question scores the EX of the
 * top one (ties: the lowest sample number). The oracle ranks by EX itself, an upper bound
 * (equal to pass@n); mean token logprob and rubric score are what a real reranker could use.
 */
import type { SampleRecord } from '../run/types.ts';
import { aggregationDef, aggregationScore, type AggregationId } from '../rubric/aggregations.ts';

/** Rubric aggregations (aggregations.ts) a reranker can use beside the rubric score. */
function rubricScorerIds(): AggregationId[] {
  return ['veto', 'minimum', 'all-must-pass', 'rule-x-judge', 'group-rank'];
}

export interface Scorer {
  id: string;
  label: string;
  /** A score to maximise, or null when this sample has none. */
  score(s: SampleRecord): number | null;
}

export const SCORERS: readonly Scorer[] = [
  { id: 'oracle', label: 'oracle (EX, upper bound)', score: (s) => s.ex },
  { id: 'mean_logprob', label: 'mean token logprob', score: (s) => s.meanLogprob ?? null },
  { id: 'rubric', label: 'rubric score', score: (s) => s.rubricScore ?? null },
];

/**
 * Rerankers from the rubric aggregations stored with the samples (aggregations.ts): used only
 * for runs whose samples carry them (`scorersFor`), so other runs' statistics keep their keys.
 */
const RUBRIC_AGGREGATION_SCORERS: readonly Scorer[] = rubricScorerIds().map((id) => ({
  id: `rubric_${id.replaceAll('-', '_')}`,
  label: `rubric ${aggregationDef(id).label}`,
  score: (s: SampleRecord) => aggregationScore(s.rubric?.aggregations, id),
}));

export const ALL_SCORERS: readonly Scorer[] = [...SCORERS, ...RUBRIC_AGGREGATION_SCORERS];

/** SCORERS, plus the rubric aggregation scorers when some sample carries stored aggregations. */
export function scorersFor(samples: readonly SampleRecord[]): readonly Scorer[] {
  return samples.some((s) => s.rubric?.aggregations !== undefined) ? ALL_SCORERS : SCORERS;
}

/** The chosen sample of one question, or null when a sample lacks a score. */
export function bestOf(samples: readonly SampleRecord[], scorer: Scorer): SampleRecord | null {
  let best: SampleRecord | null = null;
  let bestScore = -Infinity;
  for (const s of [...samples].sort((a, b) => a.sample - b.sample)) {
    const v = scorer.score(s);
    if (v === null || Number.isNaN(v)) return null;
    if (best === null || v > bestScore) {
      best = s;
      bestScore = v;
    }
  }
  return best;
}

/**
 * Best-of-n accuracy in [0, 1] over questions, or null when some sample has no score (the
 * scorer is not available for this run: e.g. the engine reported no logprobs).
 */
export function bestOfNAccuracy(groups: readonly (readonly SampleRecord[])[], scorer: Scorer): number | null {
  if (groups.length === 0) return null;
  let sum = 0;
  for (const samples of groups) {
    const chosen = bestOf(samples, scorer);
    if (chosen === null) return null;
    sum += chosen.ex;
  }
  return sum / groups.length;
}
