/**
 * The IndexedDB schema of the workbench: the single source of truth for its stores, shared by
 * the main-thread store and the import worker. Upgrade steps are cumulative and are never
 * edited once shipped: a change is a new `if (oldVersion < N)` step and a new version.
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { RunHeader, SampleRecord } from '../../core/run/types.ts';
import type { EvalItem } from '../../core/types.ts';
import type { DatasetRecord, StoredDatabase } from './workbench-store.ts';

export const DEFAULT_DB_NAME = 'rlvr-workbench';
export const SCHEMA_VERSION = 1;

/**
 * Database bytes are stored as Blob chunks of this size (the last one shorter). Measured in
 * headless Chromium here with a 100 MiB SQLite-like file (medians of 5 runs, in a worker):
 *
 *   IndexedDB, 16 MiB Blob chunks       write ~109 MiB/s   read ~700 MiB/s (one Blob of all chunks -> arrayBuffer)
 *   IndexedDB, 16 MiB ArrayBuffer chunks write ~108 MiB/s   read ~244 MiB/s (getAll, then copied together)
 *   IndexedDB,  8 MiB ArrayBuffer chunks write  ~67 MiB/s   read  ~83 MiB/s
 *   OPFS, sync access handle (worker)    write ~248 MiB/s   read ~664 MiB/s (getFile().arrayBuffer())
 *   OPFS, createWritable                 write  ~99 MiB/s   read ~591 MiB/s
 *
 * Reading, which every run does, is as fast with IndexedDB Blob chunks as with OPFS, and the
 * browser fills the single ArrayBuffer off the main thread. OPFS only writes faster, and
 * import is bound by hashing and unzipping as much as by writing. IndexedDB keeps bytes and
 * metadata in one transactional store (a dataset and its database records commit together,
 * deletes are atomic, quota errors arrive on the transaction that caused them), so it wins.
 */
export const CHUNK_BYTES = 16 * 1024 * 1024;

/** A stored database file: its metadata and where its bytes are. */
export interface DatabaseRecord extends StoredDatabase {
  chunkCount: number;
  chunkBytes: number;
}

/**
 * What a run needs to be resumed in another session: its items (prediction and gold SQL, paired
 * once at start), so resuming needs neither the predictions file nor the dataset record.
 */
export interface RunInputRecord {
  runId: string;
  items: EvalItem[];
}

/** A sample as stored: the record plus the run it belongs to (part of its key). */
export type StoredSample = SampleRecord & { runId: string };

export interface WorkbenchDB extends DBSchema {
  datasets: { key: string; value: DatasetRecord };
  /** Keyed by sha256: one record per distinct database file. */
  databases: { key: string; value: DatabaseRecord };
  /** Database bytes: key [sha256, chunk number]. */
  chunks: { key: [string, number]; value: Blob };
  runs: { key: string; value: RunHeader };
  runInputs: { key: string; value: RunInputRecord };
  /** Key [runId, index, sample]: a sample is stored once, whatever happens. */
  samples: { key: [string, number, number]; value: StoredSample; indexes: { byRun: string } };
}

export type WorkbenchIdb = IDBPDatabase<WorkbenchDB>;

export async function openWorkbenchDb(name: string = DEFAULT_DB_NAME): Promise<WorkbenchIdb> {
  const db = await openDB<WorkbenchDB>(name, SCHEMA_VERSION, {
    upgrade(database, oldVersion) {
      if (oldVersion < 1) {
        database.createObjectStore('datasets', { keyPath: 'id' });
        database.createObjectStore('databases', { keyPath: 'sha256' });
        database.createObjectStore('chunks');
        database.createObjectStore('runs', { keyPath: 'id' });
        database.createObjectStore('runInputs', { keyPath: 'runId' });
        const samples = database.createObjectStore('samples', { keyPath: ['runId', 'index', 'sample'] });
        samples.createIndex('byRun', 'runId');
      }
    },
    blocking() {
      // A newer version wants to upgrade (another tab): let it, this connection is stale.
      db.close();
    },
  });
  return db;
}

/** All chunks of one database. */
export function chunkRange(sha256: string): IDBKeyRange {
  return IDBKeyRange.bound([sha256, 0], [sha256, Infinity]);
}

/** All samples of one run, in (index, sample) order. */
export function sampleRange(runId: string): IDBKeyRange {
  return IDBKeyRange.bound([runId, -Infinity, -Infinity], [runId, Infinity, Infinity]);
}
