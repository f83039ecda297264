/**
 * `eval --cache DIR` / `--no-cache`: the verdict cache (src/core/run/verdict-cache.ts), handed to
 * the run recipe (scoreRun's `verdictCache`) in front of the pool, kept in a file of the cache
 * folder (the host's `verdictCache`: src/adapters/node/verdict-cache-file.ts).
 * The file also keeps each database's facts for the version scan (SQLite version, column types,
 * by executor and sha256; the recipe asks for them), so a run whose verdicts all come from the
 * cache starts no worker and opens no database.
 */
import path from 'node:path';
import type { NodeHost } from '../node-host.ts';
import { errorMessage } from '../../core/errors.ts';
import type { VerdictCachePort } from '../../core/run/verdict-cache.ts';

export interface EvalCache {
  /** The cache held no verdict when opened (a first run: start the workers at once). */
  empty: boolean;
  /** The cache as the run recipe uses it (scoreRun's `verdictCache`), the databases' facts included. */
  port: VerdictCachePort;
  save(): Promise<void>;
}

const warn = (msg: string) => process.stderr.write(`warning: ${msg}\n`);

/** Null with `--no-cache`, or when the cache folder cannot be used (a warning says why; the run goes on without it). */
export async function openEvalCache(
  host: NodeHost,
  args: { cache: string | null; dbRoot: string },
  executor: string,
): Promise<EvalCache | null> {
  if (args.cache === null) return null;
  const dir = args.cache === 'default' ? host.verdictCache.defaultDir() : args.cache;
  let file: Awaited<ReturnType<NodeHost['verdictCache']['open']>>;
  try {
    file = await host.verdictCache.open(dir, { warn });
  } catch (err) {
    warn(
      `the verdict cache folder ${dir} cannot be used (${errorMessage(err)}): this run caches nothing; give another with --cache DIR, or --no-cache`,
    );
    return null;
  }
  // Verdicts are looked up under the sha256 of each database's bytes as they are now, hashed
  // once per run (never trusted from an earlier run by size and mtime, which a copy keeps):
  // null, and nothing looked up, when they would not be read alone (a -wal with committed
  // frames, a hot journal) or at all (not a regular readable file). They are stored under
  // the sha256 of the bytes the workers opened (cachingExecutor).
  const shas = new Map<string, Promise<string | null>>();
  const dbSha256 = (dbId: string) => {
    let p = shas.get(dbId);
    if (!p) {
      p = host.sql.unsafeDbId(dbId)
        ? Promise.resolve(null)
        : host.sql.dbFileSha256(dbId, path.join(args.dbRoot, dbId, `${dbId}.sqlite`)).catch(() => null);
      shas.set(dbId, p);
    }
    return p;
  };
  return {
    empty: file.entries === 0,
    port: {
      store: file,
      dbSha256,
      executor,
      facts: { getFacts: async (key) => file.facts(key), putFacts: async (key, f) => file.setFacts(key, f) },
    },
    async save() {
      try {
        await file.save();
      } catch (err) {
        warn(
          `the verdict cache ${file.file} could not be written (${errorMessage(err)}); the results are not affected`,
        );
      }
    },
  };
}
