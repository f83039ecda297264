/**
 * The browser's store on IndexedDB (idb): one connection shared by the storage port, the
 * dataset and run repositories and the run service (workbench-store.ts). Imports and
 * predictions parsing run in the import worker; SQL runs in the sql.js worker pool.
 */
import type { SqlExecutor } from '../../core/eval/executor.ts';
import type { SuiteCache } from '../../core/ts/suite.ts';
import { createBrowserSqlPool } from '../browser/sql-worker-host.ts';
import type { DbSource } from '../sql-pool.ts';
import { createAnalysisClient } from './analysis-client.ts';
import { deleteOrphanChunks } from './database-bytes.ts';
import { createDatasetRepository } from './dataset-repository.ts';
import { createRunRepository } from './run-repository.ts';
import { createRunService } from './run-service.ts';
import type { StoreContext } from './run-session.ts';
import { DEFAULT_DB_NAME, openWorkbenchDb, type WorkbenchIdb } from './schema.ts';
import type { StoragePort, WorkbenchStore } from './workbench-store.ts';

export interface IdbStoreOptions {
  /** IndexedDB database name (default `rlvr-workbench`); tests use their own. */
  dbName?: string;
  /** SQL executor for runs (default: the browser sql.js worker pool). */
  createExecutor?: (source: DbSource, extras?: { suiteCache?: SuiteCache }) => SqlExecutor;
  /** The older SQLite engine for version checks (default: sql.js 1.8.0 in a worker, imported on demand). */
  createOlderExecutor?: (source: DbSource) => Promise<SqlExecutor>;
  /** Written into each run header. */
  executorName?: string;
  /** Test doubles for a full disk (real `QuotaExceededError` DOMExceptions thrown at that point). */
  testing?: { simulateQuotaAfterBytes?: number; simulateQuotaAfterSamples?: number };
}

const browserStorage: StoragePort = {
  async estimate() {
    const est = await navigator.storage.estimate();
    return { usage: est.usage ?? 0, quota: est.quota ?? 0, persisted: await navigator.storage.persisted() };
  },
  async requestPersistence() {
    return navigator.storage?.persist ? navigator.storage.persist() : false;
  },
};

export function createIdbStore(options: IdbStoreOptions = {}): WorkbenchStore {
  const dbName = options.dbName ?? DEFAULT_DB_NAME;
  const opened = openWorkbenchDb(dbName);
  // Chunks of an import that died with its tab; harmless if it finds none.
  opened.then((idb) => deleteOrphanChunks(idb)).catch(() => undefined);
  const context = (idb: WorkbenchIdb): StoreContext => ({
    idb,
    createExecutor: options.createExecutor ?? ((source, extras) => createBrowserSqlPool(source, undefined, extras?.suiteCache)),
    // Loaded only when a run's version-sensitive items are re-run (its worker and wasm too).
    createOlderExecutor: options.createOlderExecutor ?? (async (source) => (await import('../browser/sql-legacy-host.ts')).createLegacyBrowserSqlPool(source)),
    executorName: options.executorName ?? 'sql.js in Web Workers (browser)',
    simulateQuotaAfterSamples: options.testing?.simulateQuotaAfterSamples,
  });
  return {
    storage: browserStorage,
    datasets: createDatasetRepository(opened, { dbName, storage: browserStorage, simulateQuotaAfterBytes: options.testing?.simulateQuotaAfterBytes }),
    runs: createRunRepository(opened, { dbName }),
    service: createRunService(opened, context),
    analysis: createAnalysisClient(dbName),
    close() {
      void opened.then((idb) => idb.close()).catch(() => undefined);
    },
  };
}
