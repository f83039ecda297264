/** Node composition: the SQL worker in worker_threads, and database files from a folder. */
import { wrap } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { createHash } from 'node:crypto';
import type { Sha256 } from '../../core/util/sha256.ts';
import { constants as fsConstants, type Stats } from 'node:fs';
import { access, lstat, open, readdir, readFile, readlink, stat, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SqlWorkerApi } from '../../../workers/sql.api.ts';
import { SqlPool, type WorkerHandle } from '../sql-pool.ts';
import type { DbSource, LoadedDb, PagedDb } from '../../app/ports.ts';
import { sqlWorkerScript, type SqlEngineName } from './worker-entry.ts';
import { JOURNAL_MAGIC_BYTES, journalProblem, walProblem } from '../sqlite-sidecars.ts';
import { WorkbenchError } from '../../core/errors.ts';
import type { DescriptionFile } from '../../core/prompt/schema-source.ts';

/**
 * The largest database file read whole here (`load`): Node reads at most 2 GiB - 1 byte into one
 * buffer (fs.readFile). The product's SQL workers and its schema reader open a file by pages
 * (`openPaged`), without this bound; `load` serves sources and tests that give a worker bytes.
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

/** How long reading one database file may take before its items fail naming it (a stuck disk, a network share). */
const DB_READ_LIMIT_MS = 60_000;
const READ_CHUNK_BYTES = 8 * 1024 * 1024;

/** What a file that is not a regular file is, in words. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

const fixIt = (dbId: string) =>
  `put the SQLite file of ${dbId} there (a symbolic link to one is fine), or leave its items out`;

/**
 * Why `file`, where the database `dbId` should be, cannot be read as a database file, or null
 * when it is a regular readable file (a symbolic link to one, inside or outside the root, is
 * followed) or is not there at all. Only stat and access: nothing is opened.
 */
async function dbFileProblem(dbId: string, file: string): Promise<string | null> {
  const link = await lstat(file).catch(() => null);
  if (!link) return null;
  let st: Stats;
  try {
    st = await stat(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (link.isSymbolicLink()) {
      const target = await readlink(file).catch(() => '?');
      const what = code === 'ENOENT' ? 'which does not exist (a dangling link)' : `which cannot be followed (${code})`;
      return `database ${dbId}: ${file} is a symbolic link to ${JSON.stringify(target)}, ${what}: its items are not scored; ${fixIt(dbId)}`;
    }
    return `database ${dbId}: ${file} cannot be examined (${code}): its items are not scored; ${fixIt(dbId)}`;
  }
  if (!st.isFile()) {
    return `database ${dbId}: ${file} is ${kindOf(st)}, not a database file, so it is not read: its items are not scored; ${fixIt(dbId)}`;
  }
  const readable = await access(file, fsConstants.R_OK).then(
    () => true,
    () => false,
  );
  if (!readable)
    return `database ${dbId}: ${file} cannot be read (no read permission): its items are not scored; give read permission (chmod +r) or leave its items out`;
  return null;
}

/**
 * Opens `file` for reading without ever blocking on what is not a regular file (O_NONBLOCK: a
 * FIFO swapped in after a stat opens at once and is refused here, never waited on) and checks
 * that what was opened is a regular file.
 */
async function openRegular(file: string, what: string): Promise<{ fh: FileHandle; st: Stats }> {
  const fh = await open(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new WorkbenchError('BAD_DATABASE', `${file} is ${kindOf(st)}, not a database file`, what);
    return { fh, st };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/**
 * Reads `file` through its handle in chunks, at most the size stat gave it when opened: it fails
 * when the file ends before that (it shrank) or holds more (it grew), or when its size or mtime
 * changed while it was read, so what comes back is one version of the file. `each` sees every chunk.
 */
async function readBounded(
  fh: FileHandle,
  st: Stats,
  file: string,
  what: string,
  each: (chunk: Uint8Array) => void,
  into?: Uint8Array,
): Promise<void> {
  const changed = (how: string) =>
    new WorkbenchError(
      'BAD_DATABASE',
      `${file} changed while it was read (${how}): run again once nothing writes to it`,
      what,
    );
  const size = st.size;
  const scratch = into ? null : new Uint8Array(Math.min(READ_CHUNK_BYTES, Math.max(size, 1)));
  let at = 0;
  while (at < size) {
    const n = Math.min(READ_CHUNK_BYTES, size - at);
    const buf = into ? into.subarray(at, at + n) : scratch!.subarray(0, n);
    const { bytesRead } = await fh.read(buf, 0, n, at);
    if (bytesRead === 0)
      throw changed(`it ended at byte ${at.toLocaleString('en-US')} of ${size.toLocaleString('en-US')}`);
    each(buf.subarray(0, bytesRead));
    at += bytesRead;
  }
  const { bytesRead: more } = await fh.read(new Uint8Array(1), 0, 1, size);
  if (more > 0) throw changed(`it grew past ${size.toLocaleString('en-US')} bytes`);
  const after = await fh.stat();
  if (after.size !== size || after.mtimeMs !== st.mtimeMs) throw changed('its size or modification time changed');
}

/** Fails with a message naming `file` when `work` takes longer than `limitMs`. */
async function within<T>(work: Promise<T>, limitMs: number, file: string, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new WorkbenchError(
            'FAILED',
            `reading ${file} took longer than ${Math.round(limitMs / 1000)} s: copy it to a local disk and run again`,
            what,
          ),
        ),
      limitMs,
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

function tooLarge(dbId: string, f: string, size: number): WorkbenchError {
  return new WorkbenchError(
    'REFUSED',
    `database ${dbId}: ${f} is ${gib(size)} (${size.toLocaleString('en-US')} bytes), more than the ${gib(MAX_DB_FILE_BYTES + 1)} ` +
      'a database may have here (a worker holds the whole file in memory, and Node reads at most 2 GiB into one buffer): ' +
      'evaluate on a smaller copy (e.g. VACUUM INTO a copy without the tables its questions do not read)',
  );
}

/**
 * The bytes of the database file `f` and their sha256, hashed as they are read (exactly the
 * bytes returned): refused when it is not a regular readable file, larger than
 * MAX_DB_FILE_BYTES, has a `-wal` with committed frames or a hot journal, changes while it is
 * read, or takes longer than `limitMs` to read.
 */
async function readDbFile(dbId: string, f: string, limitMs = DB_READ_LIMIT_MS): Promise<LoadedDb> {
  const what = `database ${dbId}`;
  const problem = await dbFileProblem(dbId, f);
  if (problem) throw new WorkbenchError('BAD_DATABASE', problem);
  const read = async (): Promise<LoadedDb> => {
    const { fh, st } = await openRegular(f, what);
    try {
      if (st.size > MAX_DB_FILE_BYTES) throw tooLarge(dbId, f, st.size);
      const sidecars = await sidecarProblems(f);
      if (sidecars) throw new WorkbenchError('BAD_DATABASE', sidecars, what);
      const bytes = new Uint8Array(st.size);
      const hash: Sha256 = createHash('sha256');
      await readBounded(fh, st, f, what, (chunk) => hash.update(chunk), bytes);
      return { bytes, sha256: hash.digest('hex') };
    } finally {
      await fh.close();
    }
  };
  return within(read(), limitMs, f, what);
}

/** sha256 of database files by identity and version (device, inode, size, times): hashed once per process. */
const hashedFiles = new Map<string, string>();
const fileVersion = (st: Stats) => `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

/** The sha256 of an opened file, streamed (a chunk at a time), or the one already computed for this version of it. */
async function sha256Of(fh: FileHandle, st: Stats, f: string, what: string): Promise<string> {
  const known = hashedFiles.get(fileVersion(st));
  if (known) return known;
  const hash: Sha256 = createHash('sha256');
  await readBounded(fh, st, f, what, (chunk) => hash.update(chunk));
  const sha = hash.digest('hex');
  hashedFiles.set(fileVersion(st), sha);
  return sha;
}

/**
 * The database file `f` as a reference a worker reads by pages (workers/paged-file.ts), with
 * its sha256: refused as `readDbFile` refuses it (not a regular readable file, a `-wal` with
 * committed frames or a hot journal, changed while it is hashed, too slow), never read whole
 * into memory; hashed once per version of the file in this process.
 */
async function pagedDbFile(dbId: string, f: string, limitMs = DB_READ_LIMIT_MS): Promise<PagedDb> {
  const what = `database ${dbId}`;
  const problem = await dbFileProblem(dbId, f);
  if (problem) throw new WorkbenchError('BAD_DATABASE', problem);
  const opened = async (): Promise<PagedDb> => {
    const { fh, st } = await openRegular(f, what);
    try {
      const sidecars = await sidecarProblems(f);
      if (sidecars) throw new WorkbenchError('BAD_DATABASE', sidecars, what);
      const sha256 = await sha256Of(fh, st, f, what);
      return { ref: { kind: 'file', path: f, size: st.size, mtimeMs: st.mtimeMs }, sha256 };
    } finally {
      await fh.close();
    }
  };
  return within(opened(), limitMs, f, what);
}

/**
 * The sha256 of the database file `f` as it is now, streamed (never held whole in memory), or
 * null when its bytes would not be read alone or at all: not a regular readable file, a `-wal`
 * with committed frames or a hot journal beside it, changed while hashed, or slower than
 * `limitMs`. The verdict cache looks a database's verdicts up under it (eval-cache.ts).
 */
export async function dbFileSha256(dbId: string, f: string, limitMs = DB_READ_LIMIT_MS): Promise<string | null> {
  if (unsafeDbId(dbId) || (await dbFileProblem(dbId, f)) !== null) return null;
  const what = `database ${dbId}`;
  const hashed = async (): Promise<string | null> => {
    const { fh, st } = await openRegular(f, what);
    try {
      if ((await sidecarProblems(f)) !== null) return null;
      return await sha256Of(fh, st, f, what);
    } finally {
      await fh.close();
    }
  };
  return within(hashed(), limitMs, f, what).catch(() => null);
}

/**
 * BIRD's layout: the database of db_id is `<root>/<db_id>/<db_id>.sqlite`. A db_id that is not
 * a plain folder name is reported by `has` as present so that `load` fails its items with the
 * reason (an error naming the db_id, never a file outside the root). Something there that is not
 * a regular readable file (a directory, a FIFO, a device, a socket, a dangling link) is
 * `unusable`: its items are not scored, and it is never opened.
 */
export function folderDbSource(root: string, options: { readLimitMs?: number } = {}): DbSource {
  const file = (dbId: string) => path.join(root, dbId, `${dbId}.sqlite`);
  return {
    async has(dbId) {
      if (unsafeDbId(dbId)) return true;
      // lstat: a dangling link is there (and `unusable` says what it is).
      return lstat(file(dbId)).then(
        () => true,
        () => false,
      );
    },
    async unusable(dbId) {
      return unsafeDbId(dbId) ? null : dbFileProblem(dbId, file(dbId));
    },
    async load(dbId) {
      const unsafe = unsafeDbId(dbId);
      if (unsafe) throw new WorkbenchError('REFUSED', unsafe);
      return readDbFile(dbId, file(dbId), options.readLimitMs);
    },
    async openPaged(dbId) {
      const unsafe = unsafeDbId(dbId);
      if (unsafe) throw new WorkbenchError('REFUSED', unsafe);
      return pagedDbFile(dbId, file(dbId), options.readLimitMs);
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
    // Both generations' workers (sql.worker.ts, and sql-legacy.worker.ts on sql.js 1.8.0) read each database by pages from its file.
    paged: true,
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
