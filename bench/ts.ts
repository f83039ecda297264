/**
 * Metric ts (docs/test-suite.md) in `npm run bench`:
 * - ts_build_ms_per_db_mib: suite build time (sample, candidates, golds and variants on each,
 *   set cover) per MiB of original database, over the BIRD databases here, with the mini-dev
 *   golds, in this process (sql.js, as in a worker); with the suites' size and the process's
 *   peak RSS growth while building;
 * - ts_eval_ratio_vs_ex: an `ex,ts` evaluation (suites built in it) over a fresh pool divided
 *   by an `ex` evaluation of the same items over another fresh pool, alternated over rounds.
 * `--quick`: both on one database, the one with the fewest mini-dev golds (each key still measured).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import initSqlJs from 'sql.js';
import { spawnNodeSqlWorker } from '../src/adapters/node/sql-worker-host.ts';
import { SqlPool } from '../src/adapters/sql-pool.ts';
import type { MetricName } from '../src/core/eval/executor.ts';
import { DEFAULT_RUN_CONFIG } from '../src/core/run/types.ts';
import { OFFICIAL_TIMEOUT_MS } from '../src/core/eval/constants.ts';
import { parseGoldSql } from '../src/core/formats/gold.ts';
import { scoreRun } from '../src/core/run/score-run.ts';
import { DEFAULT_SUITE_SPEC } from '../src/core/ts/suite.ts';
import type { EvalItem } from '../src/core/types.ts';
import { buildSuiteOn } from '../workers/sql-suite.ts';
import { BIRD_DB_ROOT, SHARED, workloadDbSource } from './items.ts';

const MiB = 1024 * 1024;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface TsBench {
  keys: Record<string, number>;
}

function birdDbs(): string[] {
  return readdirSync(BIRD_DB_ROOT)
    .filter((d) => {
      try {
        return statSync(path.join(BIRD_DB_ROOT, d, `${d}.sqlite`)).isFile();
      } catch {
        return false;
      }
    })
    .sort();
}

export async function measureTs(opts: {
  items: readonly EvalItem[];
  rounds: number;
  workers: number;
  quick: boolean;
  log: (m: string) => void;
}): Promise<TsBench> {
  const gold = parseGoldSql(
    readFileSync(path.join(SHARED, 'bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'utf8'),
    'mini_dev_sqlite_gold.sql',
  );
  const goldCount = (db: string) => gold.filter((g) => g.dbId === db).length;
  const all = birdDbs();
  const dbs = opts.quick ? [...all].sort((a, b) => goldCount(a) - goldCount(b) || a.localeCompare(b)).slice(0, 1) : all;
  const SQL = await initSqlJs();
  let buildMs = 0;
  let mib = 0;
  let suiteBytes = 0;
  let peakRss = 0;
  const rss0 = process.memoryUsage().rss;
  for (const db of dbs) {
    const bytes = new Uint8Array(readFileSync(path.join(BIRD_DB_ROOT, db, `${db}.sqlite`)));
    const original = new SQL.Database(bytes);
    const golds = gold.filter((g) => g.dbId === db).map((g) => g.sql);
    const t0 = performance.now();
    const suite = buildSuiteOn(SQL, original, golds, DEFAULT_SUITE_SPEC);
    const ms = performance.now() - t0;
    peakRss = Math.max(peakRss, process.memoryUsage().rss - rss0);
    original.close();
    buildMs += ms;
    mib += bytes.length / MiB;
    suiteBytes += suite.stats.bytes;
    opts.log(
      `  suite of ${db} (${(bytes.length / MiB).toFixed(2)} MiB): ${Math.round(ms)} ms, ${suite.dbs.length} databases, ${(suite.stats.bytes / 1024).toFixed(0)} KiB`,
    );
  }

  // The same items with ex, then with ex,ts (each on a fresh pool: the ts side builds its suites).
  const items = opts.items.filter((it) => dbs.includes(it.dbId));
  const dbPath = new Map(dbs.map((d) => [d, path.join(BIRD_DB_ROOT, d, `${d}.sqlite`)]));
  const timed = async (metrics: MetricName[]) => {
    const pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: workloadDbSource({ dbPath }), size: opts.workers });
    try {
      const t0 = performance.now();
      await scoreRun(
        items,
        { ...DEFAULT_RUN_CONFIG, metrics, timeoutMs: OFFICIAL_TIMEOUT_MS },
        { executor: pool, reuse: false, findings: false },
      );
      return performance.now() - t0;
    } finally {
      await pool.dispose();
    }
  };
  const ratios: number[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    const ex = await timed(['ex']);
    const ts = await timed(['ex', 'ts']);
    opts.log(`  ${items.length} items: ex ${Math.round(ex)} ms, ex,ts ${Math.round(ts)} ms`);
    ratios.push(ts / ex);
  }
  return {
    keys: {
      ts_build_ms_per_db_mib: buildMs / mib,
      ts_eval_ratio_vs_ex: median(ratios),
      // Context for the two keys above.
      ts_build_dbs: dbs.length,
      ts_build_db_mib: mib,
      ts_suite_kib_per_db: suiteBytes / 1024 / dbs.length,
      ts_build_peak_rss_growth_mib: peakRss / MiB,
      ts_eval_items: items.length,
    },
  };
}
