/**
 * The eval summary when questions have several samples. With one sample per question the
 * official `summarize` applies unchanged; with more, each question first averages its samples
 * (mean EX, Soft-F1, sqrt(R-VES)), then buckets average over questions, so every question
 * weighs the same whatever its n. `count` stays the number of questions; errors, timeouts and
 * writes count samples.
 */
import type { MetricName } from '../eval/executor.ts';
import { summarize, type BucketScores, type Summary } from '../eval/summary.ts';
import { DIFFICULTIES, type ItemResult } from '../types.ts';
import { maxOf, minOf } from './numbers.ts';

/** Samples per question among the scored items (database present): smallest and largest. */
export function samplesPerQuestion(results: readonly ItemResult[]): { min: number; max: number; questions: number } {
  const per = new Map<number, number>();
  for (const r of results) if (r.status !== 'missing-db') per.set(r.index, (per.get(r.index) ?? 0) + 1);
  const counts = [...per.values()];
  return { min: minOf(counts), max: maxOf(counts), questions: counts.length };
}

function bucket(questions: readonly ItemResult[][], metrics: readonly MetricName[]): BucketScores {
  const q = questions.length;
  const mean = (f: (r: ItemResult) => number) =>
    q === 0 ? null : (questions.reduce((a, rs) => a + rs.reduce((b, r) => b + f(r), 0) / rs.length, 0) / q) * 100;
  const all = questions.flat();
  return {
    count: q,
    ex: metrics.includes('ex') ? mean((r) => r.ex) : null,
    softF1: metrics.includes('soft-f1') ? mean((r) => r.softF1 ?? 0) : null,
    rves: metrics.includes('r-ves') ? mean((r) => Math.sqrt(r.rves ?? 0)) : null,
    errors: all.filter((r) => r.status === 'error').length,
    timeouts: all.filter((r) => r.status === 'timeout').length,
    mutated: all.filter((r) => r.mutatedDb).length,
  };
}

/** `summarize` for one sample per question, else the per-question mean over samples. */
export function summarizeSamples(results: readonly ItemResult[], metrics: readonly MetricName[]): Summary {
  const official = summarize(results, metrics);
  if (samplesPerQuestion(results).max <= 1) return official;
  const byIndex = new Map<number, ItemResult[]>();
  for (const r of results) {
    if (r.status === 'missing-db') continue;
    const list = byIndex.get(r.index);
    if (list) list.push(r);
    else byIndex.set(r.index, [r]);
  }
  const questions = [...byIndex.values()];
  const byDifficulty: Summary['byDifficulty'] = { total: bucket(questions, metrics) };
  for (const d of [...DIFFICULTIES, 'unknown'] as const) {
    const qs = questions.filter((rs) => rs[0]!.difficulty === d);
    if (d !== 'unknown' || qs.length > 0) byDifficulty[d] = bucket(qs, metrics);
  }
  const byDb: Record<string, BucketScores> = {};
  for (const db of Object.keys(official.byDb)) byDb[db] = bucket(questions.filter((rs) => rs[0]!.dbId === db), metrics);
  // missingDbs and statusCounts count samples, as in the official summary.
  return { ...official, byDifficulty, byDb };
}
