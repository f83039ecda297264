/** A store on a fresh IndexedDB database per test, and raw counts to check what was written. */
import { deleteDB } from 'idb';
import { createBrowserStore, type BrowserStoreOptions } from '../../src/ui/browser-store.ts';
import { openWorkbenchDb } from '../../src/adapters/store/schema.ts';
import type { WorkbenchStore } from '../../src/app/store-ports.ts';

export interface TestStore {
  dbName: string;
  store: WorkbenchStore;
  /** A new store on the same database: what a reloaded page sees. */
  reopen(options?: Omit<BrowserStoreOptions, 'dbName'>): WorkbenchStore;
  counts(): Promise<{ datasets: number; databases: number; chunks: number; runs: number; samples: number }>;
  dispose(): Promise<void>;
}

export function testStore(options: Omit<BrowserStoreOptions, 'dbName'> = {}): TestStore {
  const dbName = `wb-test-${crypto.randomUUID()}`;
  const opened: WorkbenchStore[] = [];
  const make = (o: Omit<BrowserStoreOptions, 'dbName'>) => {
    const s = createBrowserStore({ ...o, dbName });
    opened.push(s);
    return s;
  };
  const store = make(options);
  return {
    dbName,
    store,
    reopen: (o = {}) => make(o),
    async counts() {
      const idb = await openWorkbenchDb(dbName);
      try {
        const [datasets, databases, chunks, runs] = await Promise.all(
          (['datasets', 'databases', 'chunks', 'runs'] as const).map((s) => idb.count(s)),
        );
        const samples = (await idb.getAll('sampleBlocks')).reduce((n, b) => n + b.samples.length, 0);
        return { datasets: datasets!, databases: databases!, chunks: chunks!, runs: runs!, samples };
      } finally {
        idb.close();
      }
    },
    async dispose() {
      for (const s of opened) s.close();
      await deleteDB(dbName);
    },
  };
}
