/**
 * Rubric aggregation. Explicit (RaR): r = Σ w·c / D over per-criterion verdicts c ∈ {0, 1},
 * with D = Σ of positive weights (HealthBench, and RaR's Σ w when no weight is negative) or
 * D = Σ |w|, optionally clipped to [0, 1]. Implicit and direct Likert: one judge score s in
 * 1..10 mapped to (s − 1) / 9.
 */
import type { RubricItem } from './model.ts';
import {
  DEFAULT_EXPLICIT_OPTIONS,
  type CriterionVerdict,
  type ExplicitOptions,
  type ExplicitScore,
  type RubricScores,
  type ScaleJudgement,
} from './scores.ts';
import { WorkbenchError } from '../errors.ts';

export function aggregateExplicit(
  items: readonly Pick<RubricItem, 'id' | 'weight'>[],
  verdicts: readonly CriterionVerdict[],
  options: ExplicitOptions = DEFAULT_EXPLICIT_OPTIONS,
): ExplicitScore {
  const byId = new Map(verdicts.map((v) => [v.id, v]));
  let numerator = 0;
  let denominator = 0;
  const unresolved: string[] = [];
  const notApplicable: string[] = [];
  for (const item of items) {
    const v = byId.get(item.id);
    if (v?.status === 'not-applicable') {
      notApplicable.push(item.id);
      continue;
    }
    if (!v || v.met === null) {
      unresolved.push(item.id);
      if (options.unresolved === 'skip') continue;
    }
    if (options.normalization === 'absolute') denominator += Math.abs(item.weight);
    else if (item.weight > 0) denominator += item.weight;
    if (v?.met === true) numerator += item.weight;
  }
  const base = { numerator, denominator, unresolved, notApplicable, options: { ...options } };
  if (unresolved.length > 0 && options.unresolved === 'null')
    return { ...base, score: null, unclipped: null, status: 'incomplete' };
  if (denominator <= 0) return { ...base, score: null, unclipped: null, status: 'no-positive-weight' };
  const unclipped = numerator / denominator;
  return { ...base, score: options.clip ? clip01(unclipped) : unclipped, unclipped, status: 'ok' };
}

function clip01(x: number): number {
  return Math.min(1, Math.max(0, x));
}

/** A 1..10 score to [0, 1]: (s − 1) / 9. Throws on anything else (parsing guarantees 1..10). */
export function scaleToUnit(s: number): number {
  if (!Number.isInteger(s) || s < 1 || s > 10)
    throw new WorkbenchError('BAD_FORMAT', `a judge score must be an integer in 1..10, got ${s}`);
  return (s - 1) / 9;
}

/**
 * Re-aggregation without any judge call: the stored verdicts with other weights or options.
 * `weights` maps item ids to weights (e.g. from `applyWeighting`).
 */
export function reaggregate(
  scores: RubricScores,
  items: readonly Pick<RubricItem, 'id' | 'weight'>[],
  options: ExplicitOptions,
): RubricScores {
  return {
    ...scores,
    weights: Object.fromEntries(items.map((i) => [i.id, i.weight])),
    explicit: aggregateExplicit(items, scores.criteria, options),
  };
}

interface ScoreStats {
  /** Samples with a score. */
  n: number;
  /** Samples without one (incomplete, unparseable, error, skipped). */
  missing: number;
  mean: number | null;
}

function stats(values: Array<number | null>): ScoreStats {
  const ok = values.filter((v): v is number => v !== null);
  return {
    n: ok.length,
    missing: values.length - ok.length,
    mean: ok.length ? ok.reduce((a, b) => a + b, 0) / ok.length : null,
  };
}

export interface RubricSummary {
  count: number;
  explicit: ScoreStats;
  implicit: ScoreStats;
  likert: ScoreStats;
  /** Criteria verdicts by status over all samples. */
  verdicts: Record<CriterionVerdict['status'], number>;
  implicitStatus: Record<ScaleJudgement['status'], number>;
  likertStatus: Record<ScaleJudgement['status'], number>;
  promptInjection: number;
}

/** Run-level means; samples without a score are counted apart, never as 0. */
export function summarizeRubricScores(all: readonly RubricScores[]): RubricSummary {
  const verdicts = { ok: 0, unparseable: 0, error: 0, skipped: 0, 'not-applicable': 0 };
  const implicitStatus = { ok: 0, unparseable: 0, error: 0, skipped: 0 };
  const likertStatus = { ok: 0, unparseable: 0, error: 0, skipped: 0 };
  for (const s of all) {
    for (const v of s.criteria) verdicts[v.status] += 1;
    if (s.implicit) implicitStatus[s.implicit.status] += 1;
    if (s.likert) likertStatus[s.likert.status] += 1;
  }
  return {
    count: all.length,
    explicit: stats(all.filter((s) => s.explicit).map((s) => s.explicit!.score)),
    implicit: stats(all.filter((s) => s.implicit).map((s) => s.implicit!.score)),
    likert: stats(all.filter((s) => s.likert).map((s) => s.likert!.score)),
    verdicts,
    implicitStatus,
    likertStatus,
    promptInjection: all.filter((s) => s.promptInjection.flagged).length,
  };
}
