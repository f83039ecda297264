import type { ItemResult } from '../types.ts';
import type { BucketScores, Summary } from './summary.ts';

/** The `--out` JSON of the CLI: snake_case keys, percentages unrounded, `ex` 0 or 1. */
interface JsonBucket {
  /** Questions; `samples` counts their samples (equal with one sample per question). */
  count: number;
  samples: number;
  ex: number | null;
  soft_f1: number | null;
  r_ves: number | null;
  /** With r-ves: correct items that could not be timed, left out of r_ves. */
  r_ves_not_timed?: number;
  /**
   * With r-ves: correct items timed, those timed within 2 % of a reward step, and the standard
   * deviation of r_ves between runs those make (points; src/core/compare/r-ves.ts, NEAR_STEP).
   */
  r_ves_timed?: number;
  r_ves_near_step?: number;
  r_ves_sd?: number;
  /** Present with metric ts. */
  ts?: number | null;
  ex_only?: number;
  gold_order_dependent?: number;
  passes_by_row_order?: number;
  errors: number;
  timeouts: number;
  mutated_db: number;
}

function bucketJson(b: BucketScores): JsonBucket {
  return {
    count: b.count,
    samples: b.samples,
    ex: b.ex,
    soft_f1: b.softF1,
    r_ves: b.rves,
    ...(b.rvesNotTimed !== undefined ? { r_ves_not_timed: b.rvesNotTimed } : {}),
    ...(b.rvesSd !== undefined
      ? { r_ves_timed: b.rvesTimed ?? 0, r_ves_near_step: b.rvesNearStep ?? 0, r_ves_sd: b.rvesSd }
      : {}),
    ...(b.ts !== undefined
      ? {
          ts: b.ts,
          ex_only: b.exOnly ?? 0,
          gold_order_dependent: b.goldOrderDependent ?? 0,
          passes_by_row_order: b.passesByRowOrder ?? 0,
        }
      : {}),
    errors: b.errors,
    timeouts: b.timeouts,
    mutated_db: b.mutated,
  };
}

export function summaryJson(s: Summary, extra: Record<string, unknown>) {
  return {
    metrics: s.metrics,
    count: s.byDifficulty.total.count,
    samples: s.byDifficulty.total.samples,
    samples_per_question: { min: s.samplesPerQuestion.min, max: s.samplesPerQuestion.max },
    by_difficulty: Object.fromEntries(Object.entries(s.byDifficulty).map(([k, b]) => [k, bucketJson(b!)])),
    by_db: Object.fromEntries(Object.entries(s.byDb).map(([k, b]) => [k, bucketJson(b)])),
    missing_dbs: s.missingDbs,
    status_counts: s.statusCounts,
    ...extra,
  };
}

export function itemJson(r: ItemResult) {
  const unscored = r.status === 'missing-db';
  return {
    index: r.index,
    sample: r.sample ?? 0,
    question_id: r.questionId,
    db_id: r.dbId,
    difficulty: r.difficulty,
    // A sample never scored (database missing) has null scores, as in every export (status says why).
    ex: unscored ? null : r.ex,
    soft_f1: unscored ? null : r.softF1,
    r_ves: unscored ? null : r.rves,
    time_ratio: unscored ? null : r.timeRatio,
    ...(r.rvesNotTimed !== undefined ? { r_ves_not_timed: r.rvesNotTimed } : {}),
    status: r.status,
    error: r.error,
    mutated_db: r.mutatedDb,
    extraction: r.extraction.rule,
    think_stripped: r.extraction.thinkStripped,
    pred_rows: r.predRowCount,
    gold_rows: r.goldRowCount,
    elapsed_ms: r.elapsedMs === null ? null : Math.round(r.elapsedMs * 1000) / 1000,
    // Signature of the predicted result for self-consistency votes; null when the prediction did not execute.
    result_key: r.resultKey ?? null,
    // SQL whose result differs between SQLite versions, and what is wrong with the gold (empty when none).
    version_features: r.versionFeatures ?? [],
    // The item re-run on the older SQLite engine (flagged items only): its verdict there, and whether it differs.
    ...(r.versionCheck
      ? {
          version_check: {
            sqlite_version: r.versionCheck.sqliteVersion,
            ex: r.versionCheck.ex,
            soft_f1: r.versionCheck.softF1,
            status: r.versionCheck.status,
            error: r.versionCheck.error,
            differs: r.versionCheck.differs,
            planner: r.versionCheck.planner === true,
          },
        }
      : {}),
    gold_issues: r.goldIssues ?? [],
    // Metric ts (docs/test-suite.md): absent without it.
    ...(r.ts !== undefined || r.goldOrderDependent !== undefined
      ? {
          ts: unscored ? null : (r.ts ?? null),
          ts_counterexample: r.tsCounterexample ?? null,
          gold_order_dependent: r.goldOrderDependent ?? null,
          passes_by_row_order: r.passesByRowOrder ?? null,
        }
      : {}),
  };
}
