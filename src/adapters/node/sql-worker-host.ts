/** Node composition: the SQL worker in worker_threads, and database files from a folder. */
import { wrap } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { access, open, readdir, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SqlWorkerApi } from '../../../workers/sql.api.ts';
import { SqlPool, type DbSource, type WorkerHandle } from '../sql-pool.ts';
import { sqlWorkerScript, type SqlEngineName } from './worker-entry.ts';
import { JOURNAL_MAGIC_BYTES, journalProblem, walProblem } from '../sqlite-sidecars.ts';
import { WorkbenchError } from '../../core/errors.ts';
import type { DescriptionFile } from '../../core/prompt/schema-source.ts';

/**
 * The largest database file read here: Node reads at most 2 GiB - 1 byte into one buffer
 * (fs.readFile), and a worker holds the whole database in memory.
 */
export const MAX_DB_FILE_BYTES = 2 ** 31 - 1;

export function spawnNodeSqlWorker(engine: SqlEngineName = 'sql.js'): WorkerHandle {
  const script = sqlWorkerScript(engine);
  const worker = new Worker(script.url, { workerData: script.workerData });
  const exited = new Promise<string>((resolve) => {
    worker.once('error', (err) => resolve(err.message));
    worker.once('exit', (code) => resolve(`worker exited with code ${code}`));
  });
  return {
    api: wrap<SqlWorkerApi>(nodeEndpoint(worker)),
    terminate: () => void worker.terminate(),
    exited,
  };
}

/**
 * Why `dbId` cannot name a folder inside the root, or null. A db_id comes from the gold or
 * questions file: one with a path separator, `..` or a drive would read a `.sqlite` outside
 * the root, so it is refused.
 */
export function unsafeDbId(dbId: string): string | null {
  // eslint-disable-next-line no-control-regex -- NUL in a db_id is exactly what is refused
  if (dbId !== '' && dbId !== '.' && dbId !== '..' && !/[/\\:\u0000]/.test(dbId) && !path.isAbsolute(dbId)) return null;
  return (
    `db_id ${JSON.stringify(dbId)} is not a plain folder name (it is empty, "." or "..", or holds a path separator, ":" or NUL), ` +
    'so its database could lie outside the database folder: nothing was read for it. Fix that db_id in the gold or questions file'
  );
}

async function sidecarProblems(file: string): Promise<string | null> {
  const then = 'run again';
  const wal = await stat(`${file}-wal`).catch(() => null);
  const walMsg = wal?.isFile() ? walProblem(file, wal.size, then) : null;
  if (walMsg) return walMsg;
  const journal = await stat(`${file}-journal`).catch(() => null);
  if (!journal?.isFile() || journal.size < JOURNAL_MAGIC_BYTES) return null;
  const fh = await open(`${file}-journal`, 'r');
  try {
    const head = new Uint8Array(JOURNAL_MAGIC_BYTES);
    await fh.read(head, 0, head.length, 0);
    return journalProblem(file, journal.size, head, then);
  } finally {
    await fh.close();
  }
}

const gib = (n: number) => `${(n / 2 ** 30).toFixed(2)} GiB`;

/**
 * BIRD's layout: the database of db_id is `<root>/<db_id>/<db_id>.sqlite`. A db_id that is not
 * a plain folder name is reported by `has` as present so that `load` fails its items with the
 * reason (an error naming the db_id, never a file outside the root).
 */
export function folderDbSource(root: string): DbSource {
  const file = (dbId: string) => path.join(root, dbId, `${dbId}.sqlite`);
  return {
    async has(dbId) {
      if (unsafeDbId(dbId)) return true;
      return access(file(dbId)).then(
        () => true,
        () => false,
      );
    },
    async load(dbId) {
      const unsafe = unsafeDbId(dbId);
      if (unsafe) throw new WorkbenchError('REFUSED', unsafe);
      const f = file(dbId);
      const { size } = await stat(f);
      if (size > MAX_DB_FILE_BYTES) {
        throw new WorkbenchError(
          'REFUSED',
          `database ${dbId}: ${f} is ${gib(size)} (${size.toLocaleString('en-US')} bytes), more than the ${gib(MAX_DB_FILE_BYTES + 1)} ` +
            'a database may have here (a worker holds the whole file in memory, and Node reads at most 2 GiB into one buffer): ' +
            'evaluate on a smaller copy (e.g. VACUUM INTO a copy without the tables its questions do not read)',
        );
      }
      const problem = await sidecarProblems(f);
      if (problem) throw new WorkbenchError('BAD_DATABASE', problem, `database ${dbId}`);
      return new Uint8Array(await readFile(f));
    },
    describe: (dbId) => unsafeDbId(dbId) ?? file(dbId),
  };
}

let compiledSqlJs: Promise<WebAssembly.Module> | null = null;

/**
 * sql.js's WebAssembly (sql-wasm.wasm beside the sql.js that workers/sql.worker.ts imports),
 * compiled once per process and handed to every SQL worker (WorkerInit.wasmModule): the
 * workers, and a worker started again after a timeout, share its machine code and V8's
 * optimisation of the hot functions instead of compiling and optimising it each.
 */
export function sqlJsWasmModule(): Promise<WebAssembly.Module> {
  compiledSqlJs ??= readFile(createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm')).then((bytes) =>
    WebAssembly.compile(bytes),
  );
  return compiledSqlJs;
}

/** A pool of SQL workers on the databases under `dbRoot`; `engine: 'legacy'`: sql.js 1.8.0 (the version check). */
export function createNodeSqlPool(options: {
  dbRoot: string;
  workers?: number;
  cacheBytes?: number;
  engine?: SqlEngineName;
}): SqlPool {
  return new SqlPool({
    spawn: () => spawnNodeSqlWorker(options.engine),
    dbSource: folderDbSource(options.dbRoot),
    size: options.workers ?? availableParallelism(),
    cacheBytes: options.cacheBytes,
    // Only the sql.js of sql.worker.ts takes the compiled module: legacy (sql.js 1.8.0) compiles its own.
    ...((options.engine ?? 'sql.js') === 'sql.js' ? { wasmModule: sqlJsWasmModule } : {}),
  });
}

/** BIRD's column descriptions of a database: `<root>/<db_id>/database_description/*.csv` by name, or null without that folder. */
export async function folderDescriptionFiles(root: string, dbId: string): Promise<DescriptionFile[] | null> {
  const dir = path.join(root, dbId, 'database_description');
  const present = await access(dir).then(
    () => true,
    () => false,
  );
  if (!present) return null;
  const names = (await readdir(dir)).filter((f) => f.toLowerCase().endsWith('.csv')).sort();
  return Promise.all(
    names.map(async (name) => ({ name, bytes: new Uint8Array(await readFile(path.join(dir, name))) })),
  );
}
