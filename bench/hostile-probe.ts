/**
 * Child process of the benchmark (`worker_peak_rss_mib_hostile`): one SQL worker of
 * the pool on a tiny database, given the hostile workload that grew a worker to 4-4.5 GB before
 * the worker's bounds (docs/isolation.md): a table of 1.5 GB of random blobs, a SELECT sorting
 * 1.5 GB, a TEMP table of 1.5 GB, and `PRAGMA hard_heap_limit` lowered. Prints one JSON line.
 *
 * Method as in rss-probe.ts: the pool's worker is started and has opened the database; the
 * peak-RSS counter is reset (`/proc/self/clear_refs`) and the resident size read (VmRSS); the
 * workload runs; the result is VmHWM (peak since the reset) minus that baseline, against the
 * budget `workerBudgetBytes` of the database's size. Each statement must end with the worker's
 * over-budget (or refused) status, and a normal query after them must score.
 */
import { statSync } from 'node:fs';
import { createNodeSqlPool } from '../src/adapters/node/sql-worker-host.ts';
import { DEFAULT_EVAL_OPTIONS } from '../src/core/eval/executor.ts';
import type { EvalItem } from '../src/core/types.ts';
import { workerBudgetBytes } from '../workers/sql-bounds.ts';
import { dbArgument, procStatus as status, resetPeak as clearPeak } from './proc-status.ts';

const { file, dbId, root } = dbArgument('hostile-probe.ts');
const rows = (n: number) =>
  `(WITH RECURSIVE c(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM c WHERE v < ${n}) SELECT v FROM c)`;
export const HOSTILE = [
  `CREATE TABLE big AS SELECT randomblob(1000) AS b FROM ${rows(1_500_000)}`,
  `SELECT count(*) FROM (SELECT randomblob(1000) AS b FROM ${rows(1_500_000)} ORDER BY b)`,
  `CREATE TEMP TABLE big AS SELECT randomblob(1000) AS b FROM ${rows(1_500_000)}`,
  'PRAGMA hard_heap_limit = 200000',
];
const item = (index: number, predSql: string, goldSql: string): EvalItem => ({
  index,
  questionId: index,
  dbId,
  difficulty: 'simple',
  predSql,
  goldSql,
  extraction: { rule: 'sql-field', thinkStripped: false },
});

const pool = createNodeSqlPool({ dbRoot: root, workers: 1 });
try {
  const options = { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 120_000 };
  await pool.evaluate([item(0, 'SELECT count(*) FROM t', 'SELECT 200')], options);
  await new Promise((r) => setTimeout(r, 300));
  const resetPeak = clearPeak();
  const base = status();
  const t0 = performance.now();
  const results = await pool.evaluate(
    [...HOSTILE.map((sql, i) => item(i + 1, sql, 'SELECT 1')), item(99, 'SELECT count(*) FROM t', 'SELECT 200')],
    options,
  );
  const ms = performance.now() - t0;
  const after = status();
  const last = results[results.length - 1]!;
  process.stdout.write(
    JSON.stringify({
      resetPeak,
      baseRssKiB: base.rssKiB,
      peakHwmKiB: after.hwmKiB,
      ms,
      sizeBytes: statSync(file).size,
      budgetBytes: workerBudgetBytes(statSync(file).size),
      statuses: results.slice(0, HOSTILE.length).map((r) => `${r.status}: ${r.error ?? ''}`),
      after: `${last.status} ex ${last.ex}`,
    }) + '\n',
  );
} finally {
  await pool.dispose();
}
