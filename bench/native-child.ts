/**
 * The native reference's process: better-sqlite3 runs here, in a child process of the
 * benchmark, so that an item that runs away can be stopped by killing the process (a thread
 * cannot be stopped while better-sqlite3 is inside SQLite: `worker.terminate()` waits for the
 * query to return, and the query keeps a core busy meanwhile). One message per item tells the
 * host which item is running; the last one carries this process's CPU time.
 */
import { readFileSync } from 'node:fs';
import { NativeEvaluator } from './native.ts';

export interface NativeRunMessage {
  type: 'run';
  items: { dbId: string; predSql: string; goldSql: string }[];
  dbPath: [string, string][];
  softF1: boolean;
}

const send = (m: unknown) => process.send!(m);
process.on('message', (m: NativeRunMessage) => {
  const u0 = process.cpuUsage();
  const paths = new Map(m.dbPath);
  const evaluator = new NativeEvaluator((dbId) => readFileSync(paths.get(dbId)!), m.softF1);
  for (let i = 0; i < m.items.length; i++) send({ type: 'item', i, result: evaluator.evaluate(m.items[i]!) });
  evaluator.close();
  const u = process.cpuUsage(u0);
  send({ type: 'done', cpuMs: (u.user + u.system) / 1000 });
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
