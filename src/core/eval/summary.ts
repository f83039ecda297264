import { DIFFICULTIES, type Difficulty, type ItemResult } from '../types.ts';
import type { MetricName } from './executor.ts';

/** Scores of one bucket as percentages (unrounded), or null where the bucket is empty or the metric was not run. */
export interface BucketScores {
  count: number;
  ex: number | null;
  softF1: number | null;
  rves: number | null;
  errors: number;
  timeouts: number;
  mutated: number;
}

export type BucketName = Difficulty | 'total';

export interface Summary {
  metrics: MetricName[];
  /** simple / moderate / challenging / total, as the official printout; `unknown` when present. */
  byDifficulty: Partial<Record<BucketName, BucketScores>> & { total: BucketScores };
  byDb: Record<string, BucketScores>;
  /** Items left out because their database is missing, by database. */
  missingDbs: Record<string, number>;
  statusCounts: Record<ItemResult['status'], number>;
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
    ex: metrics.includes('ex') ? mean((r) => r.ex) : null,
    softF1: metrics.includes('soft-f1') ? mean((r) => r.softF1 ?? 0) : null,
    // R-VES: mean of sqrt(reward) x 100 (official `compute_ves`).
    rves: metrics.includes('r-ves') ? mean((r) => Math.sqrt(r.rves ?? 0)) : null,
    errors: items.filter((r) => r.status === 'error').length,
    timeouts: items.filter((r) => r.status === 'timeout').length,
    mutated: items.filter((r) => r.mutatedDb).length,
  };
}

export function summarize(results: readonly ItemResult[], metrics: readonly MetricName[]): Summary {
  const scored = results.filter((r) => r.status !== 'missing-db');
  const byDifficulty: Summary['byDifficulty'] = { total: bucket(scored, metrics) };
  for (const d of [...DIFFICULTIES, 'unknown'] as const) {
    const items = scored.filter((r) => r.difficulty === d);
    if (d !== 'unknown' || items.length > 0) byDifficulty[d] = bucket(items, metrics);
  }
  const dbIds = [...new Set(scored.map((r) => r.dbId))].sort();
  const byDb: Record<string, BucketScores> = {};
  for (const db of dbIds) byDb[db] = bucket(scored.filter((r) => r.dbId === db), metrics);
  const missingDbs: Record<string, number> = {};
  for (const r of results) if (r.status === 'missing-db') missingDbs[r.dbId] = (missingDbs[r.dbId] ?? 0) + 1;
  const statusCounts = { ok: 0, error: 0, timeout: 0, 'missing-db': 0 };
  for (const r of results) statusCounts[r.status] += 1;
  return { metrics: [...metrics], byDifficulty, byDb, missingDbs, statusCounts };
}
