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
import { toRunFile } from '../runfile/export.ts';
import type { RunFile, RunQuestion } from '../run/types.ts';
import { versionCheckHeader, versionEffectsJson, versionEffectsOf } from '../run/version-effects.ts';

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
    throw new WorkbenchError(
      'BAD_OPTION',
      `expected K/N with 1 <= K <= N (e.g. 2/8 for the second of eight shards), got ${JSON.stringify(text)}`,
      flag,
    );
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
    // An unscored item is written with ex null (json-report.ts); the summary leaves it out by its status.
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
    throw new WorkbenchError(
      'BAD_FORMAT',
      'is not the --out of an `eval --shard K/N` run (its summary has no shard)',
      file,
    );
  }
  return { k: s.k, n: s.n };
}

function checkComplete(shards: Shard[], files: string[]): void {
  const n = shards[0]!.n;
  const seen = new Map<number, string>();
  shards.forEach((s, i) => {
    if (s.n !== n)
      throw new WorkbenchError('MISMATCH', `is shard ${s.k}/${s.n}, but ${files[0]} is of ${n} shards`, files[i]);
    const other = seen.get(s.k);
    if (other) throw new WorkbenchError('MISMATCH', `is shard ${s.k}/${n} again (also ${other})`, files[i]);
    seen.set(s.k, files[i]!);
  });
  const missing = Array.from({ length: n }, (_, i) => i + 1).filter((k) => !seen.has(k));
  if (missing.length > 0) {
    throw new WorkbenchError(
      'MISMATCH',
      `shard${missing.length > 1 ? 's' : ''} ${missing.map((k) => `${k}/${n}`).join(', ')} missing: give every shard's output`,
      'merge',
    );
  }
}

/** JSON with sorted keys, so two values compare by content whatever order their keys were written in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/**
 * Shards of one run agree on every input, setting and version: `fields` maps a field's name to
 * its value in each shard (`skipNull`: a shard that could not read it, e.g. the SQLite version
 * of a shard whose databases are all missing, is not compared). The first difference is an
 * error naming the field, both files and both values.
 */
function checkSameRun(
  files: readonly string[],
  fields: Record<string, readonly unknown[]>,
  skipNull: readonly string[] = [],
): void {
  for (const [field, values] of Object.entries(fields)) {
    let ref: { at: number; text: string } | null = null;
    values.forEach((v, i) => {
      if ((v === null || v === undefined) && skipNull.includes(field)) return;
      const text = canonical(v);
      if (!ref) ref = { at: i, text };
      else if (text !== ref.text) {
        const show = (t: string) => (t.length > 200 ? `${t.slice(0, 200)}…` : t);
        throw new WorkbenchError(
          'MISMATCH',
          `${field} differs: ${files[ref.at]} has ${show(ref.text)}, ${files[i]} has ${show(text)}. These are not shards of one run ` +
            '(another predictions file, gold, dataset, metric, setting or version): merge only the shards of one eval command',
          files[i],
        );
      }
    });
  }
}

/** A count every shard must carry: summed, never taken as 0 when a shard lacks it. */
function sumCounts<K extends string>(
  keys: readonly K[],
  counts: readonly (Partial<Record<K, number>> | undefined)[],
  files: readonly string[],
  what: string,
): Record<K, number> | null {
  if (counts.every((c) => c === undefined)) return null;
  const out = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
  counts.forEach((c, i) => {
    for (const k of keys) {
      const v = c?.[k];
      if (typeof v !== 'number') {
        throw new WorkbenchError(
          'MISMATCH',
          `has no ${what}.${k} while other shards do: it was written by another version of the workbench; run every shard with the same version`,
          files[i],
        );
      }
      out[k] += v;
    }
  });
  return out;
}

/** The per-item field of each metric: an item without it has no value, which is not a 0. */
const METRIC_FIELD: Partial<Record<MetricName, string>> = { ex: 'ex', 'soft-f1': 'soft_f1', 'r-ves': 'r_ves' };

function checkItemFields(reports: readonly JsonReport[], files: readonly string[]): void {
  reports.forEach((r, i) => {
    for (const m of r.summary.metrics) {
      const field = METRIC_FIELD[m];
      if (!field) continue;
      const bad = r.items.find((it) => !(field in it));
      if (bad)
        throw new WorkbenchError(
          'BAD_FORMAT',
          `item ${String(bad.index)} has no ${field} although the run's metrics include ${m}: the report is incomplete or edited; run the shard again`,
          files[i],
        );
    }
  });
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
  if (reports.length === 0)
    throw new WorkbenchError('BAD_OPTION', 'name the --out files of the shards to merge', 'merge');
  const shards = reports.map((r, i) => shardOf(r, files[i]!));
  checkComplete(shards, [...files]);
  const field = (f: (r: JsonReport) => unknown) => reports.map(f);
  const inputs = (r: JsonReport) => (r.summary.inputs ?? {}) as Record<string, unknown>;
  // db_root may be each machine's own copy of the databases; their hashes are in the run files.
  checkSameRun(
    files,
    {
      'inputs.predictions': field((r) => inputs(r).predictions),
      'inputs.gold': field((r) => inputs(r).gold),
      'inputs.dataset': field((r) => inputs(r).dataset),
      metrics: field((r) => r.summary.metrics),
      'inputs.timeout_s (--timeout-s)': field((r) => inputs(r).timeout_s),
      'inputs.read_only (--read-only)': field((r) => inputs(r).read_only),
      'inputs.ves_iterations (--ves-iterations)': field((r) => inputs(r).ves_iterations),
      'inputs.test_suite (--ts-seed, --ts-size)': field((r) => inputs(r).test_suite),
      'reward_formula (--reward)': field((r) => r.summary.reward_formula),
      engine: field((r) => r.summary.engine),
      executor: field((r) => r.summary.executor),
      sqlite_version: field((r) => r.summary.sqlite_version),
      'summary fields (the version of the workbench)': field((r) =>
        Object.keys(r.summary)
          // A shard without a version-sensitive item re-ran none (no version_effects): merge recomputes it.
          .filter((k) => k !== 'shard' && k !== 'version_effects')
          .sort(),
      ),
    },
    ['sqlite_version'],
  );
  checkItemFields(reports, files);
  const ordered = reports
    .map((r, i) => ({ r, s: shards[i]! }))
    .sort((a, b) => a.s.k - b.s.k)
    .map((x) => x.r);
  const items = ordered.flatMap((r) => r.items).sort(byItemOrder);
  const first = ordered[0]!.summary;
  const summary = summarize(items.map(resultOf), first.metrics);
  const keep = [
    'warnings',
    'pairing_findings',
    'inputs',
    'engine',
    'executor',
    'sqlite_version',
    'reward_formula',
    'ex_rule',
  ];
  const extra: Record<string, unknown> = {};
  for (const k of keep) {
    if (k in first) extra[k] = first[k];
    // A shard of missing databases read no SQLite version: take the first shard that did.
    if (k === 'sqlite_version' && k in first)
      extra[k] = ordered.map((r) => r.summary[k]).find((v) => v !== null) ?? null;
    // The version and gold-check counts are recomputed over every shard's items, in eval's key order.
    if (k === 'sqlite_version' && 'version_sensitive' in first)
      Object.assign(extra, rewardCountsJson(items, first.metrics, extra.sqlite_version as string | null));
  }
  type Executions = Record<'items' | 'executed' | 'reused' | 'gold_executed' | 'from_cache', number>;
  const executions = sumCounts(
    ['items', 'executed', 'reused', 'gold_executed', 'from_cache'],
    ordered.map((r) => r.summary.executions as Partial<Executions> | undefined),
    ordered.map((r) => files[reports.indexOf(r)]!),
    'executions',
  );
  if (executions) extra.executions = executions;
  return { summary: summaryJson(summary, extra) as JsonReport['summary'], items };
}

type AnnotatedItem = {
  index: number;
  question_id: number;
  version_features?: unknown[];
  gold_issues?: { kind: string }[];
};

/**
 * `version_sensitive`, `version_effects` (when items were re-run on the older SQLite) and
 * `gold_issues` of an eval summary, from its items (as eval computes them from its results).
 */
function rewardCountsJson(items: readonly unknown[], metrics: MetricName[], mainVersion: string | null) {
  const all = items as AnnotatedItem[];
  const flagged = all.filter((i) => (i.version_features?.length ?? 0) > 0);
  const withIssues = all.filter((i) => (i.gold_issues?.length ?? 0) > 0);
  const byKind: Record<string, number> = {};
  for (const i of withIssues)
    for (const k of new Set(i.gold_issues!.map((g) => g.kind))) byKind[k] = (byKind[k] ?? 0) + 1;
  const effects = versionEffectsOf(
    (items as Record<string, unknown>[]).map((j) => {
      const c = j.version_check as Record<string, unknown> | undefined;
      const r = resultOf(j);
      // The static flags: a re-run item without one was re-run to be re-timed (a timeout).
      if (Array.isArray(j.version_features) && j.version_features.length > 0)
        r.versionFeatures = j.version_features as NonNullable<ItemResult['versionFeatures']>;
      if (c)
        r.versionCheck = {
          sqliteVersion: c.sqlite_version as string,
          ex: c.ex as 0 | 1,
          softF1: c.soft_f1 as number | null,
          status: c.status as ItemStatus,
          error: c.error as string | null,
          differs: c.differs as boolean,
          ...(c.planner === true ? { planner: true } : {}),
        };
      return r;
    }),
    metrics,
    mainVersion,
  );
  return {
    version_sensitive: { count: flagged.length, question_ids: [...new Set(flagged.map((i) => i.question_id))] },
    ...(effects ? { version_effects: versionEffectsJson(effects) } : {}),
    gold_issues: { count: new Set(withIssues.map((i) => i.index)).size, by_kind: byKind },
  };
}

/** Joins shard run files into the run file of one run (the first shard's header, every sample). */
export function mergeRunFiles(runs: readonly RunFile[], files: readonly string[]): RunFile {
  if (runs.length === 0)
    throw new WorkbenchError('BAD_OPTION', 'name the --run-out files of the shards to merge', 'merge');
  const shards = runs.map((f, i) => {
    const s = f.run.shard;
    if (!s)
      throw new WorkbenchError(
        'BAD_FORMAT',
        'is not the --run-out of an `eval --shard K/N` run (its header has no shard)',
        files[i],
      );
    return s;
  });
  checkComplete(shards, [...files]);
  const field = (f: (r: RunFile) => unknown) => runs.map(f);
  const predictions = (r: RunFile) => (r.run.source.kind === 'replay' ? r.run.source.predictions : r.run.source);
  checkSameRun(
    files,
    {
      'version (of the run file)': field((r) => [r.format, r.version]),
      'source.predictions (the predictions file)': field((r) => {
        const p = predictions(r);
        return 'sha256' in p ? p.sha256 : p;
      }),
      'dataset.gold (the gold file)': field((r) => r.run.dataset.gold?.sha256 ?? null),
      'dataset.questions (the dataset)': field((r) => r.run.dataset.questions.sha256),
      'config.metrics (--metrics)': field((r) => r.run.config.metrics),
      'config.timeoutMs (--timeout-s)': field((r) => r.run.config.timeoutMs),
      'config.readOnly (--read-only)': field((r) => r.run.config.readOnly),
      'config.vesIterations (--ves-iterations)': field((r) => r.run.config.vesIterations),
      'config.rewardFormula (--reward)': field((r) => r.run.config.rewardFormula),
      config: field((r) => r.run.config),
      executor: field((r) => r.run.executor),
      sqliteVersion: field((r) => r.run.sqliteVersion),
    },
    ['sqliteVersion'],
  );
  // One database read by two shards must be the same file.
  const dbSeen = new Map<string, { sha: string; file: string }>();
  runs.forEach((r, i) => {
    for (const [db, sha] of Object.entries(r.run.dataset.databases)) {
      const prev = dbSeen.get(db);
      if (prev && prev.sha !== sha)
        throw new WorkbenchError(
          'MISMATCH',
          `database ${db} differs: sha256 ${prev.sha} in ${prev.file}, ${sha} here: merge only shards run on the same databases`,
          files[i],
        );
      dbSeen.set(db, { sha, file: files[i]! });
    }
  });
  const ordered = runs
    .map((f, i) => ({ f, s: shards[i]! }))
    .sort((a, b) => a.s.k - b.s.k)
    .map((x) => x.f);
  const head = ordered[0]!.run;
  const databases: Record<string, string> = {};
  const indices = new Set<number>();
  let samplesPerQuestion = 1;
  const questions = new Map<number, RunQuestion>();
  for (const f of ordered) {
    Object.assign(databases, f.run.dataset.databases);
    for (const i of f.run.subset.indices) indices.add(i);
    samplesPerQuestion = Math.max(samplesPerQuestion, f.run.samplesPerQuestion);
    for (const q of f.questions ?? []) questions.set(q.index, q);
  }
  const executions = sumCounts(
    ['executed', 'reused'],
    ordered.map((f) => f.run.executions),
    ordered.map((f) => files[runs.indexOf(f)]!),
    'executions',
  );
  // Verdicts from the verdict cache: recorded by runs made since it exists (absent in older files).
  if (executions && ordered.some((f) => f.run.executions?.fromCache !== undefined)) {
    (executions as { fromCache?: number }).fromCache = ordered.reduce(
      (n, f) => n + (f.run.executions?.fromCache ?? 0),
      0,
    );
  }
  const sortedDbs = Object.fromEntries(Object.entries(databases).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const { shard: _shard, sqliteVersion: _v, versionCheck: _c, ...header } = head;
  void [_shard, _v, _c];
  // A shard of missing databases read no SQLite version; the version check is of every shard's samples.
  const sqliteVersion = ordered.map((f) => f.run.sqliteVersion).find((v) => v !== undefined);
  const samples = ordered.flatMap((f) => f.samples);
  const checked = samples.filter((s) => s.versionCheck);
  const run = {
    ...header,
    dataset: { ...head.dataset, databases: sortedDbs },
    subset: { ...head.subset, indices: [...indices].sort((a, b) => a - b) },
    samplesPerQuestion,
    ...(executions ? { executions } : {}),
    ...(sqliteVersion !== undefined ? { sqliteVersion } : {}),
    ...(checked.length > 0
      ? {
          versionCheck: versionCheckHeader(
            checked[0]!.versionCheck!.sqliteVersion,
            checked.map((s) => s.versionCheck!),
          ),
        }
      : {}),
  };
  const qs = ordered.some((f) => f.questions) ? [...questions.values()].sort((a, b) => a.index - b.index) : undefined;
  return toRunFile(run, samples, qs);
}
