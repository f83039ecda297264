/**
 * SqlExecutor adapter: a pool of sql.js workers (the same worker module in the browser and
 * in Node). Items are grouped by database and a worker keeps to one database while it has
 * items, so each database is opened by as few workers as possible. A per-item timeout (both
 * queries together, as official) terminates the worker and starts a fresh one: only the item
 * that ran away is marked `timeout`; the next item runs normally.
 */
import { transfer, type Remote } from 'comlink';
import { vesOutcome, type VesOutcome } from '../core/compare/r-ves.ts';
import { CodedError, errorMessage, WorkbenchError, CancelledError } from '../core/errors.ts';
import type { AbortSignalLike, EvalEvent, EvalOptions, SqlExecutor } from '../core/eval/executor.ts';
import { onAbort } from '../core/engine/abort.ts';
import { itemResult } from '../core/eval/item-result.ts';
import { MAX_TIMER_MS, checkTimerMs } from '../core/eval/limits.ts';
import {
  DEFAULT_SUITE_SPEC,
  checkSuiteSpec,
  memorySuiteCache,
  type BuiltSuite,
  type SuiteCache,
} from '../core/ts/suite.ts';
import type { DbFileRef, EvalItem, ItemResult } from '../core/types.ts';
import type { ExecDone, ExecRequest, NeedDb, ProbeDone, SqlWorkerApi } from '../../workers/sql.api.ts';
import type { ProbeResult } from '../core/episode/types.ts';
import { poolSuites } from './sql-pool-suites.ts';
import type { DbSource } from '../app/ports.ts';

export interface WorkerHandle {
  api: Remote<SqlWorkerApi>;
  terminate(): void;
  /** Resolves with a reason when the worker dies on its own (crash, out of memory). */
  exited: Promise<string>;
}

interface SqlPoolOptions {
  spawn: () => WorkerHandle;
  dbSource: DbSource;
  /** Number of workers (default: the number of cores). */
  size: number;
  wasmUrl?: string;
  /**
   * sql.js's WebAssembly compiled once for every worker of the pool (WorkerInit.wasmModule):
   * called once, when the first worker starts. Absent: each worker compiles its own.
   */
  wasmModule?: () => Promise<WebAssembly.Module>;
  /** Bytes of opened databases each worker may keep (default 512 MiB). */
  cacheBytes?: number;
  /** Where built test suites are kept for other workers and runs (default: memory, for the pool's life). */
  suiteCache?: SuiteCache;
  /**
   * The workers read a database by pages when the source offers it (DbSource.openPaged):
   * the SQL workers of both generations (sql.js 1.17 and 1.8.0) do; without it they are given bytes.
   */
  paged?: boolean;
  /**
   * The sha256s of database contents that passed SQLite's quick_check (which reads every page),
   * so that a later opening of the same bytes skips it (default: this process's, shared by its
   * pools). Only a content that passed is ever added; bytes of unknown sha256 are always checked.
   */
  checkedDbs?: CheckedContents;
}

/** Sha256s of database contents whose whole-file check passed. */
export interface CheckedContents {
  has(sha256: string): boolean;
  add(sha256: string): void;
}

/**
 * This process's (or page's) checked contents: a database is checked once per content, not at
 * every opening (each worker's, each re-opening after the worker's cache let it go, each run).
 */
export const checkedInProcess: CheckedContents = new Set<string>();

/** What a worker is given to open a database, its identity, and whether its content was checked before. */
interface GivenDb {
  given: () => Uint8Array | DbFileRef;
  sha256: string | null;
  size: number;
  checked: boolean;
}

const TIMEOUT = Symbol('timeout');
/** A worker joins a database another worker holds when this many items per holder remain... */
const STEAL_MIN_ITEMS = 16;
/**
 * ...or, once the database's opening and some of its items have been timed, when each holder
 * still has more work than twice the opening time plus this: at the end of a run, a worker
 * with nothing else to do helps with a slow database instead of waiting for it.
 */
const STEAL_MIN_MS = 250;
/** A worker that exited under a request (crashed, killed): the slot restarts it, the item is marked. */
class WorkerDied extends CodedError<'FAILED'> {
  override readonly name = 'WorkerDied';
  constructor(reason: string) {
    super('FAILED', reason);
  }
}

interface Slot {
  handle: WorkerHandle;
  ready: Promise<unknown>;
  currentDb: string | null;
  /** Databases opened on this slot so far (tells a request sent before an opening). */
  loads: number;
  /** Databases opened in this slot's worker (it may have let some go since: a hint, never trusted). */
  held: Set<string>;
  /**
   * The sha256 of the bytes this slot's worker last opened, per database (null: not known). An
   * item's result carries it (ItemResult.dbSha256): the identity of what it was executed on.
   */
  shas: Map<string, string | null>;
}

/**
 * A request posted to a worker before the pool waits for it: the worker takes the next item as
 * soon as it finishes the current one, instead of waiting for the main thread to receive the
 * result and post the next request (a thread hand-off per item, slow on a busy machine).
 * Only an item of the database of the item before it is posted ahead (see `evaluate`), so
 * nothing the pool posts for that item (opening its database, asking again) ever queues behind
 * a query that is not timed.
 */
interface Sent<T> {
  handle: WorkerHandle;
  loads: number;
  promise: Promise<T>;
  /**
   * The item's own timer: it starts when the worker takes the request (once the worker has
   * answered the request ahead of it, or has started when there is none), whether or not the
   * pool waits for it yet, and resolves TIMEOUT at the item's limit unless answered first.
   */
  timedOut: Promise<typeof TIMEOUT>;
  /** Stops the timer (answered, or posted to a worker that was replaced). */
  cancel(): void;
}

/**
 * The sha256 of the database an item was just executed on in `slot`'s worker: the bytes that
 * worker last opened (it answers need-db rather than use bytes it no longer holds).
 */
function dbShaOf(slot: Slot, dbId: string): { dbSha256?: string } {
  const sha = slot.shas.get(dbId);
  return typeof sha === 'string' ? { dbSha256: sha } : {};
}

/** What one evaluation uses of its pool: its workers' calls and restarts, the databases, the suites. */
interface PoolAccess {
  call<T>(
    slot: Slot,
    fn: (api: Remote<SqlWorkerApi>) => Promise<T>,
    timeoutMs: number,
    sent?: Sent<T> | null,
  ): Promise<T | typeof TIMEOUT>;
  restart(slot: Slot): void;
  dbToGive(dbId: string): Promise<GivenDb>;
  /** The content of sha256 passed its check (a successful opening that ran it). */
  passedCheck(sha256: string | null): void;
  suiteCache: SuiteCache;
  building: Map<string, Promise<BuiltSuite | string>>;
}

type Hooks = { signal?: AbortSignalLike; onEvent?: (e: EvalEvent) => void };

/**
 * One call of `SqlPool.evaluate`: its items grouped by database, the workers' loops over them
 * (which database each worker takes, the item posted ahead), and each item's steps (its
 * database opened, its request, its timeout, R-VES and ts after EX, its result).
 */
class PoolEvaluation {
  readonly results: ItemResult[];
  readonly #position = new Map<EvalItem, number>();
  #done = 0;
  /** Items by database, in order of first appearance. */
  readonly #queues = new Map<string, EvalItem[]>();
  readonly #wantsTs: boolean;
  /** Databases that cannot be opened, with the reason (given up for the rest of the run). */
  readonly #badDbs = new Map<string, string>();
  /** Workers on each database. */
  readonly #active = new Map<string, number>();
  /** Per database: time to open it in a worker, and execution time of its items so far. */
  readonly #openMs = new Map<string, number>();
  readonly #itemMs = new Map<string, { total: number; n: number }>();
  /** Every item's timer that is running, stopped when the evaluation ends however it ends. */
  readonly #timers = new Set<Sent<unknown>>();
  #suites: ReturnType<typeof poolSuites<Slot>> | null = null;

  constructor(
    private readonly pool: PoolAccess,
    private readonly items: readonly EvalItem[],
    private readonly options: EvalOptions,
    private readonly hooks: Hooks,
  ) {
    this.results = new Array(items.length);
    items.forEach((it, i) => this.#position.set(it, i));
    for (const it of items) {
      let q = this.#queues.get(it.dbId);
      if (!q) this.#queues.set(it.dbId, (q = []));
      q.push(it);
    }
    this.#wantsTs = options.metrics.includes('ts');
  }

  #finish(item: EvalItem, result: ItemResult, exec: ExecDone | null = null): void {
    // Metric ts on an item that never reached its checks (timeout, crash, missing database): not scored.
    if (this.#wantsTs && result.ts === undefined) result.ts = null;
    this.results[this.#position.get(item)!] = result;
    this.#done += 1;
    const preview =
      exec && this.options.previewRows > 0
        ? {
            predColumns: exec.predColumns,
            goldColumns: exec.goldColumns,
            predRows: exec.predPreview,
            goldRows: exec.goldPreview,
          }
        : null;
    this.hooks.onEvent?.({ type: 'item', result, preview, done: this.#done, total: this.items.length });
  }

  /** Missing databases are settled at once; so is one that is not a readable file (a directory, a FIFO...): nothing is opened. */
  async settleMissing(dbSource: DbSource): Promise<void> {
    for (const dbId of [...this.#queues.keys()]) {
      const unusable = (await dbSource.unusable?.(dbId)) ?? null;
      if (unusable !== null || !(await dbSource.has(dbId))) {
        const error = unusable ?? `database ${dbId} not found: expected ${dbSource.describe(dbId)}`;
        for (const it of this.#queues.get(dbId)!) this.#finish(it, itemResult(it, { status: 'missing-db', error }));
        this.#queues.delete(dbId);
      }
    }
  }

  /** Metric ts: the checks after EX, with the suite built or loaded once per database (sql-pool-suites.ts). */
  startSuites(): void {
    const spec = this.options.suite ?? DEFAULT_SUITE_SPEC;
    if (this.#wantsTs) checkSuiteSpec(spec, 'evaluation options');
    // The golds a database's suite is distilled on: those of this evaluation's items.
    const goldsOf = new Map<string, string[]>();
    for (const [dbId, q] of this.#queues) goldsOf.set(dbId, [...new Set(q.map((it) => it.goldSql))]);
    this.#suites = poolSuites<Slot>({
      spec,
      goldsOf,
      cache: this.pool.suiteCache,
      building: this.pool.building,
      timeoutMs: this.options.timeoutMs,
      onEvent: this.hooks.onEvent,
      call: (slot, fn, ms) => this.pool.call(slot, fn, ms).then((r) => (r === TIMEOUT ? null : r)),
      ensureDb: (slot, dbId) => this.#ensureDb(slot, dbId),
    });
  }

  /** Items left to run. */
  pending(): number {
    return [...this.#queues.values()].reduce((n, q) => n + q.length, 0);
  }

  stopTimers(): void {
    for (const t of [...this.#timers]) t.cancel();
  }

  #timed(dbId: string, ms: number): void {
    const t = this.#itemMs.get(dbId);
    if (t) {
      t.total += ms;
      t.n += 1;
    } else this.#itemMs.set(dbId, { total: ms, n: 1 });
  }

  #worthJoining(dbId: string, left: number, busy: number): boolean {
    const open = this.#openMs.get(dbId);
    const t = this.#itemMs.get(dbId);
    if (open === undefined || !t) return false;
    return (left * (t.total / t.n)) / busy > 2 * open + STEAL_MIN_MS;
  }

  /** The next item of the slot's database, or of the database it moves to (undefined: none left for it). */
  #pick(slot: Slot): EvalItem | undefined {
    let dbId = slot.currentDb;
    if (!dbId || !this.#queues.get(dbId)?.length) {
      const best = this.#nextDb(slot);
      if (best === null) return undefined;
      if (slot.currentDb) this.#active.set(slot.currentDb, (this.#active.get(slot.currentDb) ?? 1) - 1);
      dbId = best;
      slot.currentDb = dbId;
      this.#active.set(dbId, (this.#active.get(dbId) ?? 0) + 1);
    }
    return this.#queues.get(dbId)!.shift();
  }

  #nextDb(slot: Slot): string | null {
    let best: string | null = null;
    let bestScore = -Infinity;
    for (const [id, q] of this.#queues) {
      const busy = this.#active.get(id) ?? 0;
      // Prefer a database nobody works on; join one only when enough items are left
      // to pay for opening a second copy of it.
      if (!q.length || (busy > 0 && q.length < STEAL_MIN_ITEMS * busy && !this.#worthJoining(id, q.length, busy)))
        continue;
      // Among the rest, one this worker has open already (the facts read before a run
      // opened them): no second opening of a database another worker could open once.
      const score = q.length - busy * 1e9 + (slot.held.has(id) ? 1e6 : 0);
      if (score > bestScore) {
        bestScore = score;
        best = id;
      }
    }
    return best;
  }

  async #ensureDb(slot: Slot, dbId: string): Promise<string | null> {
    const known = this.#badDbs.get(dbId);
    if (known) return known;
    const t0 = performance.now();
    try {
      // The opening time that decides joining leaves out the start of a fresh worker.
      await slot.ready.catch(() => undefined);
      const t1 = performance.now();
      const { given, sha256, size, checked } = await this.pool.dbToGive(dbId);
      // Not known until the worker holds these bytes: a result computed meanwhile has no identity.
      slot.shas.delete(dbId);
      const r = await this.pool.call(slot, (api) => api.loadDb(dbId, given(), { checked }), 10 * 60_000);
      if (r === TIMEOUT) throw new WorkbenchError('FAILED', 'opening took longer than 10 minutes', `database ${dbId}`);
      if (r.quickChecked) this.pool.passedCheck(sha256);
      slot.loads += 1;
      slot.held.add(dbId);
      slot.shas.set(dbId, sha256);
      this.#openMs.set(dbId, Math.max(performance.now() - t1, this.#openMs.get(dbId) ?? 0));
      this.hooks.onEvent?.({
        type: 'db-loaded',
        dbId,
        ms: performance.now() - t0,
        sizeBytes: size,
        quickChecked: r.quickChecked,
      });
      return null;
    } catch (err) {
      // The worker died while opening it: the item under it is marked by runItem, the
      // restarted worker opens the database again for the next items. Only a database that
      // cannot be opened (bad bytes, too slow) is given up for the rest of the run.
      if (err instanceof WorkerDied) throw err;
      const msg = errorMessage(err);
      this.#badDbs.set(dbId, msg);
      return msg;
    }
  }

  #request(item: EvalItem): ExecRequest {
    const { options } = this;
    return {
      dbId: item.dbId,
      predSql: item.predSql,
      goldSql: item.goldSql,
      readOnly: options.readOnly,
      softF1: options.metrics.includes('soft-f1'),
      previewRows: options.previewRows,
      reuseGold: options.reuse ?? true,
      ...(options.exRule === 'spider' ? { exRule: 'spider' as const } : {}),
    };
  }

  /**
   * Posts an item's request now; `after` is the request posted to the same worker just before
   * it (the worker takes this one when it has answered that one), or null.
   */
  #send(slot: Slot, item: EvalItem, after: Sent<unknown> | null): Sent<ExecDone | NeedDb> {
    const promise = slot.handle.api.evaluate(this.#request(item));
    let timer: ReturnType<typeof setTimeout> | undefined;
    let over = false;
    const sent: Sent<ExecDone | NeedDb> = {
      handle: slot.handle,
      loads: slot.loads,
      promise,
      timedOut: new Promise<typeof TIMEOUT>((resolve) => {
        const start = () => {
          if (over) return;
          timer = setTimeout(() => resolve(TIMEOUT), Math.min(this.options.timeoutMs, MAX_TIMER_MS));
        };
        // Taken by the worker when it has answered the one before (start-up is not timed).
        const taken = after && after.handle === slot.handle ? after.promise : slot.ready;
        taken.then(start, start);
      }),
      cancel: () => {
        over = true;
        clearTimeout(timer);
        this.#timers.delete(sent);
      },
    };
    this.#timers.add(sent);
    // A request to a worker that was restarted is never awaited (and never answered: cancelled).
    promise.then(sent.cancel, sent.cancel);
    return sent;
  }

  /** One worker's loop: its items one after another, the next one posted ahead when nothing else must run between them. */
  async loop(slot: Slot): Promise<void> {
    // R-VES times each correct item right after it: nothing may be queued in the worker then.
    // Nor while metric ts runs the checks that follow an item's EX.
    const ahead = !this.options.metrics.includes('r-ves') && !this.#wantsTs;
    let item = this.#pick(slot);
    let sent: Sent<ExecDone | NeedDb> | null = null;
    while (item && !this.hooks.signal?.aborted) {
      let next: EvalItem | undefined;
      let nextSent: Sent<ExecDone | NeedDb> | null = null;
      if (ahead) {
        // This item's request goes first, then the next one's, in the worker's order. One
        // posted to a worker since replaced, or before a database was opened on it (it was
        // answered need-db), is posted again: never behind the next item's query.
        if (!sent || sent.handle !== slot.handle || sent.loads !== slot.loads) {
          sent?.cancel();
          sent = this.#send(slot, item, null);
        }
        // Only an item of the same database goes ahead: if this item's database must be
        // opened, the one ahead answers need-db at once instead of running a query that the
        // opening would wait behind. The next database's first item waits for this result.
        const same = slot.currentDb !== null && (this.#queues.get(slot.currentDb)?.length ?? 0) > 0;
        next = same ? this.#pick(slot) : undefined;
        if (next) nextSent = this.#send(slot, next, sent);
      }
      await this.#runItem(slot, item, sent);
      item = next ?? this.#pick(slot);
      sent = next ? nextSent : null;
    }
    sent?.cancel();
    if (slot.currentDb) this.#active.set(slot.currentDb, (this.#active.get(slot.currentDb) ?? 1) - 1);
    slot.currentDb = null;
  }

  /** One item: executed (its database opened when the worker asks), then R-VES and ts after EX, then its result. */
  async #runItem(slot: Slot, item: EvalItem, sent: Sent<ExecDone | NeedDb> | null = null): Promise<void> {
    const req = this.#request(item);
    this.hooks.onEvent?.({
      type: 'item-started',
      index: item.index,
      questionId: item.questionId,
      dbId: item.dbId,
      sample: item.sample ?? 0,
    });
    const onDb = new ItemOnDb(slot, item.dbId, this.pool, (s, dbId) => this.#ensureDb(s, dbId));
    let exec: ExecDone | typeof TIMEOUT | string;
    try {
      exec = await onDb.run((api) => api.evaluate(req), this.options.timeoutMs, sent);
    } catch (err) {
      this.hooks.onEvent?.({ type: 'worker-restarted', reason: errorMessage(err) });
      this.#finish(item, itemResult(item, { status: 'error', error: `worker crashed: ${errorMessage(err)}` }));
      return;
    }
    if (exec === TIMEOUT) return this.#timedOut(item, req, onDb.ranOn);
    if (typeof exec === 'string') {
      this.#finish(item, itemResult(item, { status: 'error', error: exec, softF1: req.softF1 ? 0 : null }));
      return;
    }
    this.#timed(item.dbId, exec.elapsedMs);
    // Before a restart forgets what the worker held.
    const executedOn = dbShaOf(slot, item.dbId);
    if (exec.retire) {
      // Over a memory bound or with SQLite's limits changed: a fresh worker for what follows
      // (the request posted ahead to the old one is sent again to the new one).
      this.pool.restart(slot);
      this.hooks.onEvent?.({ type: 'worker-restarted', reason: `item ${item.index}: ${exec.retire}` });
    }
    const tsFields = this.#wantsTs
      ? await this.#suites!.tsOf(slot, item, exec, (fn, ms) => onDb.run(fn, ms).then((r) => (r === TIMEOUT ? null : r)))
      : {};
    const ves = await this.#rves(item, exec, onDb);
    this.#finish(item, executedResult(item, exec, ves, executedOn, tsFields), exec);
  }

  #timedOut(item: EvalItem, req: ExecRequest, ranOn: string | null | undefined): void {
    const { options } = this;
    this.#timed(item.dbId, options.timeoutMs);
    this.hooks.onEvent?.({ type: 'worker-restarted', reason: `item ${item.index} timed out` });
    this.#finish(
      item,
      itemResult(item, {
        status: 'timeout',
        softF1: req.softF1 ? 0 : null,
        rves: options.metrics.includes('r-ves') ? 0 : null,
        error: `timed out after ${options.timeoutMs / 1000} s (prediction and gold together)`,
        ...(typeof ranOn === 'string' ? { dbSha256: ranOn } : {}),
      }),
    );
  }

  /** Metric R-VES of an executed item: its timed repetitions when EX accepted it. */
  async #rves(item: EvalItem, exec: ExecDone, onDb: ItemOnDb): Promise<ItemVes> {
    const { options } = this;
    if (!options.metrics.includes('r-ves')) return { rves: null, ratio: null, notTimed: null };
    if (exec.ex !== 1) return { rves: 0, ratio: null, notTimed: null };
    // The limit of all repetitions together, at most the longest delay a timer can wait.
    const limitMs = Math.min(options.timeoutMs * options.vesIterations, MAX_TIMER_MS);
    const timed = await onDb
      .run(
        (api) =>
          api.timeQueries({
            dbId: item.dbId,
            predSql: item.predSql,
            goldSql: item.goldSql,
            iterations: options.vesIterations,
          }),
        limitMs,
      )
      .catch((err: unknown) => `the timing failed: ${errorMessage(err)}`);
    // An item that could not be timed is left out of R-VES and counted apart, never reward 0.
    const outcome: VesOutcome =
      timed === TIMEOUT
        ? {
            notTimed: `the ${options.vesIterations} timed repetitions took longer than ${Math.round(limitMs / 1000)} s`,
          }
        : typeof timed === 'string'
          ? { notTimed: timed }
          : timed.notTimed !== undefined
            ? { notTimed: timed.notTimed }
            : vesOutcome(timed.ratios);
    return 'notTimed' in outcome
      ? { rves: null, ratio: null, notTimed: outcome.notTimed }
      : { rves: outcome.reward, ratio: outcome.ratio, notTimed: null };
  }
}

/** An item's R-VES: its reward, its time ratio, or why it was not timed. */
interface ItemVes {
  rves: number | null;
  ratio: number | null;
  notTimed: string | null;
}

/**
 * Requests of one item on its slot's worker: a worker that answers need-db gets the database
 * opened and is asked again (once); `ranOn` is the identity of what the worker held when it
 * took the last request (a timeout restarts it, forgetting that).
 */
class ItemOnDb {
  ranOn: string | null | undefined;

  constructor(
    private readonly slot: Slot,
    private readonly dbId: string,
    private readonly pool: PoolAccess,
    private readonly ensureDb: (slot: Slot, dbId: string) => Promise<string | null>,
  ) {}

  async run<T>(
    fn: (api: Remote<SqlWorkerApi>) => Promise<T | NeedDb>,
    ms: number,
    ahead: Sent<T | NeedDb> | null = null,
  ): Promise<T | typeof TIMEOUT | string> {
    const { slot } = this;
    for (let attempt = 0; attempt < 2; attempt++) {
      // What the worker holds when it takes the request (a timeout restarts it, forgetting that).
      this.ranOn = slot.shas.get(this.dbId);
      const r = await this.pool.call(slot, fn, ms, ahead);
      // Posted before a database was opened on this worker: ask again before opening one.
      const early = ahead !== null && ahead.handle === slot.handle && ahead.loads !== slot.loads;
      ahead = null;
      if (r === TIMEOUT || (r as NeedDb).kind !== 'need-db') return r as T | typeof TIMEOUT;
      if (early) {
        attempt -= 1;
        continue;
      }
      const err = await this.ensureDb(slot, this.dbId);
      if (err) return err;
    }
    return `database ${this.dbId} could not be kept open in the worker`;
  }
}

/** The result of an item the worker executed, with its R-VES, the identity of its database and its ts fields. */
function executedResult(
  item: EvalItem,
  exec: ExecDone,
  ves: ItemVes,
  executedOn: { dbSha256?: string },
  tsFields: Partial<ItemResult>,
): ItemResult {
  return itemResult(item, {
    status: exec.status,
    ex: exec.ex,
    softF1: exec.softF1,
    rves: ves.rves,
    timeRatio: ves.ratio,
    error: exec.error,
    mutatedDb: exec.mutatedDb,
    predRowCount: exec.predRowCount,
    goldRowCount: exec.goldRowCount,
    elapsedMs: exec.elapsedMs,
    ...(exec.resultKey !== undefined ? { resultKey: exec.resultKey } : {}),
    ...(exec.goldReused ? { goldReused: true } : {}),
    ...(exec.nondeterministicView !== undefined ? { nondeterministicView: exec.nondeterministicView } : {}),
    ...executedOn,
    ...(ves.notTimed !== null ? { rvesNotTimed: ves.notTimed } : {}),
    ...(exec.predRowCount !== null ? { predColumnCount: exec.predColumns.length } : {}),
    ...(exec.goldRowCount !== null ? { goldColumnCount: exec.goldColumns.length } : {}),
    ...tsFields,
  });
}

export class SqlPool implements SqlExecutor {
  private readonly slots: Slot[] = [];
  private disposed = false;
  private readonly suiteCache: SuiteCache;
  /** Suites being built, by suiteKey: a second worker waits for the first instead of building again. */
  private readonly building = new Map<string, Promise<BuiltSuite | string>>();

  constructor(private readonly opts: SqlPoolOptions) {
    if (!Number.isInteger(opts.size) || opts.size < 1)
      throw new WorkbenchError('BAD_OPTION', `pool size must be a positive integer, got ${opts.size}`);
    this.suiteCache = opts.suiteCache ?? memorySuiteCache();
  }

  /**
   * What a worker is given to open `dbId`: a reference it reads by pages when the pool's
   * workers can and the source offers one, else a fresh copy of the bytes (transferred).
   */
  async #dbToGive(dbId: string): Promise<GivenDb> {
    const { dbSource } = this.opts;
    const checked = (sha256: string | null) => sha256 !== null && this.#checked.has(sha256);
    if (this.opts.paged && dbSource.openPaged) {
      const { ref, sha256 } = await dbSource.openPaged(dbId);
      return { given: () => ref, sha256, size: ref.size, checked: checked(sha256) };
    }
    const { bytes, sha256 } = await dbSource.load(dbId);
    return { given: () => transfer(bytes, [bytes.buffer]), sha256, size: bytes.length, checked: checked(sha256) };
  }

  get #checked(): CheckedContents {
    return this.opts.checkedDbs ?? checkedInProcess;
  }

  #passedCheck(sha256: string | null): void {
    if (sha256 !== null) this.#checked.add(sha256);
  }

  private compiled: Promise<WebAssembly.Module | undefined> | null = null;

  private spawnSlot(): Slot {
    const handle = this.opts.spawn();
    // Compiled while the worker starts; a module that cannot be made leaves each worker to compile its own.
    this.compiled ??= this.opts.wasmModule?.().catch(() => undefined) ?? Promise.resolve(undefined);
    const ready = this.compiled.then((wasmModule) =>
      handle.api.init({
        wasmUrl: this.opts.wasmUrl,
        cacheBytes: this.opts.cacheBytes ?? 512 * 1024 * 1024,
        ...(wasmModule ? { wasmModule } : {}),
      }),
    );
    return { handle, ready, currentDb: null, loads: 0, held: new Set(), shas: new Map() };
  }

  private restart(slot: Slot): void {
    slot.handle.terminate();
    const { handle, ready } = this.spawnSlot();
    slot.handle = handle;
    slot.ready = ready;
    slot.held.clear();
    slot.shas.clear();
  }

  /**
   * Runs `fn` on the slot's worker, or waits for `sent` when it was posted to the same worker;
   * a timeout or a crash restarts the worker. The timeout of `fn` starts here (the worker has
   * nothing else queued: the pool posts one request at a time, bar an item posted ahead); that
   * of `sent` is its own, started when the worker took it (Sent.timedOut).
   */
  private async call<T>(
    slot: Slot,
    fn: (api: Remote<SqlWorkerApi>) => Promise<T>,
    timeoutMs: number,
    sent: Sent<T> | null = null,
  ): Promise<T | typeof TIMEOUT> {
    const died = slot.handle.exited.then((reason) => {
      throw new WorkerDied(reason);
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // A worker can die while it starts (sql.js failing to load, killed): that must not hang
      // the run. Start-up is not part of an item's timeout.
      await Promise.race([slot.ready, died]);
      const own = sent && sent.handle === slot.handle ? sent : null;
      const timeout =
        own?.timedOut ??
        new Promise<typeof TIMEOUT>((resolve) => {
          // A longer delay would fire at once (see limits.ts): callers validate, this never overflows.
          timer = setTimeout(() => resolve(TIMEOUT), Math.min(timeoutMs, MAX_TIMER_MS));
        });
      const request = own ? own.promise : fn(slot.handle.api);
      const r = await Promise.race([request, timeout, died]);
      if (r === TIMEOUT) this.restart(slot);
      return r;
    } catch (err) {
      if (err instanceof WorkerDied) this.restart(slot);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  async evaluate(
    items: readonly EvalItem[],
    options: EvalOptions,
    hooks: { signal?: AbortSignalLike; onEvent?: (e: EvalEvent) => void } = {},
  ): Promise<ItemResult[]> {
    if (this.disposed) throw new WorkbenchError('INTERNAL', 'SqlPool used after dispose()');
    // Before any work: a timeout the platform cannot time would time out every item at once.
    checkTimerMs(options.timeoutMs, 'timeoutMs');
    const run = new PoolEvaluation(
      {
        call: (slot, fn, ms, sent) => this.call(slot, fn, ms, sent),
        restart: (slot) => this.restart(slot),
        dbToGive: (dbId) => this.#dbToGive(dbId),
        passedCheck: (sha256) => this.#passedCheck(sha256),
        suiteCache: this.suiteCache,
        building: this.building,
      },
      items,
      options,
      hooks,
    );
    await run.settleMissing(this.opts.dbSource);
    run.startSuites();
    const pending = run.pending();
    while (this.slots.length < Math.min(this.opts.size, pending)) this.slots.push(this.spawnSlot());
    const slots = this.slots.slice(0, Math.min(this.opts.size, pending));
    // Its listener is removed when the evaluation ends: a long-lived signal (a watch) gathers none per call.
    let stopListening = () => undefined as void;
    const aborted = new Promise<never>((_, reject) => {
      stopListening = onAbort(hooks.signal, () => reject(new CancelledError('evaluation aborted')));
    });
    aborted.catch(() => undefined);
    try {
      await Promise.race([Promise.all(slots.map((slot) => run.loop(slot))), aborted]);
    } catch (err) {
      for (const slot of this.slots) slot.handle.terminate();
      this.slots.length = 0;
      throw err;
    } finally {
      stopListening();
      run.stopTimers();
    }
    return run.results;
  }

  /** The probes' own worker (multi-turn episodes): never one of the evaluation's workers. */
  private probeSlot: Slot | null = null;
  /** Probes run one at a time on it, in the order asked. */
  private probeQueue: Promise<unknown> = Promise.resolve();

  /**
   * One probe of a policy (src/core/episode): a single read-only statement on `dbId`, run in a
   * worker of its own with the isolation a prediction gets (SQLite's query_only, the worker's
   * write checks: a connection the probe changed is re-opened from the pristine bytes). A probe
   * past `timeoutMs` is stopped by replacing the worker, as an item's timeout is; a database that
   * cannot be opened is this probe's error only (it is never marked bad for the run's items).
   */
  probe(dbId: string, sql: string, options: { timeoutMs: number }): Promise<ProbeResult> {
    const run = this.probeQueue.then(() => this.runProbe(dbId, sql, options.timeoutMs));
    this.probeQueue = run.catch(() => undefined);
    return run;
  }

  private async runProbe(dbId: string, sql: string, timeoutMs: number): Promise<ProbeResult> {
    checkTimerMs(timeoutMs, 'timeoutMs');
    const failed = (error: string): ProbeResult => ({ columns: [], rows: [], classes: [], error });
    if (this.disposed) return failed('the SQL worker pool was closed');
    const slot = (this.probeSlot ??= this.spawnSlot());
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        if (!slot.held.has(dbId)) {
          const { dbSource } = this.opts;
          if (!(await dbSource.has(dbId)))
            return failed(`database ${dbId} not found: expected ${dbSource.describe(dbId)}`);
          const unusable = await dbSource.unusable?.(dbId);
          if (unusable) return failed(unusable);
          const { given, sha256, checked } = await this.#dbToGive(dbId);
          slot.shas.delete(dbId);
          const opened = await this.call(slot, (api) => api.loadDb(dbId, given(), { checked }), 10 * 60_000);
          if (opened === TIMEOUT) return failed(`database ${dbId}: opening took longer than 10 minutes`);
          if (opened.quickChecked) this.#passedCheck(sha256);
          slot.held.add(dbId);
          slot.shas.set(dbId, sha256);
        }
        const r = await this.call<ProbeDone | NeedDb>(slot, (api) => api.probe(dbId, sql), timeoutMs);
        if (r === TIMEOUT) return { columns: [], rows: [], classes: [], timedOut: true };
        if (r.kind === 'need-db') {
          slot.held.delete(dbId);
          continue;
        }
        const { kind: _kind, ...result } = r;
        return result;
      } catch (err) {
        // The worker died (it was restarted) or the database could not be read: this probe's error.
        return failed(errorMessage(err));
      }
    }
    return failed(`database ${dbId} could not be kept open in the probe's SQL worker`);
  }

  /**
   * Starts up to `count` workers now (sql.js compiles while the caller reads its inputs);
   * `evaluate` uses them as it would have started them. Default: the pool's size.
   */
  warm(count = this.opts.size): void {
    if (this.disposed) return;
    while (this.slots.length < Math.min(this.opts.size, count)) this.slots.push(this.spawnSlot());
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const slot of this.slots) slot.handle.terminate();
    this.slots.length = 0;
    this.probeSlot?.handle.terminate();
    this.probeSlot = null;
  }
}
