/**
 * `npm run bench -- --only cli`: the CLI end to end against the official
 * approach, each side a real process started as a user would start it:
 * - ours: `node dist-cli/cli.mjs eval ...` (the bundle that `npm install` builds);
 * - the reference: bench/python_reference.py, what BIRD mini-dev's evaluation_ex.py does (one
 *   `sqlite3` connection per item, a process pool of 2, 30 s per item).
 * Keys:
 * - cli_start_ms: median wall time of `cli --help` (10 runs after 2 warm-ups);
 * - cli_eval_file_ratio_vs_python: per mini-dev file, one invocation of each (the order of the two
 *   alternating from file to file), ours / the reference; the median over the 13 files. The slow
 *   tail (files with an item over 5 s) is reported apart, never left out;
 * - cli_eval_file_floor_ratio_sqljs: the floor of the key above with sql.js, per file its SQL in
 *   sql.js itself (warm, in this process) over 2 workers / the reference (bench/sql-floor.ts);
 * - cli_eval_13files_ratio_vs_python: ours in one invocation of the 13 files (`--predictions`
 *   13 times, `--out-dir`) over the reference looped over them (the sum of its 13 runs above);
 * - cache_reeval_ratio: the 13 files in one invocation again with the verdict cache filled by the
 *   first (a fresh `--cache` folder), second / first; the same for one file is reported apart.
 * No verdict cache is used except in the cache key (`--no-cache`), so no run flatters another.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildCli } from '../scripts/build-cli.mjs';
import { median } from './browser.ts';
import { BIRD_DB_ROOT, REPO_ROOT, SHARED, birdPredictionFiles } from './items.ts';
import { measureSqlFloor } from './sql-floor.ts';

const CLI = path.join(REPO_ROOT, 'dist-cli', 'cli.mjs');
const PY = path.join(REPO_ROOT, 'bench', 'python_reference.py');
const GOLD = path.join(SHARED, 'bird', 'minidev', 'mini_dev_sqlite_gold.sql');
const QUESTIONS = path.join(SHARED, 'bird', 'minidev', 'mini_dev_sqlite.json');
const COMMON = ['--gold', GOLD, '--dataset', QUESTIONS, '--db-root', BIRD_DB_ROOT];
const SLOW_ITEM_MS = 5000;

/** Wall time of one process, which must exit 0. */
function timed(cmd: string, args: string[]): { ms: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - t0;
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.slice(0, 3).join(' ')} ... exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return { ms, stdout: r.stdout };
}

const ours = (args: string[]) => timed(process.execPath, [CLI, 'eval', ...COMMON, ...args]);
const python = (files: string[]) =>
  timed('python3', [PY, ...files.flatMap((f) => ['--predictions', f]), ...COMMON, '--num-cpus', '2']);

type Item = { status: string; elapsed_ms: number | null };
const reportItems = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { items: Item[] }).items;

export interface CliBench {
  keys: Record<string, number>;
  details: Record<string, unknown>;
}

export async function measureCli(log: (m: string) => void, groups: ReadonlySet<string>): Promise<CliBench> {
  const keys: Record<string, number> = {};
  const details: Record<string, unknown> = {};
  const tmp = mkdtempSync(path.join(tmpdir(), 'wb-cli-bench-'));
  log('building dist-cli/ ...');
  await buildCli();
  const files = birdPredictionFiles();

  if (groups.has('cli')) {
    for (let i = 0; i < 2; i++) timed(process.execPath, [CLI, '--help']);
    const starts = Array.from({ length: 10 }, () => timed(process.execPath, [CLI, '--help']).ms);
    keys.cli_start_ms = median(starts);
    log(`cli --help: median ${keys.cli_start_ms.toFixed(0)} ms`);

    const perFile: {
      file: string;
      oursMs: number;
      pythonMs: number;
      ratio: number;
      slowItems: number;
    }[] = [];
    for (const [i, f] of files.entries()) {
      const out = path.join(tmp, `one-${i}.json`);
      const run = () => ours(['--predictions', f, '--no-cache', '--out', out]).ms;
      let oursMs: number;
      let pythonMs: number;
      if (i % 2 === 0) {
        oursMs = run();
        pythonMs = python([f]).ms;
      } else {
        pythonMs = python([f]).ms;
        oursMs = run();
      }
      const slowItems = reportItems(out).filter(
        (it) => it.status === 'timeout' || (it.elapsed_ms ?? 0) > SLOW_ITEM_MS,
      ).length;
      perFile.push({ file: path.basename(f), oursMs, pythonMs, ratio: oursMs / pythonMs, slowItems });
      log(
        `  ${path.basename(f)}: ours ${oursMs.toFixed(0)} ms, python ${pythonMs.toFixed(0)} ms (${(oursMs / pythonMs).toFixed(2)})${slowItems ? `, ${slowItems} item(s) over 5 s` : ''}`,
      );
    }
    keys.cli_eval_file_ratio_vs_python = median(perFile.map((p) => p.ratio));
    const fast = perFile.filter((p) => p.slowItems === 0);
    const slow = perFile.filter((p) => p.slowItems > 0);
    details.cli_eval_files = perFile;
    details.slow_tail = {
      rule: `files with an item over ${SLOW_ITEM_MS / 1000} s (or timed out) on our side; counted in the keys, reported apart here`,
      files: slow.map((p) => p.file),
      median_ratio_slow_files: slow.length ? median(slow.map((p) => p.ratio)) : null,
      median_ratio_other_files: fast.length ? median(fast.map((p) => p.ratio)) : null,
    };

    // The floor with sql.js: each file's SQL in sql.js itself, warm, split over the 2 workers, as
    // if starting, messaging, warm-up and everything else cost nothing (bench/sql-floor.ts).
    log('the floor: each file in sql.js and in native SQLite, in this process...');
    const { files: floors, cold } = await measureSqlFloor(files);
    const pythonOf = new Map(perFile.map((p) => [p.file, p.pythonMs]));
    keys.cli_eval_file_floor_ratio_sqljs = median(floors.map((f) => f.sqljsMs / 2 / pythonOf.get(f.file)!));
    details.sql_floor = {
      rule: 'per file: the SQL in sql.js (the worker engine, warm, one thread) / 2 workers / the reference; the same for native SQLite',
      files: floors.map((f) => ({
        ...f,
        sqljs_over_native: f.sqljsMs / f.nativeMs,
        floor_ratio_sqljs: f.sqljsMs / 2 / pythonOf.get(f.file)!,
        floor_ratio_native: f.nativeMs / 2 / pythonOf.get(f.file)!,
      })),
      median_sqljs_over_native: median(floors.map((f) => f.sqljsMs / f.nativeMs)),
      median_floor_ratio_native: median(floors.map((f) => f.nativeMs / 2 / pythonOf.get(f.file)!)),
      // What a fresh process pays on top: the first file before V8 optimised sql.js, and opening the databases.
      cold_first_file: { ...cold, warm_ms: floors[0]!.sqljsMs },
    };
    log(
      `  floor of cli_eval_file_ratio_vs_python with sql.js: ${keys.cli_eval_file_floor_ratio_sqljs.toFixed(2)} (sql.js / native SQLite on the same SQL: median ${median(floors.map((f) => f.sqljsMs / f.nativeMs)).toFixed(2)})`,
    );

    const pythonLooped = perFile.reduce((s, p) => s + p.pythonMs, 0);
    const all = files.flatMap((f) => ['--predictions', f]);
    const d13 = mkdtempSync(path.join(tmp, 'd13-'));
    const many = ours([...all, '--no-cache', '--out-dir', d13]).ms;
    keys.cli_eval_13files_ratio_vs_python = many / pythonLooped;
    details.cli_eval_13files = { ours_one_invocation_ms: many, python_looped_ms: pythonLooped, out_dir: d13 };
    log(`13 files: ours one invocation ${many.toFixed(0)} ms, python looped ${pythonLooped.toFixed(0)} ms`);

    const cache = mkdtempSync(path.join(tmp, 'cache-'));
    const first = ours([...all, '--cache', cache, '--out-dir', mkdtempSync(path.join(tmp, 'c1-'))]).ms;
    const second = ours([...all, '--cache', cache, '--out-dir', mkdtempSync(path.join(tmp, 'c2-'))]).ms;
    keys.cache_reeval_ratio = second / first;
    const cache1 = mkdtempSync(path.join(tmp, 'cache1-'));
    const typical = files[1]!;
    const one1 = ours(['--predictions', typical, '--cache', cache1]).ms;
    const one2 = ours(['--predictions', typical, '--cache', cache1]).ms;
    details.cache_reeval = {
      files13_first_ms: first,
      files13_second_ms: second,
      one_file: { file: path.basename(typical), first_ms: one1, second_ms: one2, ratio: one2 / one1 },
    };
    log(
      `cache: 13 files ${first.toFixed(0)} -> ${second.toFixed(0)} ms; one file ${one1.toFixed(0)} -> ${one2.toFixed(0)} ms`,
    );
  }
  return { keys, details };
}
