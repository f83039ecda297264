/**
 * The older SQLite generation in the browser: sql.js 1.8.0 (SQLite 3.39.3) in its own module
 * worker (workers/sql-legacy.worker.ts) with its own wasm. Imported dynamically, and only when
 * a run's version-sensitive items are re-run (src/app/version-check-service.ts), so neither the
 * worker nor the wasm is part of the main bundle or fetched before.
 */
import { wrap } from 'comlink';
import wasmUrl from 'sql.js-1.8/dist/sql-wasm.wasm?url';
import type { SqlWorkerApi } from '../../../workers/sql.api.ts';
import { SqlPool, type DbSource, type WorkerHandle } from '../sql-pool.ts';

function spawnLegacyWorker(): WorkerHandle {
  const worker = new Worker(new URL('../../../workers/sql-legacy.worker.ts', import.meta.url), {
    type: 'module',
    name: 'sql-3.39',
  });
  const exited = new Promise<string>((resolve) => {
    worker.addEventListener('error', (e) => resolve(e.message || 'the SQLite 3.39 worker failed to start'));
  });
  return { api: wrap<SqlWorkerApi>(worker), terminate: () => worker.terminate(), exited };
}

/** One worker by default: the re-run is of the flagged samples only (a few per hundred). */
export function createLegacyBrowserSqlPool(dbSource: DbSource, size = 1): SqlPool {
  return new SqlPool({ spawn: spawnLegacyWorker, dbSource, size, wasmUrl });
}
