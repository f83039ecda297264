// The probe's worker thread (tests/helpers/sqljs-probe.ts): real sql.js over one database, read-only
// through SQLite's own `PRAGMA query_only`, answering one probe at a time.
import { parentPort, workerData } from 'node:worker_threads';
import initSqlJs from 'sql.js';

const SQL = await initSqlJs();
const db = new SQL.Database(workerData.bytes);
db.run('PRAGMA query_only = ON');
parentPort.postMessage({ ready: true });

const classOf = (v) =>
  v === null
    ? 'null'
    : typeof v === 'bigint'
      ? 'integer'
      : typeof v === 'number'
        ? 'real'
        : typeof v === 'string'
          ? 'text'
          : 'blob';

parentPort.on('message', ({ id, sql }) => {
  const columns = [];
  const rows = [];
  const classes = [];
  try {
    if (/^\s*pragma\b/i.test(sql)) throw new Error('PRAGMA is refused in a probe');
    const it = db.iterateStatements(sql);
    const first = it.next();
    if (!first.done) {
      const stmt = first.value;
      try {
        if (it.getRemainingSQL().replace(/[\s;]+/g, '') !== '')
          throw new Error('You can only execute one statement at a time.');
        columns.push(...stmt.getColumnNames());
        while (stmt.step()) {
          // INTEGER as bigint, REAL as number: the storage class survives (1.0 stays a float).
          const row = stmt.get(null, { useBigInt: true });
          rows.push(row);
          classes.push(row.map(classOf));
        }
      } finally {
        stmt.free();
      }
    }
    parentPort.postMessage({ id, result: { columns, rows, classes } });
  } catch (e) {
    parentPort.postMessage({
      id,
      result: { columns: [], rows: [], classes: [], error: e instanceof Error ? e.message : String(e) },
    });
  }
});
