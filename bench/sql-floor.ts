/**
 * The floor of `cli_eval_file_ratio_vs_python` with sql.js: how long the SQL of each mini-dev
 * file takes sql.js itself, warm, against native SQLite, both in this process on one thread
 * (CPU time, so the figure holds on a loaded machine too). sql.js runs through the SQL worker's
 * own engine (workers/sql-engine.ts: Python's statement rules, fingerprints, the comparison),
 * so the figure is what a worker does for the file minus starting, messaging and JIT warm-up;
 * native runs through the bench's native reference (bench/native.ts: better-sqlite3, the same
 * rules and comparison). Whatever else the CLI removes, a file cannot take less than its sql.js
 * time split over the two workers.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import initSqlJs from 'sql.js';
import { parseGoldSql } from '../src/core/formats/gold.ts';
import { parseQuestions } from '../src/core/formats/questions.ts';
import { planReplay } from '../src/core/run/replay.ts';
import type { EvalItem } from '../src/core/types.ts';
import { createSqlEngine } from '../workers/sql-engine.ts';
import { BIRD_DB_ROOT, SHARED } from './items.ts';
import { NativeEvaluator } from './native.ts';

export interface FileFloor {
  file: string;
  items: number;
  /** sql.js (the worker's engine), warm, one thread: CPU time of this process. */
  sqljsMs: number;
  /** better-sqlite3 through the native reference, one thread: CPU time of this process. */
  nativeMs: number;
}

/** CPU time of this process (one thread does the work: the figure holds on a loaded machine too). */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const dbFile = (dbId: string) => path.join(BIRD_DB_ROOT, dbId, `${dbId}.sqlite`);

/** Each file's items whose database is here, as the CLI pairs them. */
function fileItems(files: readonly string[]): Array<{ file: string; items: EvalItem[] }> {
  const text = (f: string) => readFileSync(f, 'utf8');
  const gold = parseGoldSql(text(path.join(SHARED, 'bird', 'minidev', 'mini_dev_sqlite_gold.sql')), 'gold.sql');
  const questions = parseQuestions(text(path.join(SHARED, 'bird', 'minidev', 'mini_dev_sqlite.json')), 'q.json');
  return files.map((file) => ({
    file: path.basename(file),
    items: planReplay({ predictions: { name: path.basename(file), text: text(file) }, gold, questions }).items.filter(
      (it) => existsSync(dbFile(it.dbId)),
    ),
  }));
}

export interface SqlFloor {
  files: FileFloor[];
  /**
   * The first file in sql.js in a fresh engine, before anything was optimised: what V8's
   * compilation costs a process that starts cold (the CLI's workers pay it at every run), next
   * to `files[0].sqljsMs`, the same file warm. Opening the databases (CPU) is apart.
   */
  cold: { file: string; sqljsMs: number; openMs: number };
}

export async function measureSqlFloor(files: readonly string[]): Promise<SqlFloor> {
  const perFile = fileItems(files);
  const open0 = cpuMs();
  const engine = createSqlEngine(() => initSqlJs());
  await engine.init({ cacheBytes: 512 * 1024 * 1024 });
  const bytes = new Map<string, Buffer>();
  const load = (dbId: string) => {
    if (!bytes.has(dbId)) bytes.set(dbId, readFileSync(dbFile(dbId)));
    // The engine takes the bytes it is given (a copy, as the pool transfers one).
    return engine.loadDb(dbId, new Uint8Array(bytes.get(dbId)!));
  };
  for (const dbId of new Set(perFile.flatMap((f) => f.items.map((it) => it.dbId)))) await load(dbId);
  const openMs = cpuMs() - open0;
  const sqljs = async (items: readonly EvalItem[]) => {
    let ms = 0;
    for (const it of items) {
      const request = {
        dbId: it.dbId,
        predSql: it.predSql,
        goldSql: it.goldSql,
        readOnly: false,
        softF1: true,
        previewRows: 0,
        // Each item runs its gold, as in a run of one file (a question appears once in it).
        reuseGold: false,
      };
      let t0 = cpuMs();
      const r = await engine.evaluate(request);
      ms += cpuMs() - t0;
      // A database the engine let go after a write is opened again, as the pool does (timed: a
      // worker opens it again too).
      if (r.kind === 'need-db') {
        t0 = cpuMs();
        await load(it.dbId);
        await engine.evaluate(request);
        ms += cpuMs() - t0;
      }
    }
    return ms;
  };
  const native = new NativeEvaluator((dbId) => readFileSync(dbFile(dbId)), true);
  const nativeMs = (items: readonly EvalItem[]) => {
    const t0 = cpuMs();
    for (const it of items) native.evaluate(it);
    return cpuMs() - t0;
  };
  // Warm: the first file once on each side before the files are timed (V8 optimises sql.js's hot code).
  const cold = { file: perFile[0]!.file, sqljsMs: await sqljs(perFile[0]!.items), openMs };
  nativeMs(perFile[0]!.items);
  const out: FileFloor[] = [];
  for (const { file, items } of perFile) {
    out.push({ file, items: items.length, sqljsMs: await sqljs(items), nativeMs: nativeMs(items) });
  }
  return { files: out, cold };
}
