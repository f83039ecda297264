/**
 * The SQL worker on native SQLite (`eval --engine native`, Node only): the same engine as
 * workers/sql.worker.ts (sql-engine.ts), given better-sqlite3 behind sql.js's API
 * (src/adapters/node/native-sqljs.ts).
 */
import { expose } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { SqlJsStatic } from 'sql.js';
import { parentPort } from 'node:worker_threads';
import { loadNativeSqlJs } from '../src/adapters/node/native-sqljs.ts';
import { createSqlEngine } from './sql-engine.ts';

expose(
  createSqlEngine(async () => (await loadNativeSqlJs()) as SqlJsStatic),
  nodeEndpoint(parentPort!),
);
