/**
 * Runs the native reference (bench/native-child.ts) in one child process, with the same
 * per-item timeout rule as our pool: an item that takes longer is marked `timeout`, the process
 * is killed and a fresh one goes on with the next item.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { EvalItem } from '../src/core/types.ts';
import type { NativeRunMessage } from './native-child.ts';
import type { NativeResult } from './native.ts';

const entry = fileURLToPath(new URL('./native-child.ts', import.meta.url));

export type NativeItemResult = NativeResult | { status: 'timeout'; ex: 0; error: string };

type Message = { type: 'ready' } | { type: 'item'; i: number; result: NativeResult } | { type: 'done'; cpuMs: number };

interface Child {
  proc: ChildProcess;
  ready: Promise<void>;
}

function start(): Child {
  const proc = fork(entry, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (m: Message) => {
      if (m.type !== 'ready') return;
      proc.off('message', onMessage);
      resolve();
    };
    proc.on('message', onMessage);
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`native reference exited with code ${code} before it was ready`)));
  });
  return { proc, ready };
}

function stop(c: Child): void {
  c.proc.removeAllListeners('exit');
  c.proc.kill('SIGKILL');
}

/**
 * Runs items from `start` until done or one item exceeds timeoutMs. Resolves with the index
 * of the item that timed out (or null) and the child's CPU time when it finished.
 */
function runOn(
  c: Child,
  items: readonly EvalItem[],
  from: number,
  dbPath: ReadonlyMap<string, string>,
  softF1: boolean,
  timeoutMs: number,
  results: NativeItemResult[],
): Promise<{ timedOut: number | null; cpuMs: number }> {
  return new Promise((resolve, reject) => {
    let next = from;
    let last = performance.now();
    const timer = setInterval(
      () => {
        if (performance.now() - last > timeoutMs) finish(next, NaN);
      },
      Math.min(100, Math.max(5, timeoutMs / 20)),
    );
    const finish = (timedOut: number | null, cpuMs: number) => {
      clearInterval(timer);
      c.proc.off('message', onMessage);
      c.proc.off('exit', onExit);
      resolve({ timedOut, cpuMs });
    };
    const onExit = (code: number | null) => {
      clearInterval(timer);
      reject(new Error(`native reference exited with code ${code} during item ${next}`));
    };
    const onMessage = (m: Message) => {
      last = performance.now();
      if (m.type === 'done') return finish(null, m.cpuMs);
      if (m.type !== 'item') return;
      results[from + m.i] = m.result;
      next = from + m.i + 1;
    };
    c.proc.on('message', onMessage);
    c.proc.on('exit', onExit);
    const msg: NativeRunMessage = {
      type: 'run',
      items: items.slice(from).map((it) => ({ dbId: it.dbId, predSql: it.predSql, goldSql: it.goldSql })),
      dbPath: [...dbPath],
      softF1,
    };
    c.proc.send(msg);
  });
}

export interface NativeRun {
  results: NativeItemResult[];
  /** Wall time of the items (the process already started and warmed up). */
  ms: number;
  /** CPU time of the native process over the items (NaN when one was killed at a timeout). */
  cpuMs: number;
  timeouts: number[];
}

/**
 * A fresh process is started and warmed up with `warmup` (not timed), then `items` are timed.
 * Databases are opened on first use inside the timed part, as our pool does.
 */
export async function runNative(
  items: readonly EvalItem[],
  dbPath: ReadonlyMap<string, string>,
  options: { timeoutMs: number; softF1: boolean; warmup?: readonly EvalItem[] },
): Promise<NativeRun> {
  let c = start();
  await c.ready;
  if (options.warmup?.length) await runOn(c, options.warmup, 0, dbPath, options.softF1, 60_000, []);
  // The warm-up's databases stay open in that evaluator only; the timed run starts a new one.
  const results: NativeItemResult[] = new Array(items.length);
  const timeouts: number[] = [];
  let cpuMs = 0;
  const t0 = performance.now();
  let from = 0;
  try {
    while (from < items.length) {
      const r = await runOn(c, items, from, dbPath, options.softF1, options.timeoutMs, results);
      cpuMs += r.cpuMs;
      if (r.timedOut === null) break;
      results[r.timedOut] = { status: 'timeout', ex: 0, error: `timed out after ${options.timeoutMs / 1000} s` };
      timeouts.push(r.timedOut);
      stop(c);
      c = start();
      await c.ready;
      from = r.timedOut + 1;
    }
  } finally {
    stop(c);
  }
  return { results, ms: performance.now() - t0, cpuMs, timeouts };
}
