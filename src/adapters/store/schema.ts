/**
 * The IndexedDB schema of the workbench: the single source of truth for its stores, shared by
 * the main-thread store and the import worker. Upgrade steps are cumulative and are never
 * edited once shipped: a change is a new `if (oldVersion < N)` step and a new version.
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { RunHeader, SampleRecord } from '../../core/run/types.ts';
import type { BuiltSuite } from '../../core/ts/suite.ts';
import type { GoldOverlayRecord } from '../../core/run/overlay-record.ts';
import type { VersionCheckRecord } from '../../core/run/version-effects.ts';
import type { EvalItem } from '../../core/types.ts';
import type {
  DatasetRecord,
  SeriesFolderRecord,
  SeriesRecord,
  ExclusionsRecord,
  SeriesScoresRecord,
  StoredDatabase,
} from '../../app/records.ts';

export const DEFAULT_DB_NAME = 'rlvr-workbench';
export const SCHEMA_VERSION = 7;

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
interface RunInputRecord {
  runId: string;
  items: EvalItem[];
  /** Generation runs: the plan (spec and questions); `items` is then empty. See src/app/generation-run.ts. */
  generation?: import('../../app/records.ts').GenerationPlan;
}

/** A sample as stored in version 1: the record plus the run it belongs to (part of its key). */
type StoredSample = SampleRecord & { runId: string };

/**
 * Samples are stored in blocks (version 2). Measured in headless Chromium here, one IndexedDB
 * record per sample stores only 2,000-6,000 samples/s whatever the batching, key path, index
 * or durability (the cost is per record), far from the 10,000/s a long run needs. So a run
 * appends one block per ~50 ms batch (arrival order), and when it stops the blocks are
 * rewritten in (index, sample) order, BLOCK_SIZE samples each, so a page is one or two reads.
 * A sample is identified by (runId, index, sample): readers keep the last copy of a key, so a
 * sample can never be counted twice.
 */
interface SampleBlock {
  runId: string;
  block: number;
  samples: SampleRecord[];
}

/** Per run: whether its blocks are in (index, sample) order of BLOCK_SIZE, and how many samples. */
interface SampleMeta {
  runId: string;
  sorted: boolean;
  count: number;
  blockSize: number;
}

export const BLOCK_SIZE = 100;

export interface WorkbenchDB extends DBSchema {
  datasets: { key: string; value: DatasetRecord };
  /** Keyed by sha256: one record per distinct database file. */
  databases: { key: string; value: DatabaseRecord };
  /** Database bytes: key [sha256, chunk number]. */
  chunks: { key: [string, number]; value: Blob };
  runs: { key: string; value: RunHeader };
  runInputs: { key: string; value: RunInputRecord };
  /** Version 1 only (migrated to sampleBlocks by version 2). */
  samples: { key: [string, number, number]; value: StoredSample; indexes: { byRun: string } };
  /** Key [runId, block number]. */
  sampleBlocks: { key: [string, number]; value: SampleBlock };
  sampleMeta: { key: string; value: SampleMeta };
  /** Version 3: built test suites (metric ts), key `sha256 of the database file` + settings (suite-cache.ts). */
  suites: { key: string; value: StoredSuite };
  /**
   * Version 4: the verdict cache (src/core/run/verdict-cache.ts; verdict-cache-idb.ts), by key,
   * with its last use; the databases' facts are kept there too, under keys of their own.
   */
  verdicts: { key: string; value: StoredVerdict | StoredFacts | StoredVerdictMeta; indexes: { byUsed: number } };
  /** Version 5: the corrected-gold overlay attached to a run (one per run), key runId (core/run/overlay-record.ts). */
  overlays: { key: string; value: GoldOverlayRecord };
  /** Version 5: the run's version-sensitive samples re-run on the older SQLite, key runId (core/run/version-effects.ts). */
  versionChecks: { key: string; value: VersionCheckRecord };
  /** Version 6: training runs (series), by id; `byRun` finds the series a run is a step of. */
  series: { key: string; value: SeriesRecord; indexes: { byRun: string } };
  /** Version 6: the trainer's scores of each step, key [seriesId, step]. */
  seriesScores: { key: [string, number]; value: SeriesScoresRecord };
  /** Version 6: the folder a series follows, by series id. */
  seriesFolders: { key: string; value: SeriesFolderRecord };
  /** Version 7: the questions excluded from a run's or a training run's metrics, by the run's or series' id (core/eval/exclusions.ts). */
  exclusions: { key: string; value: ExclusionsRecord };
}

/**
 * A verdict (CachedVerdict) as `body`, its JSON, authenticated by `mac` (verdict-cache-idb.ts).
 * Records of the first shape (`verdict` or `facts` as an object, no MAC) read as misses.
 */
export interface StoredVerdict {
  key: string;
  body: string;
  /** HMAC-SHA256 of the kind, key and body under the store's key (StoredVerdictMeta). */
  mac: ArrayBuffer;
  /** Last use (Date.now()): the least recently used go first past a bound. */
  used: number;
  /** What the record counts for in the byte bound. */
  bytes: number;
}

/** A database's facts for the version scan (CachedFacts, as JSON), by `facts NUL executor NUL sha256`. */
type StoredFacts = StoredVerdict;

/** The verdict store's own records (no `used`: outside the index, the bounds and the count): its HMAC key, its byte total. */
export interface StoredVerdictMeta {
  key: string;
  hmacKey?: CryptoKey;
  bytes?: number;
}

interface StoredSuite {
  key: string;
  suite: BuiltSuite;
  createdAt: string;
}

export type WorkbenchIdb = IDBPDatabase<WorkbenchDB>;

export async function openWorkbenchDb(name: string = DEFAULT_DB_NAME): Promise<WorkbenchIdb> {
  const db = await openDB<WorkbenchDB>(name, SCHEMA_VERSION, {
    upgrade(database, oldVersion, _newVersion, transaction) {
      if (oldVersion < 1) {
        database.createObjectStore('datasets', { keyPath: 'id' });
        database.createObjectStore('databases', { keyPath: 'sha256' });
        database.createObjectStore('chunks');
        database.createObjectStore('runs', { keyPath: 'id' });
        database.createObjectStore('runInputs', { keyPath: 'runId' });
        const samples = database.createObjectStore('samples', { keyPath: ['runId', 'index', 'sample'] });
        samples.createIndex('byRun', 'runId');
      }
      if (oldVersion < 2) {
        const blocks = database.createObjectStore('sampleBlocks', { keyPath: ['runId', 'block'] });
        database.createObjectStore('sampleMeta', { keyPath: 'runId' });
        // Each run's version-1 samples become one unsorted block; sorting happens at the next read or resume.
        const old = transaction.objectStore('samples');
        void old.getAll().then((rows) => {
          const byRun = new Map<string, SampleRecord[]>();
          for (const { runId, ...s } of rows) {
            const list = byRun.get(runId);
            if (list) list.push(s);
            else byRun.set(runId, [s]);
          }
          for (const [runId, samples] of byRun) void blocks.put({ runId, block: 0, samples });
          database.deleteObjectStore('samples');
        });
      }
      if (oldVersion < 3) database.createObjectStore('suites', { keyPath: 'key' });
      if (oldVersion < 4) database.createObjectStore('verdicts', { keyPath: 'key' }).createIndex('byUsed', 'used');
      // Version 5 adds two stores keyed by run (docs/gold-overlays.md, docs/version-effects.md); nothing stored before is touched.
      if (oldVersion < 5) {
        database.createObjectStore('overlays', { keyPath: 'runId' });
        database.createObjectStore('versionChecks', { keyPath: 'runId' });
      }
      // Version 6 adds the training runs' stores (docs/series.md); nothing stored before is touched.
      if (oldVersion < 6) {
        database.createObjectStore('series', { keyPath: 'id' }).createIndex('byRun', 'runIds', { multiEntry: true });
        database.createObjectStore('seriesScores', { keyPath: ['seriesId', 'step'] });
        database.createObjectStore('seriesFolders', { keyPath: 'seriesId' });
      }
      // Version 7 adds the exclusions' store (docs/exclusions.md); nothing stored before is touched.
      if (oldVersion < 7) database.createObjectStore('exclusions', { keyPath: 'ownerId' });
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

/** All trainer-score records of one series. */
export function seriesScoresRange(seriesId: string): IDBKeyRange {
  return IDBKeyRange.bound([seriesId, -Infinity], [seriesId, Infinity]);
}

/** All sample blocks of one run, in block order. */
export function blockRange(runId: string, from = 0, to = Infinity): IDBKeyRange {
  return IDBKeyRange.bound([runId, from], [runId, to]);
}
