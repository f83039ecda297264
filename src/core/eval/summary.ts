import { ALL_DIFFICULTIES, DIFFICULTIES, type Difficulty, type ItemResult } from '../types.ts';
import type { MetricName } from './executor.ts';
import { NEAR_STEP, stepFlip } from '../compare/r-ves.ts';

/** Scores of one bucket as percentages (unrounded), or null where the bucket is empty or the metric was not run. */
export interface BucketScores {
  /** Questions in the bucket (with one sample per question: items). */
  count: number;
  /** Samples in the bucket (equal to `count` with one sample per question). */
  samples: number;
  ex: number | null;
  softF1: number | null;
  rves: number | null;
  /**
   * R-VES: correct samples whose timing could not be measured (src/core/compare/r-ves.ts); they
   * are left out of R-VES's denominator (R-VES is over the others), never counted as reward 0.
   */
  rvesNotTimed?: number;
  /**
   * R-VES: correct samples that were timed, those of them timed within NEAR_STEP (2 %) of a reward
   * step (they land on either side of it from one run to the next), and the standard deviation of
   * R-VES between runs that those coin flips make, in points (src/core/compare/r-ves.ts, `NEAR_STEP`).
   */
  rvesTimed?: number;
  rvesNearStep?: number;
  rvesSd?: number;
  /**
   * Metric ts (docs/test-suite.md): test-suite accuracy in percent, over the same items as EX
   * (an item not scored counts 0, as an error does for EX), so TS <= EX; absent without ts.
   */
  ts?: number | null;
  /** With ts: samples EX accepts and TS rejects (EX-only passes). */
  exOnly?: number;
  /** With ts: samples whose gold's rows change with unordered selects reversed, and samples EX accepts only in the usual order. */
  goldOrderDependent?: number;
  passesByRowOrder?: number;
  errors: number;
  timeouts: number;
  mutated: number;
}

export type BucketName = Difficulty | 'total';

export interface Summary {
  metrics: MetricName[];
  /** simple / moderate / challenging / total, as the official printout; Spider's levels and `unknown` when present. */
  byDifficulty: Partial<Record<BucketName, BucketScores>> & { total: BucketScores };
  byDb: Record<string, BucketScores>;
  /** Items (samples) left out because their database is missing, by database. */
  missingDbs: Record<string, number>;
  /** The same, in questions (as `count` of a bucket): one unit per column. */
  missingDbQuestions: Record<string, number>;
  /** Samples per scored question (database present): smallest, largest, and the number of questions. */
  samplesPerQuestion: SamplesPerQuestion;
  /** Counts samples, as the official printout counts items. */
  statusCounts: Record<ItemResult['status'], number>;
}

export interface SamplesPerQuestion {
  min: number;
  max: number;
  questions: number;
}

/**
 * Mean score x 100 in the official order of operations (`sum(results) / len(results) * 100`),
 * so the printed 2-decimal figures are the official ones. Items whose database is missing
 * are left out; errors and timeouts stay in the denominator with score 0.
 */
function bucket(items: readonly ItemResult[], metrics: readonly MetricName[]): BucketScores {
  const n = items.length;
  const mean = (f: (r: ItemResult) => number) => (n === 0 ? null : (items.reduce((a, r) => a + f(r), 0) / n) * 100);
  return {
    count: n,
    samples: n,
    ex: metrics.includes('ex') ? mean((r) => r.ex) : null,
    softF1: metrics.includes('soft-f1') ? mean((r) => r.softF1 ?? 0) : null,
    // R-VES: mean of sqrt(reward) x 100 (official `compute_ves`), over the items that were timed.
    ...(metrics.includes('r-ves') ? rvesOf(items.map((r) => [r])) : { rves: null }),
    ...(metrics.includes('ts') ? { ts: mean((r) => r.ts ?? 0), ...tsCounts(items) } : {}),
    ...failures(items),
  };
}

/**
 * R-VES over questions (one sample each, or several averaged first), leaving out the samples that
 * could not be timed; a question none of whose samples was timed is left out, in the official
 * order of operations otherwise (sum / count x 100). With it, how far a rerun moves it: each
 * timed sample near a reward step is a fair coin between the step's two rewards (variance
 * flip^2 / 4), weighed as the sample weighs in the mean.
 */
function rvesOf(
  questions: readonly (readonly ItemResult[])[],
): Pick<BucketScores, 'rves' | 'rvesNotTimed' | 'rvesTimed' | 'rvesNearStep' | 'rvesSd'> {
  let sum = 0;
  let counted = 0;
  let notTimed = 0;
  let timedCorrect = 0;
  let nearStep = 0;
  let variance = 0;
  for (const rs of questions) {
    const timed = rs.filter((r) => r.rvesNotTimed === undefined);
    notTimed += rs.length - timed.length;
    if (timed.length === 0) continue;
    sum +=
      rs.length === 1
        ? Math.sqrt(timed[0]!.rves ?? 0)
        : timed.reduce((a, r) => a + Math.sqrt(r.rves ?? 0), 0) / timed.length;
    counted++;
    for (const r of timed) {
      if (r.ex !== 1 || r.rves === null) continue;
      timedCorrect++;
      const flip = stepFlip(r.timeRatio);
      if (flip === 0) continue;
      nearStep++;
      variance += (flip * flip) / 4 / (timed.length * timed.length);
    }
  }
  return {
    rves: counted === 0 ? null : (sum / counted) * 100,
    rvesNotTimed: notTimed,
    rvesTimed: timedCorrect,
    rvesNearStep: nearStep,
    rvesSd: counted === 0 ? 0 : (Math.sqrt(variance) / counted) * 100,
  };
}

/** `NEAR_STEP` as the percentage the reports write ("within 2 % of a reward step"). */
export const NEAR_STEP_PERCENT = Math.round(NEAR_STEP * 100);

function tsCounts(
  items: readonly ItemResult[],
): Pick<BucketScores, 'exOnly' | 'goldOrderDependent' | 'passesByRowOrder'> {
  let exOnly = 0;
  let goldOrderDependent = 0;
  let passesByRowOrder = 0;
  for (const r of items) {
    if (r.ex === 1 && r.ts === 0) exOnly++;
    if (r.goldOrderDependent) goldOrderDependent++;
    if (r.passesByRowOrder) passesByRowOrder++;
  }
  return { exOnly, goldOrderDependent, passesByRowOrder };
}

function failures(items: readonly ItemResult[]): Pick<BucketScores, 'errors' | 'timeouts' | 'mutated'> {
  let errors = 0;
  let timeouts = 0;
  let mutated = 0;
  for (const r of items) {
    if (r.status === 'error') errors++;
    else if (r.status === 'timeout') timeouts++;
    if (r.mutatedDb) mutated++;
  }
  return { errors, timeouts, mutated };
}

/**
 * A bucket of questions with several samples: each question first averages its samples (mean
 * EX, Soft-F1, sqrt(R-VES)), then the bucket averages over questions, so every question weighs
 * the same whatever its n. Errors, timeouts and writes count samples.
 */
function questionBucket(questions: readonly ItemResult[][], metrics: readonly MetricName[]): BucketScores {
  const q = questions.length;
  const mean = (f: (r: ItemResult) => number) =>
    q === 0 ? null : (questions.reduce((a, rs) => a + rs.reduce((b, r) => b + f(r), 0) / rs.length, 0) / q) * 100;
  const all = questions.flat();
  return {
    count: q,
    samples: all.length,
    ex: metrics.includes('ex') ? mean((r) => r.ex) : null,
    softF1: metrics.includes('soft-f1') ? mean((r) => r.softF1 ?? 0) : null,
    ...(metrics.includes('r-ves') ? rvesOf(questions) : { rves: null }),
    ...(metrics.includes('ts') ? { ts: mean((r) => r.ts ?? 0), ...tsCounts(all) } : {}),
    ...failures(all),
  };
}

/** Samples per question among the scored items (database present): smallest and largest. */
export function samplesPerQuestion(results: readonly ItemResult[]): SamplesPerQuestion {
  const per = new Map<number, number>();
  for (const r of results) if (r.status !== 'missing-db') per.set(r.index, (per.get(r.index) ?? 0) + 1);
  let min = Infinity;
  let max = 0;
  for (const c of per.values()) {
    if (c < min) min = c;
    if (c > max) max = c;
  }
  return { min: per.size ? min : 0, max, questions: per.size };
}

/** Scored results grouped by question (gold index), in order of first appearance. */
function byQuestion(scored: readonly ItemResult[]): ItemResult[][] {
  const byIndex = new Map<number, ItemResult[]>();
  for (const r of scored) {
    const list = byIndex.get(r.index);
    if (list) list.push(r);
    else byIndex.set(r.index, [r]);
  }
  return [...byIndex.values()];
}

/**
 * `summarize(results, metrics).byDifficulty.total` alone, by the same rule (a series computes it
 * for each of 40 steps of 12,272 samples; the buckets by difficulty and database it does not need).
 */
export function summaryTotal(results: readonly ItemResult[], metrics: readonly MetricName[]): BucketScores {
  const scored = results.filter((r) => r.status !== 'missing-db');
  return samplesPerQuestion(scored).max <= 1 ? bucket(scored, metrics) : questionBucket(byQuestion(scored), metrics);
}

/**
 * The one summary of a run, in the CLI, the dashboard, exports and the RL view. With one sample
 * per question it is the official evaluator's, item by item; with several, each question first
 * averages its samples and buckets average over questions (mean EX = expected single-sample EX),
 * `count` being questions and `samples` samples.
 */
export function summarize(results: readonly ItemResult[], metrics: readonly MetricName[]): Summary {
  const scored = results.filter((r) => r.status !== 'missing-db');
  const spq = samplesPerQuestion(scored);
  const dbIds = [...new Set(scored.map((r) => r.dbId))].sort();
  const byDifficulty = {} as Summary['byDifficulty'];
  const byDb: Record<string, BucketScores> = {};
  if (spq.max <= 1) {
    byDifficulty.total = bucket(scored, metrics);
    for (const d of ALL_DIFFICULTIES) {
      const items = scored.filter((r) => r.difficulty === d);
      if (DIFFICULTIES.includes(d) || items.length > 0) byDifficulty[d] = bucket(items, metrics);
    }
    for (const db of dbIds)
      byDb[db] = bucket(
        scored.filter((r) => r.dbId === db),
        metrics,
      );
  } else {
    const questions = byQuestion(scored);
    byDifficulty.total = questionBucket(questions, metrics);
    for (const d of ALL_DIFFICULTIES) {
      const qs = questions.filter((rs) => rs[0]!.difficulty === d);
      if (DIFFICULTIES.includes(d) || qs.length > 0) byDifficulty[d] = questionBucket(qs, metrics);
    }
    for (const db of dbIds)
      byDb[db] = questionBucket(
        questions.filter((rs) => rs[0]!.dbId === db),
        metrics,
      );
  }
  const missingDbs: Record<string, number> = {};
  for (const r of results) if (r.status === 'missing-db') missingDbs[r.dbId] = (missingDbs[r.dbId] ?? 0) + 1;
  const missingIndices = new Map<string, Set<number>>();
  for (const r of results)
    if (r.status === 'missing-db')
      (missingIndices.get(r.dbId) ?? missingIndices.set(r.dbId, new Set()).get(r.dbId)!).add(r.index);
  const missingDbQuestions = Object.fromEntries([...missingIndices].map(([db, set]) => [db, set.size]));
  const statusCounts = { ok: 0, error: 0, timeout: 0, 'missing-db': 0 };
  for (const r of results) statusCounts[r.status] += 1;
  return {
    metrics: [...metrics],
    byDifficulty,
    byDb,
    missingDbs,
    missingDbQuestions,
    samplesPerQuestion: spq,
    statusCounts,
  };
}
