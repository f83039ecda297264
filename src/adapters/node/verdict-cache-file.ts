/**
 * The CLI's verdict cache (src/core/run/verdict-cache.ts) in an SQLite file of a cache folder:
 * `<dir>/verdicts-v2.sqlite`, default folder `$XDG_CACHE_HOME/rlvr-workbench` or
 * `~/.cache/rlvr-workbench`, beside its key `<dir>/verdicts-v2.key`.
 *
 * - Indexed: one row per entry, keyed by the sha256 of its key text (the key holds the gold and
 *   prediction SQL; the text itself is not stored), so a lookup reads only its rows, whatever
 *   the size of the cache.
 * - Authenticated: each row carries an HMAC-SHA256, under a random 32-byte key created once in
 *   the folder (mode 0600), of its kind, its key text and its JSON. A row whose MAC does not
 *   check (edited, written under another key) is a miss, never trusted; how many there were is
 *   said in a warning at the end of the run, and they are deleted. A key file that is not a
 *   regular file of ours, or that group or others may read, is refused: the run caches nothing.
 * - Bounded in entries (200,000) and in bytes (64 MiB counted as each row's JSON plus
 *   ROW_OVERHEAD): past either, the least recently used rows go first (index on last use).
 * - Two runs at once: SQLite's locking, each write one transaction, a busy timeout; a write that
 *   still fails costs later executions, never the run (cachingExecutor).
 * - Nothing is kept by path, size or modification time: a database's sha256 is hashed from its
 *   bytes every run by the caller (`dbFileSha256`, src/adapters/node/sql-worker-host.ts).
 *
 * The version-1 file (`verdicts-v1.json`) is neither read nor touched (docs/cli-speed.md).
 * A file at the store's path that is not a verdict cache of this program (another program's,
 * a link, a newer version) is left as it is and the run caches nothing.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  lstatSync,
  openSync,
  readSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import { validFacts, validVerdict, type CachedFacts, type VerdictStore } from '../../core/run/verdict-cache.ts';
import { WorkbenchError } from '../../core/errors.ts';

const CACHE_FORMAT = 'rlvr-workbench verdict cache';
const CACHE_VERSION = 2;
export const CACHE_FILE = 'verdicts-v2.sqlite';
export const KEY_FILE = 'verdicts-v2.key';
/** The file of version 1, left as it is. */
export const OLD_CACHE_FILE = 'verdicts-v1.json';
const DEFAULT_MAX_ENTRIES = 200_000;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** What a row costs besides its JSON in the byte bound: its id and MAC (32 bytes each), last use and size. */
export const ROW_OVERHEAD = 80;
/** How long a run waits for another run's write (SQLite's busy timeout). */
const BUSY_TIMEOUT_MS = 10_000;

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(homedir(), '.cache');
  return path.join(base, 'rlvr-workbench');
}

/** What the version scan reads of a database (src/core/eval/db-facts.ts), by executor and database sha256. */
type StoredFacts = CachedFacts;

interface FileVerdictCache extends VerdictStore {
  readonly file: string;
  /** At the end of a run: says how many rows failed their MAC (deleted unless written again), applies the bounds. */
  save(): Promise<void>;
  /** Verdicts held (facts not counted). */
  readonly entries: number;
  /** The facts of a database (by executor and sha256) remembered from an earlier run. */
  facts(key: string): StoredFacts | undefined;
  setFacts(key: string, facts: StoredFacts): void;
  /** Rows whose MAC did not check in this run (each read as a miss). */
  readonly failedMacs: number;
}

/** The part of better-sqlite3 used here (it ships no types). */
interface Statement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
  iterate(...params: unknown[]): IterableIterator<unknown>;
}
interface Database {
  prepare(sql: string): Statement;
  exec(sql: string): void;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  close(): void;
}
type DatabaseConstructor = new (file: string, options?: { timeout?: number; fileMustExist?: boolean }) => Database;

const openSqlite = (file: string): Database => {
  const Sqlite = createRequire(import.meta.url)('better-sqlite3') as DatabaseConstructor;
  return new Sqlite(file, { timeout: BUSY_TIMEOUT_MS });
};

type Kind = 'v' | 'f';
const rowId = (kind: Kind, key: string) => createHash('sha256').update(`${kind}\u0000${key}`).digest();

/** The MAC of a row: kind, key text (length first, so no text runs into the next) and JSON. */
function mac(secret: Buffer, kind: Kind, key: string, body: string): Buffer {
  return createHmac('sha256', secret)
    .update(`${CACHE_FORMAT} ${CACHE_VERSION}\u0000${kind}\u0000${Buffer.byteLength(key)}\u0000${key}\u0000`)
    .update(body)
    .digest();
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS entries (
    id BLOB PRIMARY KEY,      -- sha256 of kind NUL key text
    kind TEXT NOT NULL,       -- 'v' a verdict, 'f' a database's facts
    body TEXT NOT NULL,       -- the JSON
    mac BLOB NOT NULL,        -- HMAC-SHA256 (mac() above) under the folder's key
    used INTEGER NOT NULL,    -- last use: the least recently used go first past a bound
    bytes INTEGER NOT NULL    -- length of body + ROW_OVERHEAD, for the byte bound
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS entries_by_used ON entries(used);
`;

/**
 * The folder's secret: read, or created once (32 random bytes, mode 0600, in a temporary file
 * linked into place, so no run ever reads a partial key and two runs agree on one). Refused
 * with an error naming the file when it is not a regular file of ours, or group or others may
 * read or write it.
 */
function cacheKey(dir: string): Buffer {
  const file = path.join(dir, KEY_FILE);
  try {
    lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeSync(fd, randomBytes(32));
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temp, file);
    } catch (e) {
      // Another run created it first: use theirs.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      unlinkSync(temp);
    }
  }
  const what = `the verdict cache's key ${file}`;
  if (!lstatSync(file).isFile())
    throw new WorkbenchError(
      'REFUSED',
      `${what} is not a regular file (a link or something else); remove it, and a new key is made`,
    );
  const fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile())
      throw new WorkbenchError('REFUSED', `${what} is not a regular file; remove it, and a new key is made`);
    if (process.platform !== 'win32') {
      if (process.getuid && st.uid !== process.getuid())
        throw new WorkbenchError(
          'REFUSED',
          `${what} belongs to another user (uid ${st.uid}); remove it, and a new key is made`,
        );
      if ((st.mode & 0o077) !== 0)
        throw new WorkbenchError(
          'REFUSED',
          `${what} may be read or written by others (mode ${(st.mode & 0o777).toString(8)}): anyone who reads it can forge verdicts. Remove it (a new key is made; the cached verdicts are then recomputed), or make it private with chmod 600`,
        );
    }
    if (st.size !== 32)
      throw new WorkbenchError('REFUSED', `${what} is ${st.size} bytes, not 32: remove it, and a new key is made`);
    const key = Buffer.alloc(32);
    let got = 0;
    while (got < 32) {
      const n = readSync(fd, key, got, 32 - got, got);
      if (n === 0) break;
      got += n;
    }
    if (got !== 32)
      throw new WorkbenchError('REFUSED', `${what} could not be read whole; remove it, and a new key is made`);
    return key;
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens (or starts) the cache in `dir`, creating the folder and its key. Throws, naming the
 * file and what to do, when the folder, its key or the store cannot be used (the caller runs
 * without a cache); `warn` receives what is said at the end of a run (rows that failed their
 * MAC). `now` gives last uses (tests); `maxEntries` and `maxBytes` the bounds.
 */
export async function openFileVerdictCache(
  dir: string,
  options: { warn: (msg: string) => void; maxEntries?: number; maxBytes?: number; now?: () => number },
): Promise<FileVerdictCache> {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  await mkdir(dir, { recursive: true });
  const secret = cacheKey(dir);
  const file = path.join(dir, CACHE_FILE);
  try {
    if (!lstatSync(file).isFile())
      throw new WorkbenchError(
        'REFUSED',
        `${file} is not a regular file (a link or something else): it is left as it is; remove it, or give another folder with --cache DIR`,
      );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    // Private from the start: the journal SQLite writes beside it takes the same mode.
    closeSync(openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
  }
  const db = openSqlite(file);
  try {
    const tables = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table'`).all() as Array<{ name: string }>;
    const names = new Set(tables.map((t) => t.name));
    if (names.size > 0) {
      if (!names.has('meta') || !names.has('entries'))
        throw new WorkbenchError(
          'REFUSED',
          `${file} is not a verdict cache of this program: it is left as it is; give another folder with --cache DIR`,
        );
      const row = (name: string) =>
        (db.prepare('SELECT value FROM meta WHERE name = ?').get(name) as { value: string } | undefined)?.value;
      if (row('format') !== CACHE_FORMAT)
        throw new WorkbenchError(
          'REFUSED',
          `${file} is not a verdict cache of this program: it is left as it is; give another folder with --cache DIR`,
        );
      if (row('version') !== String(CACHE_VERSION))
        throw new WorkbenchError(
          'REFUSED',
          `${file} is version ${row('version')}, this program reads version ${CACHE_VERSION}: it is left as it is; give another folder with --cache DIR`,
        );
    } else {
      db.transaction(() => {
        db.exec(SCHEMA);
        db.prepare('INSERT OR IGNORE INTO meta VALUES (?, ?), (?, ?)').run(
          'format',
          CACHE_FORMAT,
          'version',
          String(CACHE_VERSION),
        );
      })();
    }
  } catch (err) {
    db.close();
    throw (err as { code?: unknown }).code === 'SQLITE_NOTADB'
      ? new WorkbenchError(
          'REFUSED',
          `${file} is not an SQLite file (not a verdict cache of this program): it is left as it is; remove it, or give another folder with --cache DIR`,
        )
      : err;
  }

  const select = db.prepare('SELECT kind, body, mac FROM entries WHERE id = ?');
  const touch = db.prepare('UPDATE entries SET used = ? WHERE id = ?');
  const upsert = db.prepare(
    `INSERT INTO entries (id, kind, body, mac, used, bytes) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, body = excluded.body, mac = excluded.mac,
       used = excluded.used, bytes = excluded.bytes`,
  );
  let last = 0;
  const now = () => (last = Math.max(last + 1, (options.now ?? Date.now)()));
  /** Rows that failed their MAC and were not written again since, deleted at save(). */
  const failed = new Map<string, Buffer>();
  /** How many lookups met a row that failed its MAC (said at save()). */
  let failedCount = 0;
  let failedMacs = 0;
  let wrote = false;

  /** The row's JSON when its MAC checks; a row that fails is counted (a miss). */
  function read(kind: Kind, key: string): { id: Buffer; value: unknown } | undefined {
    const id = rowId(kind, key);
    const row = select.get(id) as { kind: string; body: string; mac: Buffer } | undefined;
    if (!row) return undefined;
    const expected = mac(secret, kind, key, row.body);
    if (row.kind !== kind || !Buffer.isBuffer(row.mac) || !expected.equals(row.mac)) {
      failed.set(id.toString('hex'), id);
      failedCount++;
      failedMacs++;
      return undefined;
    }
    try {
      return { id, value: JSON.parse(row.body) };
    } catch {
      return undefined;
    }
  }
  const write = db.transaction((rows: Array<[Kind, string, string]>) => {
    const used = now();
    for (const [kind, key, body] of rows) {
      const id = rowId(kind, key);
      upsert.run(id, kind, body, mac(secret, kind, key, body), used, Buffer.byteLength(body) + ROW_OVERHEAD);
      failed.delete(id.toString('hex'));
    }
    wrote = true;
  });
  const touchIds = db.transaction((ids: Buffer[]) => {
    const used = now();
    for (const id of ids) touch.run(used, id);
  });
  /** Last uses written; a store that cannot be written now (another run's long write) still answers. */
  const touchAll = (ids: Buffer[]) => {
    try {
      touchIds(ids);
    } catch {
      // the rows keep their older last use
    }
  };

  return {
    file,
    get entries() {
      try {
        return (db.prepare(`SELECT count(*) AS n FROM entries WHERE kind = 'v'`).get() as { n: number }).n;
      } catch {
        return 0;
      }
    },
    get failedMacs() {
      return failedMacs;
    },
    facts(key) {
      const got = read('f', key);
      if (!got || !validFacts(got.value)) return undefined;
      touchAll([got.id]);
      return got.value;
    },
    setFacts(key, f) {
      write([['f', key, JSON.stringify(f)]]);
    },
    async get(keys) {
      const hits: Buffer[] = [];
      const out = keys.map((k) => {
        const got = read('v', k);
        if (!got || !validVerdict(got.value)) return undefined;
        hits.push(got.id);
        return got.value;
      });
      if (hits.length > 0) touchAll(hits);
      return out;
    },
    async put(entries) {
      if (entries.length > 0) write(entries.map(([k, v]) => ['v', k, JSON.stringify(v)] as [Kind, string, string]));
    },
    async save() {
      if (failedCount > 0) {
        const n = failedCount;
        failedCount = 0;
        options.warn(
          `${n} entr${n === 1 ? 'y' : 'ies'} of the verdict cache ${file} failed authentication (changed outside this program, or made under another key) and ${n === 1 ? 'was' : 'were'} ignored: ${n === 1 ? 'its item was' : 'their items were'} executed again`,
        );
      }
      if (failed.size > 0) {
        const del = db.prepare('DELETE FROM entries WHERE id = ?');
        db.transaction(() => {
          for (const id of failed.values()) del.run(id);
        })();
        failed.clear();
      }
      if (wrote) evict(db, maxEntries, maxBytes);
      wrote = false;
    },
  };
}

/** Deletes the least recently used rows until both bounds hold, in one transaction. */
function evict(db: Database, maxEntries: number, maxBytes: number): void {
  db.transaction(() => {
    const { n, bytes } = db.prepare('SELECT count(*) AS n, total(bytes) AS bytes FROM entries').get() as {
      n: number;
      bytes: number;
    };
    if (n <= maxEntries && bytes <= maxBytes) return;
    // Keep the most recently used rows while both running totals stay within their bound.
    db.prepare(
      `DELETE FROM entries WHERE id IN (
         SELECT id FROM (
           SELECT id, row_number() OVER w AS rank, sum(bytes) OVER w AS upto FROM entries
           WINDOW w AS (ORDER BY used DESC, id DESC ROWS UNBOUNDED PRECEDING)
         ) WHERE rank > ? OR upto > ?
       )`,
    ).run(maxEntries, maxBytes);
  })();
}
