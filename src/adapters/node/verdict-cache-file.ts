/**
 * The CLI's verdict cache (src/core/run/verdict-cache.ts) in one JSON file of a cache folder:
 * `<dir>/verdicts-v1.json`, default folder `$XDG_CACHE_HOME/rlvr-workbench` or
 * `~/.cache/rlvr-workbench`. The file holds a header (format, version), the entries with their
 * last use, the databases' sha256 by path, size and modification time (so a database is hashed
 * again only when it changed), and a sha256 of all that. Bounded: past `maxEntries` the least
 * recently used entries go first.
 *
 * A file that is not whole or does not check (truncated, edited, an entry that is not a
 * verdict) is ignored with a warning and replaced by a fresh one at the end of the run; a file
 * that is not a verdict cache at all (another program's) is ignored with a warning and left as
 * it is (nothing is written over it). Nothing from either is trusted. Two runs at once: each
 * writes its own complete file (temp + rename); the last one wins, the other's new verdicts are
 * only misses later.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import {
  validFacts,
  validVerdict,
  type CachedFacts,
  type CachedVerdict,
  type VerdictStore,
} from '../../core/run/verdict-cache.ts';
import { writeFileAtomic } from '../../cli/atomic-write.ts';

export const CACHE_FORMAT = 'rlvr-workbench verdict cache';
export const CACHE_VERSION = 1;
export const CACHE_FILE = 'verdicts-v1.json';
export const DEFAULT_MAX_ENTRIES = 200_000;

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(homedir(), '.cache');
  return path.join(base, 'rlvr-workbench');
}

interface DbHashEntry {
  size: number;
  mtimeMs: number;
  sha256: string;
}

/** What the version scan reads of a database (src/core/eval/db-facts.ts), by executor and database sha256. */
export type StoredFacts = CachedFacts;

interface CacheBody {
  /** [key, last use (a counter), verdict] */
  entries: Array<[string, number, CachedVerdict]>;
  dbs: Record<string, DbHashEntry>;
  /** By `executor NUL sha256`: a run whose verdicts all come from the cache opens no database. */
  facts?: Record<string, StoredFacts>;
  tick: number;
}

const checksum = (body: CacheBody) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

/** Why `text` cannot be trusted as a cache file, with whether it is ours (then it may be replaced). */
function parseCache(text: string): { body: CacheBody } | { problem: string; ours: boolean } {
  const ours = text.startsWith(`{"format":${JSON.stringify(CACHE_FORMAT)}`);
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch (err) {
    return {
      problem: ours
        ? `it is not whole (${(err as Error).message}): a run was interrupted while writing it, or it was cut`
        : 'it is not JSON',
      ours,
    };
  }
  const f = o as { format?: unknown; version?: unknown; sha256?: unknown; body?: CacheBody };
  if (typeof o !== 'object' || o === null || f.format !== CACHE_FORMAT)
    return { problem: 'it is not a verdict cache of this program', ours: false };
  if (f.version !== CACHE_VERSION)
    return {
      problem: `it is version ${JSON.stringify(f.version)}, this program reads version ${CACHE_VERSION}`,
      ours: true,
    };
  const body = f.body;
  if (
    typeof body !== 'object' ||
    body === null ||
    !Array.isArray(body.entries) ||
    typeof body.dbs !== 'object' ||
    body.dbs === null ||
    !Number.isInteger(body.tick)
  ) {
    return { problem: 'its body is not that of a verdict cache', ours: true };
  }
  if (f.sha256 !== checksum(body))
    return { problem: 'its checksum does not match its content (it was changed or damaged)', ours: true };
  for (const e of body.entries) {
    if (
      !Array.isArray(e) ||
      e.length !== 3 ||
      typeof e[0] !== 'string' ||
      !Number.isInteger(e[1]) ||
      !validVerdict(e[2])
    ) {
      return { problem: 'an entry is not a verdict', ours: true };
    }
  }
  for (const d of Object.values(body.dbs)) {
    if (
      typeof d !== 'object' ||
      d === null ||
      !/^[0-9a-f]{64}$/.test(String(d.sha256)) ||
      !Number.isFinite(d.size) ||
      !Number.isFinite(d.mtimeMs)
    ) {
      return { problem: 'a database entry is not a sha256', ours: true };
    }
  }
  if (
    body.facts !== undefined &&
    (typeof body.facts !== 'object' || body.facts === null || !Object.values(body.facts).every(validFacts))
  ) {
    return { problem: 'a database description is not one', ours: true };
  }
  return { body };
}

export interface FileVerdictCache extends VerdictStore {
  readonly file: string;
  /** The sha256 of a file, from the cache when its size and modification time are unchanged. */
  fileSha256(file: string, hash: (file: string) => Promise<string>): Promise<string>;
  /** Writes the file (new entries, last uses, least recently used out past the bound). */
  save(): Promise<void>;
  readonly entries: number;
  /** The facts of a database (by executor and sha256) remembered from an earlier run. */
  facts(key: string): StoredFacts | undefined;
  setFacts(key: string, facts: StoredFacts): void;
}

/**
 * Opens (or starts) the cache in `dir`, creating the folder. `warn` receives the reason a file
 * was ignored.
 */
export async function openFileVerdictCache(
  dir: string,
  options: { warn: (msg: string) => void; maxEntries?: number },
): Promise<FileVerdictCache> {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, CACHE_FILE);
  const map = new Map<string, { used: number; verdict: CachedVerdict }>();
  let dbs: Record<string, DbHashEntry> = {};
  let facts: Record<string, StoredFacts> = {};
  let tick = 0;
  let writable = true;
  let changed = false;
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    options.warn(`verdict cache ${file} cannot be read (${err.message}): this run does not use it`);
    writable = false;
    return null;
  });
  if (text !== null) {
    const parsed = parseCache(text);
    if ('problem' in parsed) {
      if (parsed.ours)
        options.warn(
          `verdict cache ${file} is ignored: ${parsed.problem}. It is replaced by a new one at the end of this run; no verdict was taken from it`,
        );
      else
        options.warn(
          `${file} is ignored: ${parsed.problem}. It is left as it is and this run caches nothing; give another folder with --cache DIR, or --no-cache`,
        );
      writable = parsed.ours;
      changed = parsed.ours;
    } else {
      tick = parsed.body.tick;
      dbs = parsed.body.dbs;
      facts = parsed.body.facts ?? {};
      for (const [k, used, verdict] of parsed.body.entries) map.set(k, { used, verdict });
    }
  }
  return {
    file,
    get entries() {
      return map.size;
    },
    facts: (key) => facts[key],
    setFacts(key, f) {
      if (JSON.stringify(facts[key]) === JSON.stringify(f)) return;
      facts[key] = f;
      changed = true;
    },
    async get(keys) {
      tick++;
      return keys.map((k) => {
        const e = map.get(k);
        if (!e) return undefined;
        e.used = tick;
        changed = true;
        return e.verdict;
      });
    },
    async put(entries) {
      tick++;
      for (const [k, verdict] of entries) map.set(k, { used: tick, verdict });
      if (entries.length > 0) changed = true;
    },
    async fileSha256(f, hash) {
      const abs = path.resolve(f);
      const st = await stat(abs);
      const known = dbs[abs];
      if (known && known.size === st.size && known.mtimeMs === st.mtimeMs) return known.sha256;
      const sha256 = await hash(abs);
      dbs[abs] = { size: st.size, mtimeMs: st.mtimeMs, sha256 };
      changed = true;
      return sha256;
    },
    async save() {
      if (!writable || !changed) return;
      let entries = [...map].map(([k, e]) => [k, e.used, e.verdict] as [string, number, CachedVerdict]);
      if (entries.length > maxEntries) entries = entries.sort((a, b) => b[1] - a[1]).slice(0, maxEntries);
      const body: CacheBody = { entries, dbs, facts, tick };
      // The header first, so a cut file is still recognised as ours (parseCache).
      await writeFileAtomic(
        file,
        JSON.stringify({ format: CACHE_FORMAT, version: CACHE_VERSION, sha256: checksum(body), body }),
      );
      changed = false;
    },
  };
}
