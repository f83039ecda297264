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
   * the SQL worker of sql.js 1.17 does; the older generation's worker is given bytes.
   */
  paged?: boolean;
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
  async #dbToGive(dbId: string): Promise<{ given: () => Uint8Array | DbFileRef; sha256: string | null; size: number }> {
    const { dbSource } = this.opts;
    if (this.opts.paged && dbSource.openPaged) {
      const { ref, sha256 } = await dbSource.openPaged(dbId);
      return { given: () => ref, sha256, size: ref.size };
    }
    const { bytes, sha256 } = await dbSource.load(dbId);
    return { given: () => transfer(bytes, [bytes.buffer]), sha256, size: bytes.length };
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
    const { dbSource } = this.opts;
    const results: ItemResult[] = new Array(items.length);
    const position = new Map<EvalItem, number>();
    items.forEach((it, i) => position.set(it, i));
    let done = 0;
    const finish = (item: EvalItem, result: ItemResult, exec: ExecDone | null = null) => {
      // Metric ts on an item that never reached its checks (timeout, crash, missing database): not scored.
      if (options.metrics.includes('ts') && result.ts === undefined) result.ts = null;
      results[position.get(item)!] = result;
      done += 1;
      const preview =
        exec && options.previewRows > 0
          ? {
              predColumns: exec.predColumns,
              goldColumns: exec.goldColumns,
              predRows: exec.predPreview,
              goldRows: exec.goldPreview,
            }
          : null;
      hooks.onEvent?.({ type: 'item', result, preview, done, total: items.length });
    };

    // Group by database, in order of first appearance; missing databases are settled at once.
    const queues = new Map<string, EvalItem[]>();
    for (const it of items) {
      let q = queues.get(it.dbId);
      if (!q) queues.set(it.dbId, (q = []));
      q.push(it);
    }
    // So is a database that is not a readable file (a directory, a FIFO...): nothing is opened.
    for (const dbId of [...queues.keys()]) {
      const unusable = (await dbSource.unusable?.(dbId)) ?? null;
      if (unusable !== null || !(await dbSource.has(dbId))) {
        const error = unusable ?? `database ${dbId} not found: expected ${dbSource.describe(dbId)}`;
        for (const it of queues.get(dbId)!) finish(it, itemResult(it, { status: 'missing-db', error }));
        queues.delete(dbId);
      }
    }
    const wantsTs = options.metrics.includes('ts');
    const spec = options.suite ?? DEFAULT_SUITE_SPEC;
    if (wantsTs) checkSuiteSpec(spec, 'evaluation options');
    // The golds a database's suite is distilled on: those of this evaluation's items.
    const goldsOf = new Map<string, string[]>();
    for (const [dbId, q] of queues) goldsOf.set(dbId, [...new Set(q.map((it) => it.goldSql))]);
    const badDbs = new Map<string, string>();
    const active = new Map<string, number>();
    // Per database: time to open it in a worker, and execution time of its items so far.
    const openMs = new Map<string, number>();
    const itemMs = new Map<string, { total: number; n: number }>();
    const timed = (dbId: string, ms: number) => {
      const t = itemMs.get(dbId);
      if (t) {
        t.total += ms;
        t.n += 1;
      } else itemMs.set(dbId, { total: ms, n: 1 });
    };
    const worthJoining = (dbId: string, left: number, busy: number): boolean => {
      const open = openMs.get(dbId);
      const t = itemMs.get(dbId);
      if (open === undefined || !t) return false;
      return (left * (t.total / t.n)) / busy > 2 * open + STEAL_MIN_MS;
    };

    const pick = (slot: Slot): EvalItem | undefined => {
      let dbId = slot.currentDb;
      if (!dbId || !queues.get(dbId)?.length) {
        let best: string | null = null;
        let bestScore = -Infinity;
        for (const [id, q] of queues) {
          const busy = active.get(id) ?? 0;
          // Prefer a database nobody works on; join one only when enough items are left
          // to pay for opening a second copy of it.
          if (!q.length || (busy > 0 && q.length < STEAL_MIN_ITEMS * busy && !worthJoining(id, q.length, busy)))
            continue;
          // Among the rest, one this worker has open already (the facts read before a run
          // opened them): no second opening of a database another worker could open once.
          const score = q.length - busy * 1e9 + (slot.held.has(id) ? 1e6 : 0);
          if (score > bestScore) {
            bestScore = score;
            best = id;
          }
        }
        if (best === null) return undefined;
        if (slot.currentDb) active.set(slot.currentDb, (active.get(slot.currentDb) ?? 1) - 1);
        dbId = best;
        slot.currentDb = dbId;
        active.set(dbId, (active.get(dbId) ?? 0) + 1);
      }
      return queues.get(dbId)!.shift();
    };

    const ensureDb = async (slot: Slot, dbId: string): Promise<string | null> => {
      const known = badDbs.get(dbId);
      if (known) return known;
      const t0 = performance.now();
      try {
        // The opening time that decides joining leaves out the start of a fresh worker.
        await slot.ready.catch(() => undefined);
        const t1 = performance.now();
        const { given, sha256, size } = await this.#dbToGive(dbId);
        // Not known until the worker holds these bytes: a result computed meanwhile has no identity.
        slot.shas.delete(dbId);
        const r = await this.call(slot, (api) => api.loadDb(dbId, given()), 10 * 60_000);
        if (r === TIMEOUT)
          throw new WorkbenchError('FAILED', 'opening took longer than 10 minutes', `database ${dbId}`);
        slot.loads += 1;
        slot.held.add(dbId);
        slot.shas.set(dbId, sha256);
        openMs.set(dbId, Math.max(performance.now() - t1, openMs.get(dbId) ?? 0));
        hooks.onEvent?.({ type: 'db-loaded', dbId, ms: performance.now() - t0, sizeBytes: size });
        return null;
      } catch (err) {
        // The worker died while opening it: the item under it is marked by runItem, the
        // restarted worker opens the database again for the next items. Only a database that
        // cannot be opened (bad bytes, too slow) is given up for the rest of the run.
        if (err instanceof WorkerDied) throw err;
        const msg = errorMessage(err);
        badDbs.set(dbId, msg);
        return msg;
      }
    };

    const request = (item: EvalItem): ExecRequest => ({
      dbId: item.dbId,
      predSql: item.predSql,
      goldSql: item.goldSql,
      readOnly: options.readOnly,
      softF1: options.metrics.includes('soft-f1'),
      previewRows: options.previewRows,
      reuseGold: options.reuse ?? true,
      ...(options.exRule === 'spider' ? { exRule: 'spider' as const } : {}),
    });
    // Every item's timer that is running, stopped when the evaluation ends however it ends.
    const timers = new Set<Sent<unknown>>();
    /**
     * Posts an item's request now; `after` is the request posted to the same worker just before
     * it (the worker takes this one when it has answered that one), or null.
     */
    const send = (slot: Slot, item: EvalItem, after: Sent<unknown> | null): Sent<ExecDone | NeedDb> => {
      const promise = slot.handle.api.evaluate(request(item));
      let timer: ReturnType<typeof setTimeout> | undefined;
      let over = false;
      const sent: Sent<ExecDone | NeedDb> = {
        handle: slot.handle,
        loads: slot.loads,
        promise,
        timedOut: new Promise<typeof TIMEOUT>((resolve) => {
          const start = () => {
            if (over) return;
            timer = setTimeout(() => resolve(TIMEOUT), Math.min(options.timeoutMs, MAX_TIMER_MS));
          };
          // Taken by the worker when it has answered the one before (start-up is not timed).
          const taken = after && after.handle === slot.handle ? after.promise : slot.ready;
          taken.then(start, start);
        }),
        cancel: () => {
          over = true;
          clearTimeout(timer);
          timers.delete(sent);
        },
      };
      timers.add(sent);
      // A request to a worker that was restarted is never awaited (and never answered: cancelled).
      promise.then(sent.cancel, sent.cancel);
      return sent;
    };

    const runItem = async (slot: Slot, item: EvalItem, sent: Sent<ExecDone | NeedDb> | null = null): Promise<void> => {
      const req = request(item);
      hooks.onEvent?.({
        type: 'item-started',
        index: item.index,
        questionId: item.questionId,
        dbId: item.dbId,
        sample: item.sample ?? 0,
      });
      let ranOn: string | null | undefined;
      const withDb = async <T>(
        fn: (api: Remote<SqlWorkerApi>) => Promise<T | NeedDb>,
        ms: number,
        ahead: Sent<T | NeedDb> | null = null,
      ): Promise<T | typeof TIMEOUT | string> => {
        for (let attempt = 0; attempt < 2; attempt++) {
          // What the worker holds when it takes the request (a timeout restarts it, forgetting that).
          ranOn = slot.shas.get(item.dbId);
          const r = await this.call(slot, fn, ms, ahead);
          // Posted before a database was opened on this worker: ask again before opening one.
          const early = ahead !== null && ahead.handle === slot.handle && ahead.loads !== slot.loads;
          ahead = null;
          if (r === TIMEOUT || (r as NeedDb).kind !== 'need-db') return r as T | typeof TIMEOUT;
          if (early) {
            attempt -= 1;
            continue;
          }
          const err = await ensureDb(slot, item.dbId);
          if (err) return err;
        }
        return `database ${item.dbId} could not be kept open in the worker`;
      };
      let exec: ExecDone | typeof TIMEOUT | string;
      try {
        exec = await withDb((api) => api.evaluate(req), options.timeoutMs, sent);
      } catch (err) {
        hooks.onEvent?.({ type: 'worker-restarted', reason: errorMessage(err) });
        finish(item, itemResult(item, { status: 'error', error: `worker crashed: ${errorMessage(err)}` }));
        return;
      }
      if (exec === TIMEOUT) {
        timed(item.dbId, options.timeoutMs);
        hooks.onEvent?.({ type: 'worker-restarted', reason: `item ${item.index} timed out` });
        finish(
          item,
          itemResult(item, {
            status: 'timeout',
            softF1: req.softF1 ? 0 : null,
            rves: options.metrics.includes('r-ves') ? 0 : null,
            error: `timed out after ${options.timeoutMs / 1000} s (prediction and gold together)`,
            ...(typeof ranOn === 'string' ? { dbSha256: ranOn } : {}),
          }),
        );
        return;
      }
      if (typeof exec === 'string') {
        finish(item, itemResult(item, { status: 'error', error: exec, softF1: req.softF1 ? 0 : null }));
        return;
      }
      timed(item.dbId, exec.elapsedMs);
      // Before a restart forgets what the worker held.
      const executedOn = dbShaOf(slot, item.dbId);
      if (exec.retire) {
        // Over a memory bound or with SQLite's limits changed: a fresh worker for what follows
        // (the request posted ahead to the old one is sent again to the new one).
        this.restart(slot);
        hooks.onEvent?.({ type: 'worker-restarted', reason: `item ${item.index}: ${exec.retire}` });
      }
      const tsFields = wantsTs
        ? await suites.tsOf(slot, item, exec, (fn, ms) => withDb(fn, ms).then((r) => (r === TIMEOUT ? null : r)))
        : {};
      let rves: number | null = null;
      let ratio: number | null = null;
      let notTimed: string | null = null;
      if (options.metrics.includes('r-ves')) {
        rves = 0;
        if (exec.ex === 1) {
          // The limit of all repetitions together, at most the longest delay a timer can wait.
          const limitMs = Math.min(options.timeoutMs * options.vesIterations, MAX_TIMER_MS);
          const timed = await withDb(
            (api) =>
              api.timeQueries({
                dbId: item.dbId,
                predSql: item.predSql,
                goldSql: item.goldSql,
                iterations: options.vesIterations,
              }),
            limitMs,
          ).catch((err: unknown) => `the timing failed: ${errorMessage(err)}`);
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
          if ('notTimed' in outcome) {
            rves = null;
            notTimed = outcome.notTimed;
          } else {
            ratio = outcome.ratio;
            rves = outcome.reward;
          }
        }
      }
      finish(
        item,
        itemResult(item, {
          status: exec.status,
          ex: exec.ex,
          softF1: exec.softF1,
          rves,
          timeRatio: ratio,
          error: exec.error,
          mutatedDb: exec.mutatedDb,
          predRowCount: exec.predRowCount,
          goldRowCount: exec.goldRowCount,
          elapsedMs: exec.elapsedMs,
          ...(exec.resultKey !== undefined ? { resultKey: exec.resultKey } : {}),
          ...(exec.goldReused ? { goldReused: true } : {}),
          ...(exec.nondeterministicView !== undefined ? { nondeterministicView: exec.nondeterministicView } : {}),
          ...executedOn,
          ...(notTimed !== null ? { rvesNotTimed: notTimed } : {}),
          ...(exec.predRowCount !== null ? { predColumnCount: exec.predColumns.length } : {}),
          ...(exec.goldRowCount !== null ? { goldColumnCount: exec.goldColumns.length } : {}),
          ...tsFields,
        }),
        exec,
      );
    };

    // Metric ts: the checks after EX, with the suite built or loaded once per database (sql-pool-suites.ts).
    const suites = poolSuites<Slot>({
      spec,
      goldsOf,
      cache: this.suiteCache,
      building: this.building,
      timeoutMs: options.timeoutMs,
      onEvent: hooks.onEvent,
      call: (slot, fn, ms) => this.call(slot, fn, ms).then((r) => (r === TIMEOUT ? null : r)),
      ensureDb,
    });

    const pending = [...queues.values()].reduce((n, q) => n + q.length, 0);
    while (this.slots.length < Math.min(this.opts.size, pending)) this.slots.push(this.spawnSlot());
    const slots = this.slots.slice(0, Math.min(this.opts.size, pending));
    // Its listener is removed when the evaluation ends: a long-lived signal (a watch) gathers none per call.
    let stopListening = () => undefined as void;
    const aborted = new Promise<never>((_, reject) => {
      stopListening = onAbort(hooks.signal, () => reject(new CancelledError('evaluation aborted')));
    });
    aborted.catch(() => undefined);
    // R-VES times each correct item right after it: nothing may be queued in the worker then.
    // Nor while metric ts runs the checks that follow an item's EX.
    const ahead = !options.metrics.includes('r-ves') && !wantsTs;
    const loops = slots.map(async (slot) => {
      let item = pick(slot);
      let sent: Sent<ExecDone | NeedDb> | null = null;
      while (item && !hooks.signal?.aborted) {
        let next: EvalItem | undefined;
        let nextSent: Sent<ExecDone | NeedDb> | null = null;
        if (ahead) {
          // This item's request goes first, then the next one's, in the worker's order. One
          // posted to a worker since replaced, or before a database was opened on it (it was
          // answered need-db), is posted again: never behind the next item's query.
          if (!sent || sent.handle !== slot.handle || sent.loads !== slot.loads) {
            sent?.cancel();
            sent = send(slot, item, null);
          }
          // Only an item of the same database goes ahead: if this item's database must be
          // opened, the one ahead answers need-db at once instead of running a query that the
          // opening would wait behind. The next database's first item waits for this result.
          const same = slot.currentDb !== null && (queues.get(slot.currentDb)?.length ?? 0) > 0;
          next = same ? pick(slot) : undefined;
          if (next) nextSent = send(slot, next, sent);
        }
        await runItem(slot, item, sent);
        item = next ?? pick(slot);
        sent = next ? nextSent : null;
      }
      sent?.cancel();
      if (slot.currentDb) active.set(slot.currentDb, (active.get(slot.currentDb) ?? 1) - 1);
      slot.currentDb = null;
    });
    try {
      await Promise.race([Promise.all(loops), aborted]);
    } catch (err) {
      for (const slot of this.slots) slot.handle.terminate();
      this.slots.length = 0;
      throw err;
    } finally {
      stopListening();
      for (const t of [...timers]) t.cancel();
    }
    return results;
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
          const { given, sha256 } = await this.#dbToGive(dbId);
          slot.shas.delete(dbId);
          const opened = await this.call(slot, (api) => api.loadDb(dbId, given()), 10 * 60_000);
          if (opened === TIMEOUT) return failed(`database ${dbId}: opening took longer than 10 minutes`);
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
