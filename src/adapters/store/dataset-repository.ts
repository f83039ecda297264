/**
 * Datasets and their database files in IndexedDB. Imports (hashing, unzipping, writing chunks)
 * run in the import worker, handed in by the composition root (`StoreWorkers`); this side
 * lists, describes and deletes.
 */
import { StoreError } from '../../app/store-errors.ts';
import { chunkRange, type WorkbenchIdb } from './schema.ts';
import { storeDbSource, storedDbIds } from './store-db-source.ts';
import { idbSuiteCache } from './suite-cache.ts';
import type { DatasetRepository, StoragePort } from '../../app/store-ports.ts';
import type { DatasetCard, DatasetRecord, StoreWorkers } from '../../app/records.ts';

/** Deletes database records and chunks that no dataset or run refers to any more. */
export async function deleteUnreferenced(idb: WorkbenchIdb, candidates: Iterable<string>): Promise<void> {
  const tx = idb.transaction(['datasets', 'runs', 'databases', 'chunks'], 'readwrite');
  const used = new Set<string>();
  for (const d of await tx.objectStore('datasets').getAll()) for (const s of Object.values(d.databases)) used.add(s);
  for (const r of await tx.objectStore('runs').getAll())
    for (const s of Object.values(r.dataset.databases)) used.add(s);
  for (const sha of new Set(candidates)) {
    if (used.has(sha)) continue;
    await tx.objectStore('databases').delete(sha);
    await tx.objectStore('chunks').delete(chunkRange(sha));
  }
  await tx.done;
}

/** The dataset, or NOT_FOUND naming it. */
export async function datasetOrThrow(idb: WorkbenchIdb, datasetId: string): Promise<DatasetRecord> {
  const ds = await idb.get('datasets', datasetId);
  if (!ds) throw new StoreError('NOT_FOUND', `dataset ${datasetId} is not in browser storage (deleted?)`);
  return ds;
}

/** Gold positions of the dataset's questions whose database is stored. */
export async function questionsWithDatabase(idb: WorkbenchIdb, dataset: DatasetRecord): Promise<number[]> {
  const stored = await storedDbIds(idb, dataset.databases);
  return dataset.questions.flatMap((q, i) => (stored.has(q.dbId) ? [i] : []));
}

export function createDatasetRepository(
  opened: Promise<WorkbenchIdb>,
  opts: {
    dbName: string;
    storage: StoragePort;
    workers: Pick<StoreWorkers, 'importDataset'>;
    simulateQuotaAfterBytes?: number;
  },
): DatasetRepository {
  return {
    async import(source, hooks = {}) {
      await opened;
      // Best effort: a persisted origin is not evicted under storage pressure.
      void opts.storage.requestPersistence().catch(() => false);
      return opts.workers.importDataset(
        { dbName: opts.dbName, source, simulateQuotaAfterBytes: opts.simulateQuotaAfterBytes },
        hooks,
      );
    },
    async list() {
      const all = await (await opened).getAll('datasets');
      return all.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },
    async get(datasetId) {
      return (await opened).get('datasets', datasetId);
    },
    async card(datasetId): Promise<DatasetCard> {
      const idb = await opened;
      const dataset = await datasetOrThrow(idb, datasetId);
      const byDifficulty: Record<string, number> = {};
      const byDb: DatasetCard['byDb'] = {};
      const questionsWithoutDb: number[] = [];
      for (const [i, q] of dataset.questions.entries()) {
        byDifficulty[q.difficulty] = (byDifficulty[q.difficulty] ?? 0) + 1;
        const sha = dataset.databases[q.dbId] ?? null;
        let entry = byDb[q.dbId];
        if (!entry) {
          const rec = sha ? await idb.get('databases', sha) : undefined;
          entry = byDb[q.dbId] = {
            questions: 0,
            sizeBytes: rec?.sizeBytes ?? null,
            sha256: rec ? sha : null,
            knownAs: rec?.knownAs ?? null,
          };
        }
        entry.questions++;
        if (entry.sha256 === null) questionsWithoutDb.push(i);
      }
      return { dataset, byDifficulty, byDb, questionsWithoutDb };
    },
    async delete(datasetId) {
      const idb = await opened;
      const ds = await idb.get('datasets', datasetId);
      if (!ds) return;
      await idb.delete('datasets', datasetId);
      await deleteUnreferenced(idb, Object.values(ds.databases));
    },
    async databases() {
      const all = await (await opened).getAll('databases');
      return all.map(({ sha256, dbId, sizeBytes, knownAs, storedAt }) => ({
        sha256,
        dbId,
        sizeBytes,
        knownAs,
        storedAt,
      }));
    },
    source(databases, datasetName) {
      return storeDbSource(opened, databases, datasetName);
    },
    suiteCache(databases) {
      const cache = opened.then((idb) => idbSuiteCache(idb, databases));
      return {
        get: async (dbId, spec) => (await cache).get(dbId, spec),
        put: async (dbId, spec, suite) => (await cache).put(dbId, spec, suite),
      };
    },
    async questionsWithDatabase(datasetId) {
      const idb = await opened;
      return questionsWithDatabase(idb, await datasetOrThrow(idb, datasetId));
    },
  };
}
