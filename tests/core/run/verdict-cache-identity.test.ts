/**
 * The verdict cache stores a verdict under the database bytes it was executed on (the result's
 * `dbSha256`, which the pool takes from what it loaded), never under the sha256 it was looked
 * up by: a database that changes between the two costs a miss, never a wrong verdict. The same
 * for the databases' facts. The executors here are test doubles (named so) that say which
 * bytes they "opened"; tests/adapters/db-identity.test.ts does it with the real pool and files.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_EVAL_OPTIONS, type SqlExecutor } from '../../../src/core/eval/executor.ts';
import { DB_FACTS_SQL } from '../../../src/core/eval/db-facts.ts';
import { factsFor } from '../../../src/core/run/score-run.ts';
import {
  cachingExecutor,
  factsKey,
  verdictKey,
  type CachedFacts,
  type CachedVerdict,
  type VerdictStore,
} from '../../../src/core/run/verdict-cache.ts';
import type { EvalItem } from '../../../src/core/types.ts';
import { ranResult, superheroItem } from '../../helpers/item-results.ts';

const OLD = 'a'.repeat(64);
const NEW = 'b'.repeat(64);
const context = { executor: 'sql.js test', sqliteVersion: '3.test' };

function memoryStore(): VerdictStore & { map: Map<string, CachedVerdict> } {
  const map = new Map<string, CachedVerdict>();
  return {
    map,
    get: async (keys) => keys.map((k) => map.get(k)),
    put: async (entries) => void entries.forEach(([k, v]) => map.set(k, v)),
  };
}

/** Test double of the pool: answers every item EX `ex`, as executed on the bytes whose sha256 is `openedSha` (undefined: not said). */
function fakeExecutorOn(openedSha: string | undefined, ex: 0 | 1 = 0) {
  const asked: EvalItem[] = [];
  const executor: SqlExecutor = {
    evaluate: async (items) => {
      asked.push(...items);
      return items.map((it) => ranResult(it, ex, openedSha === undefined ? {} : { dbSha256: openedSha }));
    },
    dispose: async () => undefined,
  };
  return { executor, asked };
}

const items = [superheroItem(0, 'SELECT count(*) FROM superhero'), superheroItem(1, 'SELECT 1')].map((it, i) => ({
  ...it,
  sample: i,
}));

describe('cachingExecutor: the identity a verdict is stored under', () => {
  it('stores under the sha256 of the bytes the executor opened, not the one it looked up (a database replaced in between)', async () => {
    const store = memoryStore();
    const replaced = fakeExecutorOn(NEW, 0);
    const caching = cachingExecutor(replaced.executor, { store, context, dbSha256: async () => OLD });
    await caching.evaluate(items, DEFAULT_EVAL_OPTIONS);
    expect(caching.stats.stored).toBe(2);
    expect([...store.map.keys()].sort()).toEqual(
      items.map((it) => verdictKey(it, NEW, context, DEFAULT_EVAL_OPTIONS)).sort(),
    );
    // Looked up again under the old bytes: nothing there, so executed (on the old bytes: EX 1).
    const again = fakeExecutorOn(OLD, 1);
    const second = cachingExecutor(again.executor, { store, context, dbSha256: async () => OLD });
    const results = await second.evaluate(items, DEFAULT_EVAL_OPTIONS);
    expect(again.asked).toHaveLength(2);
    expect(results.map((r) => r.ex)).toEqual([1, 1]);
    // Under the new bytes: the verdicts computed on them.
    const third = cachingExecutor(fakeExecutorOn(NEW).executor, { store, context, dbSha256: async () => NEW });
    expect((await third.evaluate(items, DEFAULT_EVAL_OPTIONS)).map((r) => r.ex)).toEqual([0, 0]);
    expect(third.stats.hitSamples.size).toBe(2);
  });

  it('stores nothing when the executor does not say which bytes it opened', async () => {
    const store = memoryStore();
    const caching = cachingExecutor(fakeExecutorOn(undefined).executor, { store, context, dbSha256: async () => OLD });
    await caching.evaluate(items, DEFAULT_EVAL_OPTIONS);
    expect(caching.stats.stored).toBe(0);
    expect(store.map.size).toBe(0);
  });

  it('looks up and stores nothing for a database without a lookup sha256 (a -wal with commits, not a file)', async () => {
    const store = memoryStore();
    store.map.set(verdictKey(items[0]!, NEW, context, DEFAULT_EVAL_OPTIONS), {
      status: 'ok',
      ex: 1,
      softF1: null,
      error: null,
      predRowCount: 1,
      goldRowCount: 1,
      elapsedMs: 1,
    });
    const fake = fakeExecutorOn(NEW, 0);
    const caching = cachingExecutor(fake.executor, { store, context, dbSha256: async () => null });
    const results = await caching.evaluate(items, DEFAULT_EVAL_OPTIONS);
    expect(fake.asked).toHaveLength(2);
    expect(results.map((r) => r.ex)).toEqual([0, 0]);
    expect(caching.stats.stored).toBe(0);
    expect(store.map.size).toBe(1);
  });
});

describe("factsFor: a database's facts are kept under the bytes they were read from", () => {
  it('a database replaced after it was hashed: its facts go under the new bytes, the old sha256 gets none', async () => {
    const kept = new Map<string, CachedFacts>();
    // Test double of the pool reading the facts query on the replaced bytes.
    const reader: SqlExecutor = {
      evaluate: async (its, _options, hooks) =>
        its.map((it) => {
          expect(it.predSql).toBe(DB_FACTS_SQL);
          const r = ranResult(it, 0, { dbSha256: NEW });
          const preview = { predColumns: [], goldColumns: [], predRows: [['3.test', 'T', 'c', 'TEXT']], goldRows: [] };
          hooks?.onEvent?.({ type: 'item', result: r, preview, done: 1, total: its.length });
          return r;
        }),
      dispose: async () => undefined,
    };
    const facts = await factsFor(reader, ['superhero'], undefined, undefined, {
      store: memoryStore(),
      executor: 'sql.js test',
      dbSha256: async () => OLD,
      facts: { getFacts: async (k) => kept.get(k), putFacts: async (k, f) => void kept.set(k, f) },
    });
    expect(facts.columnTypes).toEqual({ superhero: { t: { c: 'TEXT' } } });
    expect([...kept.keys()]).toEqual([factsKey('sql.js test', NEW)]);
  });
});
