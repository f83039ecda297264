/**
 * `eval --cache DIR` / `--no-cache`: the verdict cache (src/core/run/verdict-cache.ts) in front
 * of the pool, kept in a file of the cache folder (src/adapters/node/verdict-cache-file.ts).
 */
import path from 'node:path';
import { unsafeDbId } from '../../adapters/node/sql-worker-host.ts';
import { defaultCacheDir, openFileVerdictCache } from '../../adapters/node/verdict-cache-file.ts';
import { errorMessage } from '../../core/errors.ts';
import type { SqlExecutor } from '../../core/eval/executor.ts';
import { cachingExecutor } from '../../core/run/verdict-cache.ts';
import { sha256File } from './run-out.ts';

export interface EvalCache {
  executor: SqlExecutor;
  /** Positions (in the run's items) answered from the cache. */
  hits(): Set<number>;
  save(): Promise<void>;
}

const warn = (msg: string) => process.stderr.write(`warning: ${msg}\n`);

/**
 * The caching executor over `inner`, or null with `--no-cache`, when no database told its
 * SQLite version, or when the cache folder cannot be used (a warning says why; the run goes on
 * without it).
 */
export async function openEvalCache(
  args: { cache: string | null; dbRoot: string }, inner: SqlExecutor, sqliteVersion: string | null, executor: string,
): Promise<EvalCache | null> {
  if (args.cache === null || sqliteVersion === null) return null;
  const dir = args.cache === 'default' ? defaultCacheDir() : args.cache;
  let file;
  try {
    file = await openFileVerdictCache(dir, { warn });
  } catch (err) {
    warn(`the verdict cache folder ${dir} cannot be used (${errorMessage(err)}): this run caches nothing; give another with --cache DIR, or --no-cache`);
    return null;
  }
  const caching = cachingExecutor(inner, {
    store: file,
    context: { executor, sqliteVersion },
    async dbSha256(dbId) {
      if (unsafeDbId(dbId)) return null;
      return file.fileSha256(path.join(args.dbRoot, dbId, `${dbId}.sqlite`), sha256File).catch(() => null);
    },
  });
  return {
    executor: caching,
    hits: () => caching.stats.hitSamples,
    async save() {
      try {
        await file.save();
      } catch (err) {
        warn(`the verdict cache ${file.file} could not be written (${errorMessage(err)}); the results are not affected`);
      }
    },
  };
}
