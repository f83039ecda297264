/**
 * The older SQLite generation in the browser: sql.js 1.8.0 (SQLite 3.39.3) in its own module
 * worker (workers/sql-legacy.worker.ts) with its own wasm. Imported dynamically, and only when
 * a run's version-sensitive items are re-run (src/app/version-check-service.ts), so neither the
 * worker nor the wasm is part of the main bundle or fetched before.
 */
import wasmUrl from 'sql.js-1.8/dist/sql-wasm.wasm?url';
import { SqlPool, type WorkerHandle } from '../sql-pool.ts';
import type { DbSource } from '../../app/ports.ts';
import { sqlWorkerHandle } from './sql-worker-host.ts';

function spawnLegacyWorker(): WorkerHandle {
  const worker = new Worker(new URL('../../../workers/sql-legacy.worker.ts', import.meta.url), {
    type: 'module',
    name: 'sql-3.39',
  });
  return sqlWorkerHandle(worker, 'the SQLite 3.39 worker failed to start');
}

/** One worker by default: the re-run is of the flagged samples only (a few per hundred). */
export function createLegacyBrowserSqlPool(dbSource: DbSource, size = 1): SqlPool {
  // It reads each stored database by pages from its Blob (DbSource.openPaged), as the main pool does.
  return new SqlPool({ spawn: spawnLegacyWorker, dbSource, paged: true, size, wasmUrl });
}
