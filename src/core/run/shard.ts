/**
 * Sharded evaluation for batch schedulers (Slurm array jobs, Kubernetes indexed Jobs): `eval
 * --shard K/N` evaluates a deterministic share of the items, grouped by database so that each
 * shard opens few databases, and `merge` joins the shards' outputs into the report and run file
 * of a single-process run. Shards are chosen from the paired items alone, so every shard of the
 * same inputs agrees on the split without talking to the others.
 */
import { WorkbenchError } from '../errors.ts';
import { summarize } from '../eval/summary.ts';
import type { MetricName } from '../eval/executor.ts';
import type { Difficulty, EvalItem, ItemResult, ItemStatus } from '../types.ts';
import { toRunFile } from './export.ts';
import type { RunFile, RunQuestion } from './types.ts';

export interface Shard {
  /** 1-based shard number. */
  k: number;
  n: number;
}

/** `K/N` with 1 <= K <= N; named in the error with the flag. */
export function parseShard(text: string, flag = '--shard'): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const k = m ? Number(m[1]) : NaN;
  const n = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(k) || !Number.isSafeInteger(n) || n < 1 || k < 1 || k > n) {
    throw new WorkbenchError('BAD_OPTION', `expected K/N with 1 <= K <= N (e.g. 2/8 for the second of eight shards), got ${JSON.stringify(text)}`, flag);
  }
  return { k, n };
}

/**
 * The databases of each shard: largest first (by items), each to the shard with the fewest items
 * so far (the lowest number on a tie), so shards are balanced and every database is in one shard.
 */
export function shardDatabases(items: readonly EvalItem[], n: number): string[][] {
  const count = new Map<string, number>();
  for (const it of items) count.set(it.dbId, (count.get(it.dbId) ?? 0) + 1);
  const dbs = [...count].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const load = new Array<number>(n).fill(0);
  const out: string[][] = Array.from({ length: n }, () => []);
  for (const [db, c] of dbs) {
    let best = 0;
    for (let s = 1; s < n; s++) if (load[s]! < load[best]!) best = s;
    out[best]!.push(db);
    load[best]! += c;
  }
  return out;
}

/** The items of shard K of N, in their original order. */
export function shardItems(items: readonly EvalItem[], shard: Shard): EvalItem[] {
  const mine = new Set(shardDatabases(items, shard.n)[shard.k - 1]);
  return items.filter((it) => mine.has(it.dbId));
}

/** An `--out` report: the summary and its items (src/core/eval/json-report.ts). */
export interface JsonReport {
  summary: Record<string, unknown> & { metrics: MetricName[] };
  items: Array<Record<string, unknown>>;
}

/** The fields of a report item that the summary reads back. */
function resultOf(j: Record<string, unknown>): ItemResult {
  return {
    index: j.index as number,
    sample: j.sample as number,
    questionId: j.question_id as number,
    dbId: j.db_id as string,
    difficulty: j.difficulty as Difficulty,
    ex: (j.ex ?? 0) as 0 | 1,
    softF1: j.soft_f1 as number | null,
    rves: j.r_ves as number | null,
    timeRatio: j.time_ratio as number | null,
    ...(typeof j.r_ves_not_timed === 'string' ? { rvesNotTimed: j.r_ves_not_timed } : {}),
    status: j.status as ItemStatus,
    error: j.error as string | null,
    mutatedDb: j.mutated_db as boolean,
    extraction: { rule: j.extraction as ItemResult['extraction']['rule'], thinkStripped: j.think_stripped as boolean },
    predRowCount: j.pred_rows as number | null,
    goldRowCount: j.gold_rows as number | null,
    elapsedMs: j.elapsed_ms as number | null,
  };
}

const byItemOrder = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  (a.index as number) - (b.index as number) || (a.sample as number) - (b.sample as number);

/** The shard number and total of a shard's report, checked against the others. */
function shardOf(r: JsonReport, file: string): Shard {
  const s = r.summary.shard as { k?: unknown; n?: unknown } | undefined;
  if (!s || typeof s.k !== 'number' || typeof s.n !== 'number') {
    throw new WorkbenchError('BAD_FORMAT', 'is not the --out of an `eval --shard K/N` run (its summary has no shard)', file);
  }
  return { k: s.k, n: s.n };
}

function checkComplete(shards: Shard[], files: string[]): void {
  const n = shards[0]!.n;
  const seen = new Map<number, string>();
  shards.forEach((s, i) => {
    if (s.n !== n) throw new WorkbenchError('MISMATCH', `is shard ${s.k}/${s.n}, but ${files[0]} is of ${n} shards`, files[i]);
    const other = seen.get(s.k);
    if (other) throw new WorkbenchError('MISMATCH', `is shard ${s.k}/${n} again (also ${other})`, files[i]);
    seen.set(s.k, files[i]!);
  });
  const missing = Array.from({ length: n }, (_, i) => i + 1).filter((k) => !seen.has(k));
  if (missing.length > 0) {
    throw new WorkbenchError('MISMATCH', `shard${missing.length > 1 ? 's' : ''} ${missing.map((k) => `${k}/${n}`).join(', ')} missing: give every shard's output`, 'merge');
  }
}

/**
 * Joins shard reports into the report of one run: items in (index, sample) order, the summary
 * computed again over all of them, the rest of the summary (inputs, warnings, findings) from the
 * first shard, executions added up. `summaryJson` makes the summary exactly as `eval` does.
 */
export function mergeReports(
  reports: readonly JsonReport[],
  files: readonly string[],
  summaryJson: (s: ReturnType<typeof summarize>, extra: Record<string, unknown>) => Record<string, unknown>,
): JsonReport {
  if (reports.length === 0) throw new WorkbenchError('BAD_OPTION', 'name the --out files of the shards to merge', 'merge');
  const shards = reports.map((r, i) => shardOf(r, files[i]!));
  checkComplete(shards, [...files]);
  const ordered = reports.map((r, i) => ({ r, s: shards[i]! })).sort((a, b) => a.s.k - b.s.k).map((x) => x.r);
  const items = ordered.flatMap((r) => r.items).sort(byItemOrder);
  const first = ordered[0]!.summary;
  const summary = summarize(items.map(resultOf), first.metrics);
  const keep = ['warnings', 'pairing_findings', 'inputs', 'engine', 'executor', 'sqlite_version', 'reward_formula'];
  const extra: Record<string, unknown> = {};
  for (const k of keep) {
    if (k in first) extra[k] = first[k];
    // A shard of missing databases read no SQLite version: take the first shard that did.
    if (k === 'sqlite_version' && k in first) extra[k] = ordered.map((r) => r.summary[k]).find((v) => v !== null) ?? null;
    // The version and gold-check counts (issue 13) are recomputed over every shard's items, in eval's key order.
    if (k === 'sqlite_version' && 'version_sensitive' in first) Object.assign(extra, rewardCountsJson(items));
  }
  const executions = { items: 0, executed: 0, reused: 0, gold_executed: 0 };
  for (const r of ordered) {
    const e = r.summary.executions as typeof executions | undefined;
    if (e) for (const k of Object.keys(executions) as (keyof typeof executions)[]) executions[k] += e[k] ?? 0;
  }
  extra.executions = executions;
  return { summary: summaryJson(summary, extra) as JsonReport['summary'], items };
}

type AnnotatedItem = { index: number; question_id: number; version_features?: unknown[]; gold_issues?: { kind: string }[] };

/** `version_sensitive` and `gold_issues` of an eval summary, from its items (as eval computes them from its results). */
function rewardCountsJson(items: readonly unknown[]) {
  const all = items as AnnotatedItem[];
  const flagged = all.filter((i) => (i.version_features?.length ?? 0) > 0);
  const withIssues = all.filter((i) => (i.gold_issues?.length ?? 0) > 0);
  const byKind: Record<string, number> = {};
  for (const i of withIssues) for (const k of new Set(i.gold_issues!.map((g) => g.kind))) byKind[k] = (byKind[k] ?? 0) + 1;
  return {
    version_sensitive: { count: flagged.length, question_ids: [...new Set(flagged.map((i) => i.question_id))] },
    gold_issues: { count: new Set(withIssues.map((i) => i.index)).size, by_kind: byKind },
  };
}

/** Joins shard run files into the run file of one run (the first shard's header, every sample). */
export function mergeRunFiles(runs: readonly RunFile[], files: readonly string[]): RunFile {
  if (runs.length === 0) throw new WorkbenchError('BAD_OPTION', 'name the --run-out files of the shards to merge', 'merge');
  const shards = runs.map((f, i) => {
    const s = f.run.shard;
    if (!s) throw new WorkbenchError('BAD_FORMAT', 'is not the --run-out of an `eval --shard K/N` run (its header has no shard)', files[i]);
    return s;
  });
  checkComplete(shards, [...files]);
  const ordered = runs.map((f, i) => ({ f, s: shards[i]! })).sort((a, b) => a.s.k - b.s.k).map((x) => x.f);
  const head = ordered[0]!.run;
  const databases: Record<string, string> = {};
  const indices = new Set<number>();
  let samplesPerQuestion = 1;
  const executions = { executed: 0, reused: 0 };
  const questions = new Map<number, RunQuestion>();
  for (const f of ordered) {
    Object.assign(databases, f.run.dataset.databases);
    for (const i of f.run.subset.indices) indices.add(i);
    samplesPerQuestion = Math.max(samplesPerQuestion, f.run.samplesPerQuestion);
    executions.executed += f.run.executions?.executed ?? 0;
    executions.reused += f.run.executions?.reused ?? 0;
    for (const q of f.questions ?? []) questions.set(q.index, q);
  }
  const sortedDbs = Object.fromEntries(Object.entries(databases).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const { shard: _shard, ...header } = head;
  void _shard;
  const run = {
    ...header,
    dataset: { ...head.dataset, databases: sortedDbs },
    subset: { ...head.subset, indices: [...indices].sort((a, b) => a - b) },
    samplesPerQuestion,
    executions,
  };
  const qs = ordered.some((f) => f.questions) ? [...questions.values()].sort((a, b) => a.index - b.index) : undefined;
  return toRunFile(run, ordered.flatMap((f) => f.samples), qs);
}
