/**
 * Serves the SQL engine (sql-engine.ts) on an initialised sql.js module: the same code in the
 * browser (Web Worker) and in Node (worker_threads). The entries (sql.worker.ts, and
 * sql-legacy.worker.ts for the older SQLite generation) differ only in the sql.js they import.
 */
import { expose } from 'comlink';
import { createSqlEngine } from './sql-engine.ts';

type InitSqlJs = typeof import('sql.js').default;

export async function serveSqlEngine(initSqlJs: InitSqlJs): Promise<void> {
  const inBrowser = typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== 'undefined';
  // Node: databases given as a file are read by pages through node:fs (a specifier built at run
  // time so that browser bundles never try to resolve it).
  const fs = inBrowser
    ? null
    : ((await import(/* @vite-ignore */ ['node', 'fs'].join(':'))) as typeof import('node:fs'));
  const api = createSqlEngine((init) => {
    const module = init.wasmModule;
    if (!module) return initSqlJs(init.wasmUrl ? { locateFile: () => init.wasmUrl! } : undefined);
    // Emscripten's hook: the instance is made from the module the pool compiled (sql.api.ts). A
    // failure there is not seen by sql.js's own promise, so it rejects this one.
    let failed: (err: unknown) => void = () => undefined;
    const failure = new Promise<never>((_, reject) => (failed = reject));
    return Promise.race([
      initSqlJs({
        instantiateWasm(imports, done) {
          WebAssembly.instantiate(module, imports).then(done, failed);
          return {};
        },
      }),
      failure,
    ]);
  }, fs);
  if (inBrowser) {
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
