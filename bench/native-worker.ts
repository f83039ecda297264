/**
 * The native reference's thread: better-sqlite3 runs here so that the benchmark can stop an
 * item that runs away (better-sqlite3 cannot interrupt a query) by terminating the thread, as
 * our pool does with its workers. One message per item tells the host which item is running.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { NativeEvaluator } from './native.ts';

export interface NativeRunMessage {
  type: 'run';
  items: { dbId: string; predSql: string; goldSql: string }[];
  dbPath: [string, string][];
  softF1: boolean;
}

const port = parentPort!;
port.on('message', (m: NativeRunMessage) => {
  const paths = new Map(m.dbPath);
  const evaluator = new NativeEvaluator((dbId) => readFileSync(paths.get(dbId)!), m.softF1);
  for (let i = 0; i < m.items.length; i++) port.postMessage({ type: 'item', i, result: evaluator.evaluate(m.items[i]!) });
  evaluator.close();
  port.postMessage({ type: 'done' });
});
port.postMessage({ type: 'ready' });
