/**
 * Training runs (series) in IndexedDB, persistence only (schema version 6): the series records,
 * each step's trainer scores, and the folder a series follows. A step's run is an ordinary
 * stored run (runs, runInputs, sample blocks); deleting a series deletes the runs it made
 * (`owned`) with it, in one transaction, never the runs grouped by hand. What a step is and how
 * it is evaluated is src/app/series-service.ts's.
 */
import { deleteUnreferenced } from './dataset-repository.ts';
import { StoreError, isQuotaError } from '../../app/store-errors.ts';
import type { SeriesRecord, SeriesScoresRecord } from '../../app/records.ts';
import type { SeriesRepository } from '../../app/store-ports.ts';
import { blockRange, seriesScoresRange, type WorkbenchIdb } from './schema.ts';

export async function seriesOrThrow(idb: WorkbenchIdb, seriesId: string): Promise<SeriesRecord> {
  const s = await idb.get('series', seriesId);
  if (!s) throw new StoreError('NOT_FOUND', `training run ${seriesId} is not in browser storage (deleted?)`);
  return s;
}

const quota = (what: string) =>
  new StoreError(
    'QUOTA_EXCEEDED',
    `Browser storage is full: ${what} was not stored (nothing already stored changed). Free space by deleting datasets or runs.`,
  );

export function createSeriesRepository(opened: Promise<WorkbenchIdb>): SeriesRepository {
  return {
    async list() {
      const all = await (await opened).getAll('series');
      return all.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    },
    async get(seriesId) {
      return seriesOrThrow(await opened, seriesId);
    },
    async create(series) {
      const idb = await opened;
      const tx = idb.transaction('series', 'readwrite');
      const had = await tx.store.get(series.id);
      if (had) throw new StoreError('ALREADY_EXISTS', `training run "${had.name}" is already stored`);
      try {
        await tx.store.put(series);
        await tx.done;
      } catch (err) {
        if (isQuotaError(err)) throw quota(`training run "${series.name}"`);
        throw err;
      }
    },
    async addStep(seriesId, step, scores, rewards) {
      const idb = await opened;
      const tx = idb.transaction(['series', 'seriesScores'], 'readwrite');
      const s = await tx.objectStore('series').get(seriesId);
      if (!s) throw new StoreError('NOT_FOUND', `training run ${seriesId} is not in browser storage (deleted?)`);
      const had = s.steps.find((x) => x.step === step.step);
      if (had)
        throw new StoreError(
          'ALREADY_EXISTS',
          `step ${step.step} is already in training run "${s.name}" (from ${had.source}); each step is evaluated once`,
        );
      const steps = [...s.steps, step].sort((a, b) => a.step - b.step);
      const next: SeriesRecord = {
        ...s,
        steps,
        runIds: steps.map((x) => x.runId),
        updatedAt: new Date().toISOString(),
      };
      try {
        void tx.objectStore('series').put(next);
        void tx
          .objectStore('seriesScores')
          .put({ seriesId, step: step.step, scores, ...(rewards ? { rewards } : {}) } satisfies SeriesScoresRecord);
        await tx.done;
      } catch (err) {
        if (isQuotaError(err)) throw quota(`step ${step.step} of "${s.name}"`);
        throw err;
      }
      return next;
    },
    async rename(seriesId, name) {
      const idb = await opened;
      const tx = idb.transaction('series', 'readwrite');
      const s = await tx.store.get(seriesId);
      if (s) await tx.store.put({ ...s, name, updatedAt: new Date().toISOString() });
      await tx.done;
    },
    async delete(seriesId) {
      const idb = await opened;
      const s = await idb.get('series', seriesId);
      if (!s) return;
      const owned = s.steps.filter((x) => x.owned).map((x) => x.runId);
      const databases = new Set<string>();
      const tx = idb.transaction(
        ['series', 'seriesScores', 'seriesFolders', 'runs', 'runInputs', 'sampleBlocks', 'sampleMeta', 'exclusions'],
        'readwrite',
      );
      for (const runId of owned) {
        const run = await tx.objectStore('runs').get(runId);
        for (const sha of Object.values(run?.dataset.databases ?? {})) databases.add(sha);
        void tx.objectStore('runs').delete(runId);
        void tx.objectStore('runInputs').delete(runId);
        void tx.objectStore('sampleBlocks').delete(blockRange(runId));
        void tx.objectStore('sampleMeta').delete(runId);
        void tx.objectStore('exclusions').delete(runId);
      }
      void tx.objectStore('exclusions').delete(seriesId);
      void tx.objectStore('series').delete(seriesId);
      void tx.objectStore('seriesScores').delete(seriesScoresRange(seriesId));
      void tx.objectStore('seriesFolders').delete(seriesId);
      await tx.done;
      if (databases.size > 0) await deleteUnreferenced(idb, databases);
    },
    async ofRun(runId) {
      return (await opened).getAllFromIndex('series', 'byRun', runId);
    },
    async scores(seriesId, step) {
      return (await (await opened).get('seriesScores', [seriesId, step]))?.scores ?? [];
    },
    async rewards(seriesId, step) {
      return (await (await opened).get('seriesScores', [seriesId, step]))?.rewards ?? [];
    },
    async folder(seriesId) {
      return (await opened).get('seriesFolders', seriesId);
    },
    async putFolder(folder) {
      await (await opened).put('seriesFolders', folder);
    },
    async deleteFolder(seriesId) {
      await (await opened).delete('seriesFolders', seriesId);
    },
  };
}
