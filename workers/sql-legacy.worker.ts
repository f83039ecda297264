/**
 * The SQL worker on an older SQLite generation: sql.js 1.8.0 (SQLite 3.39.3, the generation of
 * Debian 12's Python and of most Python installs of 2022-2023), installed beside 1.17 under the
 * npm alias `sql.js-1.8`. The same engine as sql.worker.ts; only the module differs. Started only
 * to re-run the items flagged version-sensitive (src/core/run/version-effects.ts), so a browser
 * loads its wasm only then.
 */
import initSqlJs from 'sql.js-1.8';
import { serveSqlEngine } from './sql-serve.ts';

await serveSqlEngine(initSqlJs);
