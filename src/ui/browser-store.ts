/**
 * The browser's wiring of the store and the application (called by the composition root,
 * src/ui/main.ts, and by the store's tests): IndexedDB persistence (adapters/store), the
 * import and analysis workers' clients and the sql.js worker pool (adapters/browser), and the
 * run service over them (src/app/).
 */
import { createAnalysisClient } from '../adapters/browser/analysis-client.ts';
import { importInWorker, importRunFileInWorker, pairInWorker } from '../adapters/browser/import-client.ts';
import { createBrowserSqlPool, openBrowserSchemaSource } from '../adapters/browser/sql-worker-host.ts';
import { sha256Text } from '../adapters/import/pair-run.ts';
import { createIdbStore, type IdbStoreOptions } from '../adapters/store/idb-store.ts';
import type { WorkbenchStore } from '../adapters/store/workbench-store.ts';
import type { ExecutorFactory } from '../app/ports.ts';
import { createRunService } from '../app/run-service.ts';

export interface BrowserStoreOptions extends IdbStoreOptions {
  /** SQL executor for runs (default: the browser sql.js worker pool). */
  createExecutor?: ExecutorFactory['createExecutor'];
  /** Written into each run header. */
  executorName?: string;
  /**
   * The executor as the verdict cache keys it (ExecutorFactory.verdictExecutor); default: the
   * sql.js of the build with the browser's pool, none with another executor.
   */
  verdictExecutor?: string;
}

/** `sql.js 1.17.0`: the version is the build's (vite.config.ts defines __SQLJS_VERSION__). */
const SQLJS_EXECUTOR = typeof __SQLJS_VERSION__ === 'string' ? `sql.js ${__SQLJS_VERSION__}` : undefined;

export function createBrowserStore(options: BrowserStoreOptions = {}): WorkbenchStore {
  const store = createIdbStore({ importDataset: importInWorker, importRunFile: importRunFileInWorker }, options);
  const executors: ExecutorFactory = {
    name: options.executorName ?? 'sql.js in Web Workers (browser)',
    verdictExecutor: options.verdictExecutor ?? (options.createExecutor ? undefined : SQLJS_EXECUTOR),
    createExecutor:
      options.createExecutor ?? ((source, extras) => createBrowserSqlPool(source, undefined, extras?.suiteCache)),
    openSchemaSource: openBrowserSchemaSource,
  };
  const service = createRunService(
    store.persistence.then((p) => ({ ...p, pairing: { pair: pairInWorker, hashText: sha256Text }, executors })),
  );
  return {
    storage: store.storage,
    datasets: store.datasets,
    runs: store.runs,
    service,
    analysis: createAnalysisClient(store.dbName),
    close: store.close,
  };
}
