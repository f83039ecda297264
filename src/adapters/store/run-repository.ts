/**
 * Runs in IndexedDB, persistence only: headers, samples in blocks (sample-blocks.ts), run files
 * in and out, rubric scores written into samples. Evaluation lives in the run service.
 */
import { sampleKey } from '../../core/eval/constants.ts';
import { toRunFile } from '../../core/runfile/export.ts';
import type { RunHeader, SampleRecord } from '../../core/run/types.ts';
import { withStoredExtras } from '../../core/run/overlay-record.ts';
import { deleteUnreferenced } from './dataset-repository.ts';
import { StoreError, isQuotaError } from '../../app/store-errors.ts';
import { withRunLock, lockedRunIds } from './run-session.ts';
import { storeRunUpload } from './run-upload.ts';
import { allSamples, countSamples, questionSamples, samplePage } from './sample-blocks.ts';
import { blockRange, type WorkbenchIdb } from './schema.ts';
import type { RunRepository } from '../../app/store-ports.ts';
import type { StoreWorkers } from '../../app/records.ts';

/** The run, or NOT_FOUND naming it. */
export async function runOrThrow(idb: WorkbenchIdb, runId: string): Promise<RunHeader> {
  const run = await idb.get('runs', runId);
  if (!run) throw new StoreError('NOT_FOUND', `run ${runId} is not in browser storage (deleted?)`);
  return run;
}

/** Deletes a run (header, inputs, samples), takes it out of the series it was a step of, and deletes the databases no longer used. */
export async function deleteRun(idb: WorkbenchIdb, runId: string): Promise<void> {
  const run = await idb.get('runs', runId);
  const tx = idb.transaction(
    [
      'runs',
      'runInputs',
      'sampleBlocks',
      'sampleMeta',
      'overlays',
      'versionChecks',
      'series',
      'seriesScores',
      'exclusions',
    ],
    'readwrite',
  );
  // A run deleted on its own leaves every training run it was a step of.
  for (const s of await tx.objectStore('series').index('byRun').getAll(runId)) {
    const steps = s.steps.filter((x) => x.runId !== runId);
    for (const gone of s.steps.filter((x) => x.runId === runId))
      void tx.objectStore('seriesScores').delete([s.id, gone.step]);
    void tx.objectStore('series').put({ ...s, steps, runIds: steps.map((x) => x.runId) });
  }
  void tx.objectStore('overlays').delete(runId);
  void tx.objectStore('versionChecks').delete(runId);
  void tx.objectStore('exclusions').delete(runId);
  void tx.objectStore('runs').delete(runId);
  void tx.objectStore('runInputs').delete(runId);
  void tx.objectStore('sampleBlocks').delete(blockRange(runId));
  void tx.objectStore('sampleMeta').delete(runId);
  await tx.done;
  if (run) await deleteUnreferenced(idb, Object.values(run.dataset.databases));
}

export function createRunRepository(
  opened: Promise<WorkbenchIdb>,
  options: { dbName?: string; workers?: Pick<StoreWorkers, 'importRunFile'> } = {},
): RunRepository {
  const samples = async (runId: string, page?: { offset: number; limit: number }) => {
    const idb = await opened;
    return page ? samplePage(idb, runId, page.offset, page.limit) : allSamples(idb, runId);
  };
  return {
    async list() {
      const all = await (await opened).getAll('runs');
      return all.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    },
    async get(runId) {
      return (await opened).get('runs', runId);
    },
    samples,
    async questionSamples(runId, index) {
      return questionSamples(await opened, runId, index);
    },
    async sampleCount(runId) {
      return countSamples(await opened, runId);
    },
    async rename(runId, name) {
      const tx = (await opened).transaction('runs', 'readwrite');
      const run = await tx.store.get(runId);
      if (run) await tx.store.put({ ...run, name, updatedAt: new Date().toISOString() });
      await tx.done;
    },
    async delete(runId) {
      await deleteRun(await opened, runId);
    },
    async exclusions(ownerId) {
      return (await (await opened).get('exclusions', ownerId))?.exclusions ?? [];
    },
    async setExclusions(ownerId, owner, exclusions) {
      const idb = await opened;
      // Only for a run or series still stored: an exclusion never outlives what it excludes from.
      const there = owner === 'run' ? await idb.get('runs', ownerId) : await idb.get('series', ownerId);
      if (!there)
        throw new StoreError(
          'NOT_FOUND',
          `${owner === 'run' ? 'run' : 'training run'} ${ownerId} is not in browser storage (deleted?)`,
        );
      if (exclusions.length === 0) await idb.delete('exclusions', ownerId);
      else await idb.put('exclusions', { ownerId, owner, exclusions: [...exclusions] });
    },
    async export(runId) {
      const idb = await opened;
      const run = await runOrThrow(idb, runId);
      // The overlay and the version check stored with the run go into the file (docs/gold-overlays.md).
      const [overlay, check] = await Promise.all([idb.get('overlays', runId), idb.get('versionChecks', runId)]);
      const file = withStoredExtras(run, await samples(runId), overlay, check);
      return toRunFile(file.run, file.samples);
    },
    async importFile(text, fileName) {
      return storeRunUpload(await opened, text, fileName);
    },
    ...(options.dbName === undefined || !options.workers
      ? {}
      : {
          importBlob: (file: Blob, fileName: string) =>
            options.workers!.importRunFile({ dbName: options.dbName!, file, fileName }),
        }),
    activeIds: lockedRunIds,
    async setSampleRubrics(runId, scored) {
      const idb = await opened;
      const run = await runOrThrow(idb, runId);
      return withRunLock(
        runId,
        `run "${run.name}" is being evaluated: write rubric scores into it once it has finished`,
        async () => {
          const byKey = new Map(scored.map((s) => [sampleKey(s), s]));
          let updated = 0;
          try {
            // One transaction: every block gets the scores, or (quota, a closed tab) none does.
            const tx = idb.transaction('sampleBlocks', 'readwrite');
            let cursor = await tx.store.openCursor(blockRange(runId));
            while (cursor) {
              let changed = false;
              const next = cursor.value.samples.map((rec) => {
                const s = byKey.get(sampleKey(rec));
                if (!s) return rec;
                changed = true;
                updated += 1;
                const out: SampleRecord = { ...rec, rubric: s.rubric };
                if (s.rubricScore === null) delete out.rubricScore;
                else out.rubricScore = s.rubricScore;
                return out;
              });
              if (changed) await cursor.update({ ...cursor.value, samples: next });
              cursor = await cursor.continue();
            }
            await tx.done;
            return updated;
          } catch (err) {
            if (isQuotaError(err)) {
              throw new StoreError(
                'QUOTA_EXCEEDED',
                `Browser storage is full: the rubric scores of run "${run.name}" were not written (nothing in the run changed). Free space by deleting datasets or runs.`,
              );
            }
            throw err;
          }
        },
      );
    },
    async generationPlan(runId) {
      return (await (await opened).get('runInputs', runId))?.generation;
    },
  };
}
