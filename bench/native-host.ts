/**
 * Runs the native reference (bench/native-worker.ts) in one worker thread of this process, with
 * the same per-item timeout rule as our pool: an item that takes longer is marked `timeout`, the
 * thread is terminated and a fresh one goes on with the next item.
 */
import { Worker } from 'node:worker_threads';
import type { EvalItem } from '../src/core/types.ts';
import type { NativeResult } from './native.ts';
import type { NativeRunMessage } from './native-worker.ts';

const bootstrapUrl = new URL('../workers/node-bootstrap.mjs', import.meta.url);
const entryUrl = new URL('./native-worker.ts', import.meta.url);

export type NativeItemResult = NativeResult | { status: 'timeout'; ex: 0; error: string };

interface Thread {
  worker: Worker;
  ready: Promise<void>;
}

function spawn(): Thread {
  const worker = new Worker(bootstrapUrl, { workerData: { entry: entryUrl.href } });
  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (m: { type: string }) => {
      if (m.type === 'ready') {
        worker.off('message', onMessage);
        resolve();
      }
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
  return { worker, ready };
}

/** Runs items from `start` on the thread until done or one item exceeds timeoutMs. */
function runOn(
  t: Thread, items: readonly EvalItem[], start: number, dbPath: ReadonlyMap<string, string>, softF1: boolean,
  timeoutMs: number, results: NativeItemResult[],
): Promise<number | null> {
  return new Promise((resolve, reject) => {
    let next = start;
    let last = performance.now();
    const timer = setInterval(() => {
      if (performance.now() - last > timeoutMs) finish(next);
    }, Math.min(100, Math.max(5, timeoutMs / 20)));
    const finish = (timedOut: number | null) => {
      clearInterval(timer);
      t.worker.off('message', onMessage);
      t.worker.off('error', onError);
      resolve(timedOut);
    };
    const onError = (err: Error) => {
      clearInterval(timer);
      reject(err);
    };
    const onMessage = (m: { type: 'item'; i: number; result: NativeResult } | { type: 'done' }) => {
      last = performance.now();
      if (m.type === 'done') return finish(null);
      results[start + m.i] = m.result;
      next = start + m.i + 1;
    };
    t.worker.on('message', onMessage);
    t.worker.on('error', onError);
    const msg: NativeRunMessage = {
      type: 'run',
      items: items.slice(start).map((it) => ({ dbId: it.dbId, predSql: it.predSql, goldSql: it.goldSql })),
      dbPath: [...dbPath],
      softF1,
    };
    t.worker.postMessage(msg);
  });
}

export interface NativeRun {
  results: NativeItemResult[];
  /** Wall time of the items (the thread already started and warmed up). */
  ms: number;
  timeouts: number[];
}

/**
 * A fresh thread is started and warmed up with `warmup` (not timed), then `items` are timed.
 * Databases are opened on first use inside the timed part, as our pool does.
 */
export async function runNative(
  items: readonly EvalItem[], dbPath: ReadonlyMap<string, string>,
  options: { timeoutMs: number; softF1: boolean; warmup?: readonly EvalItem[] },
): Promise<NativeRun> {
  let t = spawn();
  await t.ready;
  if (options.warmup?.length) await runOn(t, options.warmup, 0, dbPath, options.softF1, 60_000, []);
  // The warm-up's databases stay open in that evaluator only; the timed run starts a new one.
  const results: NativeItemResult[] = new Array(items.length);
  const timeouts: number[] = [];
  const t0 = performance.now();
  let start = 0;
  try {
    while (start < items.length) {
      const timedOut = await runOn(t, items, start, dbPath, options.softF1, options.timeoutMs, results);
      if (timedOut === null) break;
      results[timedOut] = { status: 'timeout', ex: 0, error: `timed out after ${options.timeoutMs / 1000} s` };
      timeouts.push(timedOut);
      void t.worker.terminate();
      t = spawn();
      await t.ready;
      start = timedOut + 1;
    }
  } finally {
    void t.worker.terminate();
  }
  return { results, ms: performance.now() - t0, timeouts };
}
