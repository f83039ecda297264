/**
 * The CLI's verdict cache file (src/adapters/node/verdict-cache-file.ts) around a real executor on
 * the mini-dev databases, and an executor that records what it is asked to execute: for the tests
 * of the cache on real data.
 */
import path from 'node:path';
import { dbFileSha256 } from '../../src/adapters/node/sql-worker-host.ts';
import { openFileVerdictCache } from '../../src/adapters/node/verdict-cache-file.ts';
import type { SqlExecutor } from '../../src/core/eval/executor.ts';
import { cachingExecutor } from '../../src/core/run/verdict-cache.ts';
import type { EvalItem, ItemResult } from '../../src/core/types.ts';
import { verdictOf } from './item-results.ts';
import { sharedData } from './shared-data.ts';

const DB_ROOT = sharedData('bird', 'databases');

/** What the cache must give back exactly: the verdict of every item (its result key included), and its question. */
export const cachedVerdictOf = (r: ItemResult) => [...verdictOf(r), r.questionId];

/** `inner`, recording the items it is asked to execute. */
export function counting(inner: SqlExecutor) {
  const asked: EvalItem[] = [];
  const executor: SqlExecutor = {
    evaluate: (items, options, hooks) => {
      asked.push(...items);
      return inner.evaluate(items, options, hooks);
    },
    dispose: () => inner.dispose(),
  };
  return { executor, asked };
}

/** The verdict cache file in `dir` (opened now) in front of `inner`, keyed by the mini-dev databases' bytes. */
export async function withFileCache(dir: string, inner: SqlExecutor, warn: (m: string) => void = () => undefined) {
  const file = await openFileVerdictCache(dir, { warn });
  const caching = cachingExecutor(inner, {
    store: file,
    context: { executor: 'sql.js test', sqliteVersion: '3.test' },
    dbSha256: (dbId) => dbFileSha256(dbId, path.join(DB_ROOT, dbId, `${dbId}.sqlite`)),
  });
  return { file, caching };
}
