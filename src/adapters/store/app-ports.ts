/**
 * The app's persistence ports (src/app/ports.ts: run repository, datasets, what is stored with a
 * run besides its samples, run sessions) over
 * one IndexedDB connection. Plain persistence: headers, inputs, sample blocks, database
 * records, Web Locks and the sample writer; what to run and how is src/app/'s.
 */
import type { RunHeader } from '../../core/run/types.ts';
import type { EvalItem } from '../../core/types.ts';
import type { GoldOverlayRecord } from '../../core/run/overlay-record.ts';
import type { VersionCheckRecord } from '../../core/run/version-effects.ts';
import { datasetOrThrow, questionsWithDatabase } from './dataset-repository.ts';
import type { DatasetRecord, GenerationPlan } from '../../app/records.ts';
import { deleteRun, runOrThrow } from './run-repository.ts';
import { openRunSession, withRunLock } from './run-session.ts';
import { allSamples, storedKeys } from './sample-blocks.ts';
import type { WorkbenchIdb } from './schema.ts';
import { storeDbSource, storedDbIds } from './store-db-source.ts';
import { idbSuiteCache } from './suite-cache.ts';
import { idbVerdictStore } from './verdict-cache-idb.ts';

export function idbAppPorts(idb: WorkbenchIdb, testing: { simulateQuotaAfterSamples?: number } = {}) {
  return {
    runs: {
      async create(header: RunHeader, inputs: { items: EvalItem[]; generation?: GenerationPlan }) {
        const tx = idb.transaction(['runs', 'runInputs'], 'readwrite');
        void tx.objectStore('runs').put(header);
        void tx.objectStore('runInputs').put({ runId: header.id, ...inputs });
        await tx.done;
      },
      get: (runId: string) => runOrThrow(idb, runId),
      put: async (header: RunHeader) => void (await idb.put('runs', header)),
      list: () => idb.getAll('runs'),
      putInputs: async (runId: string, inputs: { items: EvalItem[]; generation?: GenerationPlan }) =>
        void (await idb.put('runInputs', { runId, ...inputs })),
      inputs: (runId: string) => idb.get('runInputs', runId),
      storedKeys: (runId: string) => storedKeys(idb, runId),
      samples: (runId: string) => allSamples(idb, runId),
      delete: (runId: string) => deleteRun(idb, runId),
    },
    datasets: {
      get: (datasetId: string) => datasetOrThrow(idb, datasetId),
      questionsWithDatabase: (dataset: DatasetRecord) => questionsWithDatabase(idb, dataset),
      storedDbIds: (databases: Record<string, string>) => storedDbIds(idb, databases),
      source: (databases: Record<string, string>, datasetName: string) => storeDbSource(idb, databases, datasetName),
      suiteCache: (databases: Record<string, string>) => idbSuiteCache(idb, databases),
    },
    extras: {
      overlay: (runId: string) => idb.get('overlays', runId),
      putOverlay: async (record: GoldOverlayRecord) => void (await idb.put('overlays', record)),
      removeOverlay: async (runId: string) => void (await idb.delete('overlays', runId)),
      versionCheck: (runId: string) => idb.get('versionChecks', runId),
      putVersionCheck: async (record: VersionCheckRecord) => void (await idb.put('versionChecks', record)),
    },
    verdicts: idbVerdictStore(idb),
    sessions: {
      withLock: withRunLock,
      open: (run: RunHeader, signal?: AbortSignal) =>
        openRunSession({ idb, simulateQuotaAfterSamples: testing.simulateQuotaAfterSamples }, run, signal),
    },
  };
}

export type IdbAppPorts = ReturnType<typeof idbAppPorts>;
