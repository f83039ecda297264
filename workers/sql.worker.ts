/**
 * SQL worker entry, the same module in the browser (Web Worker) and in Node (worker_threads).
 * The only file that imports sql.js (sql-legacy.worker.ts imports the older one).
 */
import initSqlJs from 'sql.js';
import { serveSqlEngine } from './sql-serve.ts';

await serveSqlEngine(initSqlJs);
