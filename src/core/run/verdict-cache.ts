/**
 * A verdict cache across runs: re-evaluating a file, or a new checkpoint whose SQL was seen
 * before, costs a lookup. The pure part: the key, the policy (what may be cached), the record
 * and its validation, and `cachingExecutor`, an SqlExecutor that answers cached items itself
 * and hands the rest to the real one. Stores are adapters (src/adapters/node/verdict-cache-file.ts,
 * src/adapters/store/verdict-cache-idb.ts).
 *
 * The key holds everything that decides a verdict: the database's sha256 (the bytes executed on,
 * not its name: see CachingPorts.dbSha256), the gold text and the prediction as reuse normalises
 * it (reuse.ts: without SQLite's whitespace around it, and nothing else), the executor (engine and
 * version) and the SQLite version,
 * the timeout, `--read-only`, whether Soft-F1 is computed, the EX rule when it is Spider's, and VERDICT_RULES (bumped when a
 * rule of src/core/compare or the workers' Python semantics changes). Never cached:
 * - SQL that may write or is not deterministic (reuse.ts's WRITES and isNonDeterministic, an
 *   allow-list of functions, on either text), and an item whose execution changed the database;
 * - any item executed on a database that holds a view which is not deterministic (reuse.ts's
 *   viewIsNonDeterministic, decided by the worker on the bytes it opened: `SELECT * FROM v`
 *   reads `random()` when v does). Nothing of such bytes is ever stored, so their sha256 finds
 *   nothing, and their items are executed every time;
 * - timeouts (the machine's load decides them) and failures of the machine (a killed worker, a
 *   database that could not be read, a missing database): only `ok` and SQLite's own errors
 *   (`prediction:` / `gold:`);
 * - runs with R-VES or test-suite accuracy (they time each item, or depend on the suite), and
 *   calls that ask for rows (previews: a verdict holds no rows).
 * A cached verdict keeps the time of the execution it came from (`elapsedMs`).
 */
import type { EvalEvent, EvalOptions, SqlExecutor } from '../eval/executor.ts';
import type { EvalItem, ItemResult } from '../types.ts';
import { normalizedSql, reusable } from './reuse.ts';

/**
 * Bumped when a rule that decides EX, Soft-F1, a status or an error text changes, or the key's
 * normalisation of a text, or what may be stored (2: SQLite's whitespace only, where 1 trimmed
 * Unicode spaces and a `;`; 3: nothing executed on a database with a view that is not
 * deterministic, which 2 stored).
 */
export const VERDICT_RULES = 3;

/** What a verdict is computed with, besides the item and its database. */
interface VerdictContext {
  /** The engine and its version, e.g. `sql.js 1.17.0` (the version check's: `sql.js 1.8.0`). */
  executor: string;
  /** `select sqlite_version()` of that engine. */
  sqliteVersion: string;
}

/** The verdict of one item: what the executor computed, without the item's identity. */
export interface CachedVerdict {
  status: 'ok' | 'error' | 'timeout';
  ex: 0 | 1;
  softF1: number | null;
  error: string | null;
  predRowCount: number | null;
  goldRowCount: number | null;
  elapsedMs: number | null;
  resultKey?: string;
  predColumnCount?: number;
  goldColumnCount?: number;
}

/** Whether calls with these options may use the cache at all. */
function cacheableOptions(options: EvalOptions): boolean {
  return !options.metrics.includes('r-ves') && !options.metrics.includes('ts') && options.previewRows === 0;
}

/** Whether an item's verdict may come from (or go to) the cache: reuse's rule on both texts. */
export const cacheableItem = (item: EvalItem): boolean => reusable(item);

/**
 * Whether an executed item's verdict may be stored: `ok` and SQLite's own errors. Never a
 * timeout: the machine's load decides it, not the SQL.
 */
export function cacheableResult(r: ItemResult): boolean {
  if (r.mutatedDb || r.nondeterministicView !== undefined || r.rves !== null || r.ts !== undefined) return false;
  if (r.status === 'ok') return true;
  return r.status === 'error' && r.error !== null && /^(prediction|gold): /.test(r.error);
}

/** The cache key of an item: a JSON array, so no text can run into the next field. */
export function verdictKey(item: EvalItem, dbSha256: string, context: VerdictContext, options: EvalOptions): string {
  return JSON.stringify([
    VERDICT_RULES,
    context.executor,
    context.sqliteVersion,
    options.timeoutMs,
    options.readOnly,
    options.metrics.includes('soft-f1'),
    dbSha256,
    item.goldSql,
    normalizedSql(item.predSql),
    // Spider's execution match decides another verdict than BIRD's (docs/spider-rules.md);
    // BIRD's keys stay as they were.
    ...(options.exRule === 'spider' ? ['spider'] : []),
  ]);
}

function verdictOf(r: ItemResult): CachedVerdict {
  const v: CachedVerdict = {
    status: r.status as CachedVerdict['status'],
    ex: r.ex,
    softF1: r.softF1,
    error: r.error,
    predRowCount: r.predRowCount,
    goldRowCount: r.goldRowCount,
    elapsedMs: r.elapsedMs,
  };
  if (r.resultKey !== undefined) v.resultKey = r.resultKey;
  if (r.predColumnCount !== undefined) v.predColumnCount = r.predColumnCount;
  if (r.goldColumnCount !== undefined) v.goldColumnCount = r.goldColumnCount;
  return v;
}

/**
 * The item's result from a cached verdict. It counts as no gold execution (`goldReused`), as
 * an item whose gold came from an earlier one does.
 */
function resultFromVerdict(v: CachedVerdict, item: EvalItem): ItemResult {
  const r: ItemResult = {
    index: item.index,
    questionId: item.questionId,
    dbId: item.dbId,
    difficulty: item.difficulty,
    ex: v.ex,
    softF1: v.softF1,
    rves: null,
    timeRatio: null,
    status: v.status,
    error: v.error,
    mutatedDb: false,
    extraction: item.extraction,
    predRowCount: v.predRowCount,
    goldRowCount: v.goldRowCount,
    elapsedMs: v.elapsedMs,
    goldReused: true,
  };
  if (item.sample !== undefined) r.sample = item.sample;
  if (v.resultKey !== undefined) r.resultKey = v.resultKey;
  if (v.predColumnCount !== undefined) r.predColumnCount = v.predColumnCount;
  if (v.goldColumnCount !== undefined) r.goldColumnCount = v.goldColumnCount;
  return r;
}

const isCount = (x: unknown) => x === null || (typeof x === 'number' && Number.isInteger(x) && x >= 0);
const optional = (x: unknown, test: (x: unknown) => boolean) => x === undefined || test(x);

/** Whether `x` is a well-formed verdict (a record read from a store is checked before it is trusted). */
export function validVerdict(x: unknown): x is CachedVerdict {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const v = x as Record<string, unknown>;
  const known = new Set([
    'status',
    'ex',
    'softF1',
    'error',
    'predRowCount',
    'goldRowCount',
    'elapsedMs',
    'resultKey',
    'predColumnCount',
    'goldColumnCount',
  ]);
  if (Object.keys(v).some((k) => !known.has(k))) return false;
  if (v.status !== 'ok' && v.status !== 'error' && v.status !== 'timeout') return false;
  if (v.ex !== 0 && v.ex !== 1) return false;
  if (!(v.softF1 === null || (typeof v.softF1 === 'number' && v.softF1 >= 0 && v.softF1 <= 1))) return false;
  if (!(v.error === null || typeof v.error === 'string')) return false;
  if (v.status === 'ok' ? v.error !== null : typeof v.error !== 'string') return false;
  if (v.status !== 'ok' && v.ex !== 0) return false;
  if (!isCount(v.predRowCount) || !isCount(v.goldRowCount)) return false;
  if (!(v.elapsedMs === null || (typeof v.elapsedMs === 'number' && Number.isFinite(v.elapsedMs) && v.elapsedMs >= 0)))
    return false;
  if (!optional(v.resultKey, (k) => typeof k === 'string')) return false;
  return optional(v.predColumnCount, isCount) && optional(v.goldColumnCount, isCount);
}

/** Port: where verdicts are kept. `get` answers in the order of `keys` (undefined: not there). */
export interface VerdictStore {
  get(keys: readonly string[]): Promise<Array<CachedVerdict | undefined>>;
  put(entries: ReadonlyArray<readonly [string, CachedVerdict]>): Promise<void>;
}

interface CachingPorts {
  store: VerdictStore;
  /**
   * The sha256 a database's verdicts are LOOKED UP under: of its current bytes, or null when they
   * cannot be read or would not be read alone (a `-wal` with committed frames, a hot journal):
   * then nothing is looked up for its items, they are executed. Verdicts are STORED under the
   * sha256 of the bytes they were executed on (ItemResult.dbSha256), never under this one: a
   * database that changes between the two costs a miss, never a wrong verdict.
   */
  dbSha256(dbId: string): Promise<string | null>;
  context: VerdictContext;
}

/**
 * What the version scan reads of a database (eval/db-facts.ts: the SQLite version of the engine,
 * every column's declared type), kept beside the verdicts by executor and database sha256: a
 * run whose verdicts all come from the cache then opens no database at all.
 */
export interface CachedFacts {
  sqliteVersion: string;
  columnTypes: Record<string, Record<string, string>>;
}

const isStringMap = (x: unknown) =>
  typeof x === 'object' && x !== null && !Array.isArray(x) && Object.values(x).every((v) => typeof v === 'string');

/** Whether `x` is well-formed facts (read from a store, checked before it is trusted). */
export function validFacts(x: unknown): x is CachedFacts {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const o = x as Record<string, unknown>;
  return (
    typeof o.sqliteVersion === 'string' &&
    typeof o.columnTypes === 'object' &&
    o.columnTypes !== null &&
    !Array.isArray(o.columnTypes) &&
    Object.values(o.columnTypes).every(isStringMap)
  );
}

/** The facts' key: the executor (engine and version) and the database's sha256. */
export const factsKey = (executor: string, dbSha256: string): string => `${executor}\u0000${dbSha256}`;

/** Port: where facts are kept (undefined: not there, or not valid facts). */
export interface FactsStore {
  getFacts(key: string): Promise<CachedFacts | undefined>;
  putFacts(key: string, facts: CachedFacts): Promise<void>;
}

/**
 * What a host hands the run recipe (score-run.ts, `ScoreRunPorts.verdictCache`) to use the
 * cache: the store, each database's sha256, the executor's name and version, and where the
 * databases' facts are kept. The SQLite version of the key is the one of the run's facts
 * (read, or remembered from an earlier run of the same executor), so every host keys alike.
 */
export interface VerdictCachePort extends Omit<CachingPorts, 'context'> {
  /** The engine and its version, e.g. `sql.js 1.17.0` (VerdictContext.executor). */
  executor: string;
  facts?: FactsStore;
}

interface CacheStats {
  /** Items answered from the cache, by their `sample` (the position runEvaluation gives them). */
  hitSamples: Set<number>;
  /** Verdicts stored. */
  stored: number;
}

/**
 * An SqlExecutor that answers cacheable items from the store and sends the others to `inner`,
 * storing each cacheable verdict `inner` returns. Cached items are reported as `item` events
 * before the others run.
 */
export function cachingExecutor(inner: SqlExecutor, ports: CachingPorts): SqlExecutor & { stats: CacheStats } {
  const stats: CacheStats = { hitSamples: new Set(), stored: 0 };
  const shaOf = new Map<string, Promise<string | null>>();
  const sha = (dbId: string) => {
    let p = shaOf.get(dbId);
    if (!p) shaOf.set(dbId, (p = ports.dbSha256(dbId)));
    return p;
  };
  return {
    stats,
    dispose: () => inner.dispose(),
    async evaluate(items, options, hooks = {}) {
      if (!cacheableOptions(options)) return inner.evaluate(items, options, hooks);
      const keys: Array<string | null> = await Promise.all(
        items.map(async (it) => {
          if (!cacheableItem(it)) return null;
          const s = await sha(it.dbId);
          return s === null ? null : verdictKey(it, s, ports.context, options);
        }),
      );
      const asked = keys.filter((k): k is string => k !== null);
      // A store that cannot be read answers nothing: every item is executed (a cache never fails a run).
      const found = asked.length > 0 ? await ports.store.get(asked).catch(() => []) : [];
      const byKey = new Map<string, CachedVerdict>();
      asked.forEach((k, i) => {
        const v = found[i];
        if (v !== undefined && validVerdict(v)) byKey.set(k, v);
      });
      const results: Array<ItemResult | undefined> = new Array(items.length);
      const misses: EvalItem[] = [];
      let done = 0;
      items.forEach((it, i) => {
        const k = keys[i]!;
        const v = k === null ? undefined : byKey.get(k);
        if (v === undefined) return void misses.push(it);
        const r = resultFromVerdict(v, it);
        results[i] = r;
        if (it.sample !== undefined) stats.hitSamples.add(it.sample);
        hooks.onEvent?.({ type: 'item', result: r, preview: null, done: ++done, total: items.length });
      });
      if (misses.length === 0) return results as ItemResult[];
      // Results are matched to items by sample and index (runEvaluation gives each item its position as `sample`).
      const id = (x: { sample?: number; index: number }) => `${x.sample ?? -1}:${x.index}`;
      const position = new Map<string, number>();
      items.forEach((it, i) => {
        if (results[i] === undefined) position.set(id(it), i);
      });
      const toStore: Array<[string, CachedVerdict]> = [];
      const keep = (r: ItemResult) => {
        const at = position.get(id(r));
        if (at === undefined || results[at] !== undefined) return;
        results[at] = r;
        // Stored under the bytes the executor actually opened; an executor that cannot say which stores nothing.
        if (keys[at] === null || r.dbSha256 === undefined || !cacheableResult(r)) return;
        toStore.push([verdictKey(items[at]!, r.dbSha256, ports.context, options), verdictOf(r)]);
      };
      try {
        const out = await inner.evaluate(misses, options, {
          signal: hooks.signal,
          onEvent: (e: EvalEvent) => {
            if (e.type === 'item') {
              keep(e.result);
              hooks.onEvent?.({ ...e, done: done + e.done, total: items.length });
            } else hooks.onEvent?.(e);
          },
        });
        for (const r of out) keep(r);
      } finally {
        // What finished is kept even when the run stops early. A store that cannot keep them
        // (a full disk) costs executions in a later run, never this run's results.
        if (toStore.length > 0) {
          const kept = await ports.store.put(toStore).then(
            () => true,
            () => false,
          );
          if (kept) stats.stored += toStore.length;
        }
      }
      return results.filter((r): r is ItemResult => r !== undefined);
    },
  };
}
