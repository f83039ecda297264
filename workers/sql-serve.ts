/**
 * Serves the SQL engine (sql-engine.ts) on an initialised sql.js module: the same code in the
 * browser (Web Worker) and in Node (worker_threads). The entries (sql.worker.ts, and
 * sql-legacy.worker.ts for the older SQLite generation) differ only in the sql.js they import.
 */
import { expose } from 'comlink';
import type { SqlJsStatic } from 'sql.js';
import { createSqlEngine } from './sql-engine.ts';

type InitSqlJs = (config?: { locateFile: (file: string) => string }) => Promise<SqlJsStatic>;

export async function serveSqlEngine(initSqlJs: InitSqlJs): Promise<void> {
  const api = createSqlEngine((init) => initSqlJs(init.wasmUrl ? { locateFile: () => init.wasmUrl! } : undefined));
  if (typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== 'undefined') {
    expose(api);
  } else {
    // Node: comlink speaks to worker_threads through its node adapter. The specifier is built
    // at run time so that browser bundles never try to resolve a Node built-in.
    const wt = (await import(
      /* @vite-ignore */ ['node', 'worker_threads'].join(':')
    )) as typeof import('node:worker_threads');
    const { default: nodeEndpoint } = await import('comlink/dist/esm/node-adapter.mjs');
    expose(api, nodeEndpoint(wt.parentPort!));
  }
}
