/**
 * Metric ts in the pool (docs/test-suite.md): after an item's EX, its worker runs the suite and
 * row-order checks (`checkItem`). A worker without the database's suite gets it from the suite
 * cache or builds it (`buildSuite`, with progress); while one worker builds, another that needs
 * the same suite waits for it and loads the result. Split from sql-pool.ts, which supplies the
 * calls to a worker (null on a timeout: the worker was restarted).
 */
import { proxy, type Remote } from 'comlink';
import { errorMessage } from '../core/errors.ts';
import type { EvalEvent } from '../core/eval/executor.ts';
import { suiteKey, type BuiltSuite, type SuiteCache, type SuiteSpec } from '../core/ts/suite.ts';
import type { EvalItem, ItemResult } from '../core/types.ts';
import type { CheckDone, ExecDone, NeedDb, NeedSuite, SqlWorkerApi } from '../../workers/sql.api.ts';

type Built = { kind: 'done'; suite: BuiltSuite };

/** A test suite is built in at most this long (it runs every gold and its variants on each candidate). */
const SUITE_BUILD_MS = 10 * 60_000;

interface PoolSuitesDeps<S> {
  spec: SuiteSpec;
  /** The golds each database's suite is distilled on. */
  goldsOf: ReadonlyMap<string, readonly string[]>;
  cache: SuiteCache;
  /** Suites being built, by suiteKey (shared by the pool's evaluations). */
  building: Map<string, Promise<BuiltSuite | string>>;
  timeoutMs: number;
  onEvent?: (e: EvalEvent) => void;
  /** Runs `fn` on the slot's worker within `ms`; null when it timed out. */
  call<T>(slot: S, fn: (api: Remote<SqlWorkerApi>) => Promise<T>, ms: number): Promise<T | null>;
  /** Opens the database on the slot's worker; the reason it cannot, or null. */
  ensureDb(slot: S, dbId: string): Promise<string | null>;
}

/** A call that opens the database when the worker answers need-db: null on a timeout, a string when the database cannot be opened. */
type WithDb = <T>(fn: (api: Remote<SqlWorkerApi>) => Promise<T | NeedDb>, ms: number) => Promise<T | null | string>;

export function poolSuites<S>(d: PoolSuitesDeps<S>) {
  const { spec } = d;
  const golds = (dbId: string) => [...(d.goldsOf.get(dbId) ?? [])];

  /** The worker holds the suite of `dbId` afterwards, or the reason it cannot (then TS is not scored). */
  const ensureSuite = async (slot: S, dbId: string): Promise<string | null> => {
    const key = suiteKey(dbId, spec);
    const cached = await d.cache.get(dbId, spec).catch(() => null);
    if (cached) {
      const r = await d.call(slot, (api) => api.loadSuite(dbId, cached), SUITE_BUILD_MS);
      if (r === null) return `test suite of ${dbId}: loading it timed out`;
      d.onEvent?.({ type: 'suite-ready', dbId, cached: true, stats: cached.stats, chosen: cached.chosen });
      return null;
    }
    let pending = d.building.get(key);
    const mine = !pending;
    if (!pending) {
      pending = (async () => {
        const progress = proxy((done: number, total: number) =>
          d.onEvent?.({ type: 'suite-progress', dbId, done, total }),
        );
        const build = () =>
          d.call<Built | NeedDb>(slot, (api) => api.buildSuite(dbId, spec, golds(dbId), progress), SUITE_BUILD_MS);
        let r = await build();
        if (r === null) return `test suite of ${dbId}: building it took longer than ${SUITE_BUILD_MS / 60_000} minutes`;
        if (r.kind === 'need-db') {
          const err = await d.ensureDb(slot, dbId);
          if (err) return err;
          r = await build();
          if (r === null || r.kind !== 'done')
            return `test suite of ${dbId}: the database could not be kept open to build it`;
        }
        return r.suite;
      })().catch((err) => `test suite of ${dbId}: ${errorMessage(err)}`);
      d.building.set(key, pending);
    }
    const built = await pending;
    if (typeof built === 'string') {
      d.building.delete(key);
      return built;
    }
    if (!mine) return ensureSuite(slot, dbId);
    // A cache that cannot keep it (storage full) costs a rebuild later, never the run.
    await d.cache.put(dbId, spec, built).catch(() => undefined);
    d.building.delete(key);
    d.onEvent?.({ type: 'suite-ready', dbId, cached: false, stats: built.stats, chosen: built.chosen });
    return null;
  };

  /** The suite verdict and the row-order flags of an item whose EX is known. */
  const tsOf = async (slot: S, item: EvalItem, exec: ExecDone, withDb: WithDb): Promise<Partial<ItemResult>> => {
    // The gold failed on the original: nothing to score against.
    if (exec.goldRowCount === null && !exec.error?.startsWith('prediction')) return { ts: null };
    const req = { dbId: item.dbId, predSql: item.predSql, goldSql: item.goldSql, spec, exAccepted: exec.ex === 1 };
    let r: CheckDone | NeedSuite | null | string = null;
    for (let attempt = 0; attempt < 2; attempt++) {
      r = await withDb<CheckDone | NeedSuite>((api) => api.checkItem(req), d.timeoutMs);
      if (typeof r !== 'object' || r === null || r.kind !== 'need-suite') break;
      // No suite: TS is not scored (the reason is the same for every item of the database).
      if (await ensureSuite(slot, item.dbId)) return { ts: exec.ex === 1 ? null : 0 };
    }
    if (typeof r !== 'object' || r === null || r.kind !== 'done') return { ts: exec.ex === 1 ? null : 0 };
    return {
      ts: exec.ex === 1 ? r.ts : 0,
      ...(r.counterexample ? { tsCounterexample: r.counterexample } : {}),
      ...(r.goldOrderDependent !== null ? { goldOrderDependent: r.goldOrderDependent } : {}),
      ...(r.passesByRowOrder !== null ? { passesByRowOrder: r.passesByRowOrder } : {}),
    };
  };

  return { tsOf };
}
