/**
 * The browser's wiring of the store and the application (called by the composition root,
 * src/ui/main.ts, and by the store's tests): IndexedDB persistence (adapters/store), the
 * import and analysis workers' clients and the sql.js worker pool (adapters/browser), and the
 * run service over them (src/app/).
 */
import { createAnalysisClient } from '../adapters/browser/analysis-client.ts';
import {
  importInWorker,
  importRunFileInWorker,
  importSeriesFileInWorker,
  pairInWorker,
  pairSeriesDumpInWorker,
} from '../adapters/browser/import-client.ts';
import { createBrowserSqlPool, openBrowserSchemaSource } from '../adapters/browser/sql-worker-host.ts';
import { sha256Of } from '../adapters/import/hash-stream.ts';
import { createIdbStore, type IdbStoreOptions } from '../adapters/store/idb-store.ts';
import type { SeriesAnalysisPort, WorkbenchStore } from '../app/store-ports.ts';
import type { AppPorts, ExecutorFactory } from '../app/ports.ts';
import { createRunService } from '../app/run-service.ts';
import { createSeriesService, type SeriesService } from '../app/series-service.ts';

export interface BrowserStoreOptions extends IdbStoreOptions {
  /** SQL executor for runs (default: the browser sql.js worker pool). */
  createExecutor?: ExecutorFactory['createExecutor'];
  /** Written into each run header. */
  executorName?: string;
  /** The older SQLite engine of version checks (default: sql.js 1.8.0 in a worker, imported on demand). */
  createOlderExecutor?: ExecutorFactory['createOlderExecutor'];
  /**
   * The executor as the verdict cache keys it (ExecutorFactory.verdictExecutor); default: the
   * sql.js of the build with the browser's pool, none with another executor.
   */
  verdictExecutor?: string;
}

/** `sql.js 1.17.0`: the version is the build's (vite.config.ts defines __SQLJS_VERSION__). */
const SQLJS_EXECUTOR = typeof __SQLJS_VERSION__ === 'string' ? `sql.js ${__SQLJS_VERSION__}` : undefined;

/** The store's ports, and the training runs' service and analysis over the same database. */
interface BrowserStore extends WorkbenchStore {
  readonly seriesService: SeriesService;
  readonly seriesAnalysis: SeriesAnalysisPort;
}

export function createBrowserStore(options: BrowserStoreOptions = {}): BrowserStore {
  const store = createIdbStore({ importDataset: importInWorker, importRunFile: importRunFileInWorker }, options);
  const executors: ExecutorFactory = {
    name: options.executorName ?? 'sql.js in Web Workers (browser)',
    verdictExecutor: options.verdictExecutor ?? (options.createExecutor ? undefined : SQLJS_EXECUTOR),
    createExecutor:
      options.createExecutor ?? ((source, extras) => createBrowserSqlPool(source, undefined, extras?.suiteCache)),
    openSchemaSource: openBrowserSchemaSource,
    // sql.js 1.8.0 (SQLite 3.39.3): imported only when a run's flagged samples are re-run, so its
    // worker and wasm are fetched then and never before (docs/version-effects.md).
    createOlderExecutor:
      options.createOlderExecutor ??
      (async (source) => (await import('../adapters/browser/sql-legacy-host.ts')).createLegacyBrowserSqlPool(source)),
  };
  const ports: Promise<AppPorts> = store.persistence.then((p) => ({
    ...p,
    pairing: { pair: pairInWorker, hashText: sha256Of },
    executors,
  }));
  const analysis = createAnalysisClient(store.dbName);
  const seriesService = createSeriesService(
    ports.then((p) => ({
      ...p,
      series: store.series,
      dumps: { read: pairSeriesDumpInWorker },
      seriesFiles: {
        importSeriesFile: (file: Blob, fileName: string) =>
          importSeriesFileInWorker({ dbName: store.dbName, file, fileName }),
      },
    })),
  );
  return {
    storage: store.storage,
    datasets: store.datasets,
    runs: store.runs,
    service: createRunService(ports),
    analysis,
    seriesService,
    seriesAnalysis: analysis,
    close: store.close,
  };
}
