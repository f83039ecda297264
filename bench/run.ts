/**
 * `npm run bench [-- --quick] [--out FILE] [--rounds N]`: evaluation speed of our sql.js worker
 * pool against native SQLite (better-sqlite3) on the same items, database opening speed and the
 * memory of a worker holding a large database, and the built app in headless Chromium: a replay
 * run's speed and main-thread long tasks, IndexedDB sample writes and reopening a stored run
 * (bench/browser.ts). Prints a table; `--out` writes JSON.
 * Methods are described next to each measurement below and in the README's Benchmarks section.
 */
import { transfer } from 'comlink';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { spawnNodeSqlWorker, sqlJsWasmModule } from '../src/adapters/node/sql-worker-host.ts';
import { SqlPool } from '../src/adapters/sql-pool.ts';
import { OFFICIAL_TIMEOUT_MS } from '../src/core/eval/constants.ts';
import { scoreRun } from '../src/core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig } from '../src/core/run/types.ts';
import type { EvalItem, ItemResult } from '../src/core/types.ts';
import { BIRD_DB_ROOT, REPO_ROOT, loadWorkload, workloadDbSource, type Workload } from './items.ts';
import { browserBenchSkipReason, measureBrowser, median, type BrowserBench } from './browser.ts';
import { measurePlaygroundOnly } from './playground.ts';
import { measureReport } from './report.ts';
import { launchChromium } from '../tests/browser/harness.ts';
import { runCommand } from '../tests/helpers/run-command.ts';
import { measureGguf } from './gguf.ts';
import { BROWSER_KEYS, IMPLEMENTED_KEYS, NODE_KEYS, TARGETS } from './keys.ts';
import { measureParse } from './parse.ts';
import { runNative, type NativeItemResult } from './native-host.ts';
import { makeLargeDb, makeTinyDb } from './synthetic-db.ts';
import { measureStats, rlWorkload } from './rl.ts';
import { measureSeriesBuild, measureSeriesStep } from './series.ts';
import { measureTs } from './ts.ts';
import { measureCli } from './cli-bench.ts';
import { measureRves, RVES_TARGETS } from './rves.ts';
import { RUNAWAYS, SLOW_TAIL_MS, isRunaway } from './runaways.ts';
import { SCALE_TARGETS, measureScale } from './scale-bench.ts';

interface Args {
  quick: boolean;
  out: string | null;
  rounds: number;
  /**
   * `--only cli,hostile`: only these groups of keys (bench/cli-bench.ts; hostile:
   * worker_peak_rss_mib_hostile; report: bench/report.ts; playground: bench/playground.ts; rves:
   * bench/rves.ts, the app's R-VES against the CLI's, about 20 minutes, run only when asked;
   * scale: bench/scale-bench.ts, BIRD dev at its real size against the official approach, run alone).
   */
  only: Set<string> | null;
}

const ONLY_GROUPS = ['cli', 'hostile', 'report', 'playground', 'rves', 'scale'];

function parseArgs(argv: string[]): Args {
  const args: Args = { quick: false, out: null, rounds: 0, only: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') args.quick = true;
    else if (a === '--out') args.out = argv[++i] ?? fail('--out needs a file');
    else if (a === '--only') {
      args.only = new Set((argv[++i] ?? '').split(',').filter(Boolean));
      const unknown = [...args.only].filter((g) => !ONLY_GROUPS.includes(g));
      if (args.only.size === 0 || unknown.length)
        fail(`--only takes a comma-separated list of ${ONLY_GROUPS.join(', ')}`);
    } else if (a === '--rounds') {
      args.rounds = Number(argv[++i]);
      if (!Number.isInteger(args.rounds) || args.rounds < 1) fail('--rounds needs a positive integer');
    } else if (a === '--help' || a === '-h') {
      process.stdout.write(
        `usage: npm run bench -- [--quick] [--out FILE] [--rounds N] [--only ${ONLY_GROUPS.join(',')}]\n`,
      );
      process.exit(0);
    } else fail(`unknown argument ${a}`);
  }
  if (args.rounds === 0) args.rounds = args.quick ? 1 : 3;
  return args;
}

function fail(msg: string): never {
  process.stderr.write(`bench: ${msg}\n`);
  process.exit(2);
}

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const MiB = 1024 * 1024;

/** The official per-item timeout (prediction and gold together), on both sides. */
const ITEM_TIMEOUT_MS = OFFICIAL_TIMEOUT_MS;

const RUN_CONFIG: RunConfig = {
  ...DEFAULT_RUN_CONFIG,
  metrics: ['ex', 'soft-f1'],
  timeoutMs: ITEM_TIMEOUT_MS,
  readOnly: false,
  vesIterations: 1,
};

interface Timed {
  ms: number;
  cpuMs: number;
}

/** Warm-up items on two tiny synthetic databases: one per worker, JIT and sql.js loaded. */
export function warmupItems(ids: string[]): EvalItem[] {
  const out: EvalItem[] = [];
  for (const dbId of ids) {
    for (const [predSql, goldSql] of [
      ['SELECT name FROM t WHERE id < 50', 'SELECT name FROM t WHERE id < 50 ORDER BY id DESC'],
      ['SELECT count(*), avg(score) FROM t', 'SELECT count(*), avg(score) FROM t'],
    ] as const) {
      out.push({
        index: out.length,
        questionId: out.length,
        dbId,
        difficulty: 'unknown',
        predSql,
        goldSql,
        extraction: { rule: 'sql-line', thinkStripped: false },
      });
    }
  }
  return out;
}

/**
 * Our pool over `items`. `reuse` is off for the eval_* keys, which compare the engines on the
 * same work (every item executed, as natively); the rl_* keys (rl.ts) measure the loop with reuse.
 */
export async function timePool(
  w: Pick<Workload, 'dbPath'>,
  items: EvalItem[],
  size: number,
  warmup: EvalItem[],
  reuse = false,
): Promise<Timed & { results: ItemResult[]; startMs: number; executed: number; goldExecuted: number }> {
  const pool = new SqlPool({
    spawn: spawnNodeSqlWorker,
    dbSource: workloadDbSource(w),
    size,
    // As the CLI's pool: one compiled sql.js for every worker (src/adapters/node/sql-worker-host.ts).
    wasmModule: sqlJsWasmModule,
  });
  try {
    // Worker start (thread, tsx, sql.js wasm) is measured apart; the timed part opens every
    // database of the workload from its file, as a CLI run does.
    const s0 = performance.now();
    await scoreRun(warmup, RUN_CONFIG, { executor: pool, reuse: false, findings: false });
    const startMs = performance.now() - s0;
    const c0 = cpuMs();
    const t0 = performance.now();
    const { results, executed, goldExecuted } = await scoreRun(items, RUN_CONFIG, {
      executor: pool,
      reuse,
      findings: false,
    });
    return { ms: performance.now() - t0, cpuMs: cpuMs() - c0, results, startMs, executed, goldExecuted };
  } finally {
    await pool.dispose();
  }
}

export async function timeNative(
  w: Pick<Workload, 'dbPath'>,
  items: EvalItem[],
  warmup: EvalItem[],
  timeoutMs = ITEM_TIMEOUT_MS,
): Promise<Timed & { results: NativeItemResult[]; timeouts: number[] }> {
  const r = await runNative(items, w.dbPath, { timeoutMs, softF1: true, warmup });
  return { ms: r.ms, cpuMs: r.cpuMs, results: r.results, timeouts: r.timeouts };
}

/** `db_open_ms_per_mib`: loadDb in one worker (transfer, open, table count, quick_check). */
async function measureDbOpen(
  reps: number,
): Promise<{ msPerMiB: number; perDb: Record<string, { mib: number; ms: number }> }> {
  const worker = spawnNodeSqlWorker();
  try {
    await worker.api.init({ cacheBytes: 512 * MiB });
    const perDb: Record<string, { mib: number; ms: number }> = {};
    let totalMs = 0;
    let totalMiB = 0;
    for (const dbId of ['student_club', 'superhero', 'toxicology']) {
      const bytes = new Uint8Array(readFileSync(path.join(BIRD_DB_ROOT, dbId, `${dbId}.sqlite`)));
      const times: number[] = [];
      for (let i = 0; i < reps + 1; i++) {
        const copy = bytes.slice();
        const t0 = performance.now();
        await worker.api.loadDb(dbId, transfer(copy, [copy.buffer]));
        if (i > 0) times.push(performance.now() - t0); // the first open warms the worker up
      }
      const ms = median(times);
      perDb[dbId] = { mib: bytes.length / MiB, ms };
      totalMs += ms;
      totalMiB += bytes.length / MiB;
    }
    return { msPerMiB: totalMs / totalMiB, perDb };
  } finally {
    worker.terminate();
  }
}

interface Probe {
  sizeBytes: number;
  resetPeak: boolean;
  baseRssKiB: number;
  peakHwmKiB: number;
  afterRssKiB: number;
  readMs: number;
  openMs: number;
  scanMs: number;
}

/** `peak_worker_rss_mib_per_db_mib`: a child process holding the synthetic database in one worker. */
function probeRss(file: string): Promise<Probe> {
  return probeChild<Probe>('rss-probe.ts', file);
}

interface HostileProbe {
  resetPeak: boolean;
  baseRssKiB: number;
  peakHwmKiB: number;
  ms: number;
  sizeBytes: number;
  budgetBytes: number;
  statuses: string[];
  after: string;
}

/**
 * `worker_peak_rss_mib_hostile` (bench/hostile-probe.ts): the peak resident memory of
 * one pool worker given the hostile workload, against the worker's stated budget. Each hostile
 * statement must end over budget (or refused) and the item after them must score, or the bench fails.
 */
async function measureHostile(tmp: string): Promise<Record<string, number>> {
  const file = makeTinyDb(tmp, 'bench_hostile');
  const p = await probeChild<HostileProbe>('hostile-probe.ts', file);
  for (const st of p.statuses)
    if (
      !/^error: prediction: (out of memory: over|database or disk is full: the write grew|PRAGMA hard_heap_limit)/.test(
        st,
      )
    )
      throw new Error(`hostile workload: unexpected status ${st}`);
  if (p.after !== 'ok ex 1') throw new Error(`hostile workload: the item after it ended ${p.after}`);
  log(
    `hostile workload: ${p.statuses.length} statements, each ended at its bound, in ${fmt(p.ms / 1000)} s; the next item scored`,
  );
  return {
    worker_peak_rss_mib_hostile: (p.peakHwmKiB - p.baseRssKiB) / 1024,
    worker_budget_mib_hostile: p.budgetBytes / MiB,
    worker_hostile_ms: p.ms,
  };
}

async function probeChild<T>(script: string, file: string): Promise<T> {
  const r = await runCommand(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench', script), file], {
    cwd: REPO_ROOT,
  });
  if (r.code !== 0) throw new Error(`${script} exited with ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as T;
}

/** The keys with their targets, then `extra` rows (skipped or absent keys). */
function printTable(keys: Record<string, number>, extra: [string, string, string, string][]): void {
  const rows: [string, string, string, string][] = [];
  for (const [k, v] of Object.entries(keys)) {
    const t = TARGETS[k];
    rows.push([k, fmt(v), t?.text ?? '', t ? (t.met(v) ? 'met' : 'MISSED') : '']);
  }
  rows.push(...extra);
  const widths = [0, 1, 2, 3].map((c) =>
    Math.max(...rows.map((r) => r[c]!.length), ['key', 'value', 'target', ''][c]!.length),
  );
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  process.stdout.write(
    [line(['key', 'value', 'target', '']), line(widths.map((n) => '-'.repeat(n))), ...rows.map(line)].join('\n') + '\n',
  );
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}

function printLoad(load0: number[], load1: number[]): void {
  const avg = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  process.stdout.write(`load average (1, 5, 15 min): start ${avg(load0)}, end ${avg(load1)}; ${cpus().length} cores\n`);
}

/** `--only`: the groups asked for, with the machine's load before and after. */
async function runOnly(args: Args): Promise<void> {
  const load0 = loadavg();
  const started = new Date().toISOString();
  const { keys, details } = await measureCli(log, args.only!);
  const load1 = loadavg();
  const targets: Record<string, string> = {
    cli_start_ms: '< 150',
    cli_eval_file_ratio_vs_python: '<= 1.0',
    cli_eval_file_floor_ratio_sqljs: '- (the floor of the key above with sql.js)',
    cli_eval_13files_ratio_vs_python: '<= 0.7',
    cache_reeval_ratio: '<= 0.05',
  };
  for (const [k, v] of Object.entries(keys))
    process.stdout.write(`${k.padEnd(46)} ${fmt(v).padStart(10)}   target ${targets[k] ?? '-'}\n`);
  printLoad(load0, load1);
  if (args.out)
    writeFileSync(
      args.out,
      JSON.stringify(
        { keys, details, loadavg_start: load0, loadavg_end: load1, started, finished: new Date().toISOString() },
        null,
        1,
      ) + '\n',
    );
}

/** `--only rves` (bench/rves.ts): the app's R-VES against the CLI's, with the load. */
async function runRves(args: Args): Promise<void> {
  if (args.only!.size > 1) fail('--only rves runs alone (it takes about 20 minutes of Chromium and the CLI)');
  const load0 = loadavg();
  const started = new Date().toISOString();
  const { keys, rows } = await measureRves(log);
  const load1 = loadavg();
  for (const [k, v] of Object.entries(keys))
    process.stdout.write(`${k.padEnd(46)} ${fmt(v).padStart(10)}   target ${RVES_TARGETS[k] ?? '-'}\n`);
  printLoad(load0, load1);
  if (args.out)
    writeFileSync(
      args.out,
      JSON.stringify(
        { keys, rows, loadavg_start: load0, loadavg_end: load1, started, finished: new Date().toISOString() },
        null,
        1,
      ) + '\n',
    );
}

/** `--only scale` (bench/scale-bench.ts): BIRD dev at its real size, with the load. */
async function runScale(args: Args): Promise<void> {
  if (args.only!.size > 1) fail('--only scale runs alone (the full-size workloads take most of an hour)');
  const load0 = loadavg();
  const started = new Date().toISOString();
  const { keys, details } = await measureScale(log, args.quick);
  const load1 = loadavg();
  for (const [k, v] of Object.entries(keys))
    process.stdout.write(`${k.padEnd(46)} ${fmt(v).padStart(10)}   target ${SCALE_TARGETS[k] ?? '-'}\n`);
  printLoad(load0, load1);
  if (args.out)
    writeFileSync(
      args.out,
      JSON.stringify(
        {
          keys,
          details,
          quick: args.quick,
          loadavg_start: load0,
          loadavg_end: load1,
          started,
          finished: new Date().toISOString(),
        },
        null,
        1,
      ) + '\n',
    );
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.only?.has('scale')) return runScale(args);
  const browserOnly = ['report', 'playground'].filter((g) => args.only?.has(g));
  if (args.only?.has('rves')) return runRves(args);
  if (args.only && !args.only.has('hostile') && browserOnly.length === 0) return runOnly(args);
  const started = new Date();
  const load0 = loadavg();
  const tmp = mkdtempSync(path.join(tmpdir(), 'wb-bench-'));
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    if (browserOnly.length > 0) {
      const skipped = browserBenchSkipReason();
      if (skipped) throw new Error(`--only ${browserOnly.join(',')} needs Chromium: ${skipped}`);
      const report: { keys: Record<string, number>; meta: Record<string, unknown> } = { keys: {}, meta: {} };
      if (args.only?.has('report')) {
        const chromium = await launchChromium();
        try {
          Object.assign(report, await measureReport(chromium, tmp, args.rounds, log, args.quick));
        } finally {
          await chromium.close();
        }
      }
      if (args.only?.has('playground')) {
        const got = await measurePlaygroundOnly(tmp, args.rounds, log);
        report.keys = { ...report.keys, ...got.keys };
        report.meta = { ...report.meta, playground: got.meta };
      }
      const load1 = loadavg();
      printTable(report.keys, []);
      printLoad(load0, load1);
      if (args.out)
        writeFileSync(
          args.out,
          JSON.stringify(
            {
              ...report.keys,
              meta: {
                command: `npm run bench -- --only ${browserOnly.join(',')} --rounds ${args.rounds}${args.out ? ' --out FILE' : ''}`,
                started: started.toISOString(),
                loadavg_start: load0,
                loadavg_end: load1,
                ...report.meta,
              },
            },
            null,
            1,
          ) + '\n',
        );
      return;
    }
    if (args.only?.has('hostile')) {
      const keys = await measureHostile(tmp);
      printTable(keys, []);
      const command = `npm run bench -- --only hostile${args.out ? ' --out FILE' : ''}`;
      if (args.out)
        writeFileSync(
          args.out,
          JSON.stringify({ ...keys, meta: { command, started: started.toISOString() } }, null, 1) + '\n',
        );
      return;
    }
    const allWorkers = availableParallelism();
    const w = loadWorkload(args.quick ? { birdFiles: 1, spiderStride: 6 } : {});
    const warmIds = ['__bench_warmup_0', '__bench_warmup_1'];
    for (const id of warmIds) w.dbPath.set(id, makeTinyDb(tmp, id));
    const warmup = warmupItems(warmIds);
    const label = (i: number) => `${w.sources[i]} #${w.items[i]!.index} (${w.items[i]!.dbId})`;
    log(
      `${w.items.length} items (${w.birdItems} BIRD from ${w.birdFiles.length} prediction files, ${w.spiderItems} Spider), ` +
        `${allWorkers} cores, ${args.rounds} round(s)`,
    );

    // 1. Runaways: the fixed list of bench/runaways.ts (empty: every item is timed on both sides,
    // whatever its time), never a threshold that the machine's load could make an item cross.
    const runaway = new Set(w.items.flatMap((it, i) => (isRunaway(it) ? [i] : [])));
    const kept = w.items.map((_, i) => i).filter((i) => !runaway.has(i));
    const items = kept.map((i) => w.items[i]!);
    log(`runaways: ${[...runaway].map(label).join(', ') || 'none'}`);

    // 2. Timed rounds, interleaved so that a change of machine load hits every side alike.
    const rounds: { native: Timed; one: Timed; all: Timed; startOne: number; startAll: number }[] = [];
    const disagreeing = new Map<
      number,
      { native: number; one: number; all: number; nativeStatus: string; oursStatus: string; error: string | null }
    >();
    let slowEval: { item: string; ours_ms: number | null }[] = [];
    let timeoutsOurs = 0;
    let timeoutsNative = 0;
    let statusDiff = 0;
    for (let r = 0; r < args.rounds; r++) {
      log(`round ${r + 1}/${args.rounds}: native...`);
      const native = await timeNative(w, items, warmup);
      log(`  native ${fmt(native.ms)} ms; pool with 1 worker...`);
      const one = await timePool(w, items, 1, warmup);
      log(`  1 worker ${fmt(one.ms)} ms; pool with ${allWorkers} workers...`);
      const all = await timePool(w, items, allWorkers, warmup);
      log(`  ${allWorkers} workers ${fmt(all.ms)} ms`);
      rounds.push({ native, one, all, startOne: one.startMs, startAll: all.startMs });
      if (r === 0)
        slowEval = one.results.flatMap((x, i) =>
          (x.elapsedMs ?? 0) > SLOW_TAIL_MS ? [{ item: label(kept[i]!), ours_ms: x.elapsedMs }] : [],
        );
      timeoutsNative = Math.max(timeoutsNative, native.timeouts.length);
      timeoutsOurs = Math.max(
        timeoutsOurs,
        one.results.filter((x) => x.status === 'timeout').length,
        all.results.filter((x) => x.status === 'timeout').length,
      );
      let sd = 0;
      for (let i = 0; i < items.length; i++) {
        const n = native.results[i]!;
        const a = one.results[i]!;
        const b = all.results[i]!;
        if (n.status === 'timeout' || a.status === 'timeout' || b.status === 'timeout') continue;
        if (n.status !== a.status || n.status !== b.status) sd++;
        if (n.ex !== a.ex || n.ex !== b.ex) {
          disagreeing.set(i, {
            native: n.ex,
            one: a.ex,
            all: b.ex,
            nativeStatus: n.status,
            oursStatus: a.status,
            error: a.error ?? n.error,
          });
        }
      }
      statusDiff = Math.max(statusDiff, sd);
    }

    const nativeMs = median(rounds.map((x) => x.native.ms));
    const oneMs = median(rounds.map((x) => x.one.ms));
    const allMs = median(rounds.map((x) => x.all.ms));
    const ratio = (k: 'one' | 'all') => median(rounds.map((x) => x[k].ms / x.native.ms));
    const cpuRatio = (k: 'one' | 'all') => {
      const r = rounds.map((x) => x[k].cpuMs / x.native.cpuMs).filter(Number.isFinite);
      return r.length ? median(r) : NaN;
    };

    // 2b. The RL-shaped workload: many samples per question, the loop with reuse on
    // our side, every sample executing prediction and gold natively (the official approach).
    // The listed runaways (bench/runaways.ts) are left out here too, by prediction text; the slow
    // queries are in, on both sides.
    const rlAll0 = rlWorkload(args.quick ? { questions: 30, perQuestion: 8 } : { perQuestion: 64 });
    const rl = { ...rlAll0, items: rlAll0.items.filter((it) => !isRunaway(it)) };
    const rlRunaways = rlAll0.items.length - rl.items.length;
    for (const id of warmIds) rl.dbPath.set(id, w.dbPath.get(id)!);
    log(
      `RL workload: ${rl.items.length} samples (${rl.questions} questions x ${rl.perQuestion}, ${rlRunaways} runaway samples left out); native...`,
    );
    const rlNative = await timeNative(rl, rl.items, warmup);
    log(`  native ${fmt(rlNative.ms)} ms; pool with 1 worker and reuse...`);
    const rlOne = await timePool(rl, rl.items, 1, warmup, true);
    log(`  1 worker ${fmt(rlOne.ms)} ms; pool with ${allWorkers} workers and reuse...`);
    const rlAll = await timePool(rl, rl.items, allWorkers, warmup, true);
    log(`  ${allWorkers} workers ${fmt(rlAll.ms)} ms`);
    let rlDisagree = 0;
    for (let i = 0; i < rl.items.length; i++) {
      const n = rlNative.results[i]!;
      if (n.status === 'timeout' || rlOne.results[i]!.status === 'timeout' || rlAll.results[i]!.status === 'timeout')
        continue;
      if (n.ex !== rlOne.results[i]!.ex || n.ex !== rlAll.results[i]!.ex) rlDisagree++;
    }
    log('statistics on a synthetic run...');
    const st = measureStats(args.quick);

    // 2b'. Training runs: the series view's numbers, and a new step's executions.
    log('training runs: the series statistics and a new step on a series...');
    const seriesBuild = measureSeriesBuild(args.quick);
    const seriesStep = await measureSeriesStep(tmp, args.quick, allWorkers);
    if (seriesStep.keys.series_step_new_executions !== seriesStep.keys.series_step_new_sql_texts)
      log(
        `  the new step executed ${seriesStep.keys.series_step_new_executions} samples but holds ${seriesStep.keys.series_step_new_sql_texts} new SQL texts`,
      );

    // 2c. Metric ts: suite builds, and ex,ts against ex on the BIRD items (runaways left out).
    log('test suites (metric ts)...');
    const ts = await measureTs({ items, rounds: args.rounds, workers: allWorkers, quick: args.quick, log });

    // 2d. Parsing the inputs that were quadratic.
    log('parsing hostile judge answers and completions (4N against N)...');
    const parse = measureParse(args.quick);

    // 3. Opening databases in a worker.
    log('opening the BIRD databases in a worker...');
    const open = await measureDbOpen(args.quick ? 3 : 9);

    // 4. Memory of a worker holding a large database.
    const targetMiB = args.quick ? 100 : 500;
    log(`making a ~${targetMiB} MiB synthetic database...`);
    const big = makeLargeDb(tmp, 'bench_large', targetMiB * MiB);
    log(`  ${fmt(big.sizeBytes / MiB)} MiB; loading it in one worker (child process)...`);
    const probe = await probeRss(big.file);
    rmSync(path.dirname(big.file), { recursive: true, force: true });
    const dbMiB = probe.sizeBytes / MiB;

    // 4b. Memory of a worker given the hostile workload, against its budget.
    log('hostile workload in one worker (child process)...');
    const hostile = await measureHostile(tmp);

    // 5. The built app in headless Chromium (skipped, with the reason, without Chromium).
    const browserSkipped = browserBenchSkipReason();
    let browser: BrowserBench | null = null;
    if (browserSkipped) log(`browser part skipped: ${browserSkipped}`);
    else browser = await measureBrowser({ quick: args.quick, rounds: args.rounds, tmp, log });
    const gguf = browserSkipped ? null : await measureGguf({ tmp, log });

    const keys: Record<string, number> = {
      eval_items: items.length,
      eval_ratio_vs_native_1worker: ratio('one'),
      eval_ratio_vs_native_allworkers: ratio('all'),
      eval_items_per_s_allworkers: items.length / (allMs / 1000),
      eval_disagreements: disagreeing.size,
      db_open_ms_per_mib: open.msPerMiB,
      peak_worker_rss_mib_per_db_mib: (probe.peakHwmKiB - probe.baseRssKiB) / 1024 / dbMiB,
      // Context for the keys above.
      eval_items_runaway_excluded: runaway.size,
      eval_timeouts_ours: timeoutsOurs,
      eval_timeouts_native: timeoutsNative,
      eval_status_disagreements: statusDiff,
      eval_native_ms: nativeMs,
      eval_1worker_ms: oneMs,
      eval_allworkers_ms: allMs,
      eval_allworkers: allWorkers,
      eval_items_per_s_native: items.length / (nativeMs / 1000),
      eval_items_per_s_1worker: items.length / (oneMs / 1000),
      eval_cpu_ratio_vs_native_1worker: cpuRatio('one'),
      eval_cpu_ratio_vs_native_allworkers: cpuRatio('all'),
      worker_start_ms_1worker: median(rounds.map((x) => x.startOne)),
      large_db_mib: dbMiB,
      large_db_open_ms_per_mib: probe.openMs / dbMiB,
      large_db_steady_rss_mib_per_db_mib: (probe.afterRssKiB - probe.baseRssKiB) / 1024 / dbMiB,
      rl_eval_items: rl.items.length,
      rl_items_runaway_excluded: rlRunaways,
      rl_eval_ratio_vs_native_1worker: rlOne.ms / rlNative.ms,
      rl_eval_ratio_vs_native_allworkers: rlAll.ms / rlNative.ms,
      rl_pred_executions: rlOne.executed,
      rl_gold_executions: rlOne.goldExecuted,
      rl_disagreements: rlDisagree,
      rl_native_ms: rlNative.ms,
      rl_1worker_ms: rlOne.ms,
      rl_allworkers_ms: rlAll.ms,
      rl_allworkers_pred_executions: rlAll.executed,
      rl_allworkers_gold_executions: rlAll.goldExecuted,
      stats_ms_per_100k_samples: st.statsMsPer100k,
      compare_ms_per_100k_samples: st.compareMsPer100k,
      stats_bench_samples: st.samples,
      series_build_ms_per_100k_samples: seriesBuild.msPer100k,
      series_build_cpu_ms_per_100k_samples: seriesBuild.cpuMsPer100k,
      series_build_samples: seriesBuild.samples,
      ...seriesStep.keys,
      ...ts.keys,
      ...hostile,
      ...parse.keys,
      ...browser?.keys,
      ...gguf?.keys,
      // Other processes on the machine slow every side: the 1-minute load average, start and end.
      machine_loadavg_start: load0[0]!,
      machine_loadavg_end: loadavg()[0]!,
    };
    const required: readonly string[] = browser ? IMPLEMENTED_KEYS : NODE_KEYS;
    for (const k of required)
      if (!Number.isFinite(keys[k])) throw new Error(`key ${k} is not a finite number: ${keys[k]}`);

    // Table.
    const extra: [string, string, string, string][] = [];
    if (browserSkipped)
      for (const k of BROWSER_KEYS) extra.push([k, 'skipped', TARGETS[k]?.text ?? '', browserSkipped]);
    for (const [k, why] of Object.entries(gguf?.absent ?? {})) extra.push([k, 'absent', '', why]);
    printTable(keys, extra);
    if (disagreeing.size > 0) {
      process.stdout.write(`\nEX disagreements (native vs ours):\n`);
      for (const [i, d] of disagreeing)
        process.stdout.write(`  ${label(kept[i]!)}: native ${d.native}, ours ${d.one}/${d.all} (${d.error ?? ''})\n`);
    }

    if (args.out) {
      const json = {
        ...keys,
        ...(browserSkipped ? { skipped: { keys: [...BROWSER_KEYS], reason: browserSkipped } } : {}),
        ...(gguf && Object.keys(gguf.absent).length > 0 ? { absent: gguf.absent } : {}),
        meta: {
          command: `npm run bench --${args.quick ? ' --quick' : ''}${args.rounds !== (args.quick ? 1 : 3) ? ` --rounds ${args.rounds}` : ''} --out FILE`,
          started: started.toISOString(),
          node: process.version,
          cpu: cpus()[0]?.model ?? 'unknown',
          cores: allWorkers,
          loadavg_start: load0,
          loadavg_end: loadavg(),
          workload: {
            bird_prediction_files: w.birdFiles.map((f) => path.basename(f)),
            bird_items: w.birdItems,
            spider_items: w.spiderItems,
            runaway_excluded: [...runaway].map((i) => ({ item: label(i), pred: w.items[i]!.predSql.slice(0, 300) })),
            runaway_rule: { list: RUNAWAYS, note: 'a fixed list (bench/runaways.ts), never a time threshold' },
          },
          item_timeout_ms: ITEM_TIMEOUT_MS,
          // Items over SLOW_TAIL_MS on our side with 1 worker (first round): timed with the rest, reported apart.
          slow_tail: {
            ms: SLOW_TAIL_MS,
            eval: slowEval,
            rl: rlOne.results.filter((r) => (r.elapsedMs ?? 0) > SLOW_TAIL_MS).length,
          },
          rounds: rounds.map((x) => ({
            native_ms: x.native.ms,
            one_worker_ms: x.one.ms,
            all_workers_ms: x.all.ms,
            native_cpu_ms: x.native.cpuMs,
            one_worker_cpu_ms: x.one.cpuMs,
            all_workers_cpu_ms: x.all.cpuMs,
            start_one_ms: x.startOne,
            start_all_ms: x.startAll,
          })),
          db_open: open.perDb,
          rss_probe: probe,
          disagreements: [...disagreeing].map(([i, d]) => ({ item: label(kept[i]!), ...d })),
          browser: browser?.meta ?? null,
        },
      };
      writeFileSync(args.out, JSON.stringify(json, null, 1) + '\n');
      log(`wrote ${args.out}`);
    }
  } finally {
    cleanup();
  }
}

await main();
