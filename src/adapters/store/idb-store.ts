/**
 * The browser's store on IndexedDB (idb), persistence only: one connection shared by the
 * storage port, the dataset and run repositories, and the app's persistence ports
 * (app-ports.ts). The run service (src/app/) and the workers' clients are wired to it by the
 * composition root (src/ui/browser-store.ts, for src/ui/main.ts).
 */
import { deleteOrphanChunks } from './database-bytes.ts';
import { idbAppPorts, type IdbAppPorts } from './app-ports.ts';
import { createDatasetRepository } from './dataset-repository.ts';
import type { StoreWorkers } from '../../app/records.ts';
import { createRunRepository } from './run-repository.ts';
import { DEFAULT_DB_NAME, openWorkbenchDb } from './schema.ts';
import { createSeriesRepository } from './series-repository.ts';
import type { SeriesRepository, StoragePort, WorkbenchStore } from '../../app/store-ports.ts';

export interface IdbStoreOptions {
  /** IndexedDB database name (default `rlvr-workbench`); tests use their own. */
  dbName?: string;
  /** Test doubles for a full disk (real `QuotaExceededError` DOMExceptions thrown at that point). */
  testing?: { simulateQuotaAfterBytes?: number; simulateQuotaAfterSamples?: number };
}

/** The store's ports; the composition root adds the run service and the analysis client. */
interface IdbStore extends Omit<WorkbenchStore, 'service' | 'analysis'> {
  readonly dbName: string;
  /** The app's persistence ports, once the database is open. */
  readonly persistence: Promise<IdbAppPorts>;
  /** Training runs (schema version 6). */
  readonly series: SeriesRepository;
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

export function createIdbStore(workers: StoreWorkers, options: IdbStoreOptions = {}): IdbStore {
  const dbName = options.dbName ?? DEFAULT_DB_NAME;
  const opened = openWorkbenchDb(dbName);
  // Chunks of an import that died with its tab; harmless if it finds none.
  opened.then((idb) => deleteOrphanChunks(idb)).catch(() => undefined);
  return {
    dbName,
    storage: browserStorage,
    datasets: createDatasetRepository(opened, {
      dbName,
      storage: browserStorage,
      workers,
      simulateQuotaAfterBytes: options.testing?.simulateQuotaAfterBytes,
    }),
    runs: createRunRepository(opened, { dbName, workers }),
    series: createSeriesRepository(opened),
    persistence: opened.then((idb) =>
      idbAppPorts(idb, { simulateQuotaAfterSamples: options.testing?.simulateQuotaAfterSamples }),
    ),
    close() {
      void opened.then((idb) => idb.close()).catch(() => undefined);
    },
  };
}
