/**
 * A real probe for episode tests: sql.js in a worker thread over one database's bytes, read-only
 * (SQLite's `PRAGMA query_only`: any write fails with SQLite's own "attempt to write a readonly
 * database"), stopped by terminating the thread when a probe runs past its timeout (then a fresh
 * thread takes the next probe; the timeout counts from when the thread is ready, so a slow start is
 * never a timeout). Not the app's SQL worker pool: the episode core only needs the
 * `probe` port, and this implements it over the same SQLite (sql.js).
 */
import { Worker } from 'node:worker_threads';
import type { ProbeResult } from '../../src/core/episode/types.ts';

export interface SqlJsProbe {
  probe(sql: string, options: { timeoutMs: number }): Promise<ProbeResult>;
  close(): Promise<void>;
}

export function sqlJsProbe(bytes: Uint8Array): SqlJsProbe {
  let worker: { w: Worker; ready: Promise<void> } | null = null;
  let next = 0;
  const start = () => {
    const w = new Worker(new URL('./sqljs-probe-worker.mjs', import.meta.url), { workerData: { bytes } });
    const ready = new Promise<void>((resolve, reject) => {
      w.once('message', () => resolve());
      w.once('error', reject);
    });
    return { w, ready };
  };
  return {
    async probe(sql, { timeoutMs }) {
      worker ??= start();
      const { w, ready } = worker;
      await ready;
      const id = ++next;
      return new Promise<ProbeResult>((resolve, reject) => {
        const timer = setTimeout(() => {
          w.off('message', onMessage);
          worker = null;
          void w.terminate();
          resolve({ columns: [], rows: [], classes: [], timedOut: true });
        }, timeoutMs);
        const onMessage = (m: { id: number; result: ProbeResult }) => {
          if (m.id !== id) return;
          clearTimeout(timer);
          w.off('message', onMessage);
          resolve(m.result);
        };
        w.on('message', onMessage);
        w.once('error', (e) => {
          clearTimeout(timer);
          reject(e);
        });
        w.postMessage({ id, sql });
      });
    },
    async close() {
      if (worker) await worker.w.terminate();
      worker = null;
    },
  };
}
