/** Analysis worker entry: see analysis.api.ts. One worker per job; cancelling terminates it. */
import { expose } from 'comlink';
import { StoreError } from '../src/app/store-errors.ts';
import { allSamplesInSteps, questionSamples, questionSamplesAt } from '../src/adapters/store/sample-blocks.ts';
import { seriesOrThrow } from '../src/adapters/store/series-repository.ts';
import { openWorkbenchDb } from '../src/adapters/store/schema.ts';
import type { AnalysisWorkerApi } from './analysis.api.ts';
import { createAnalysisEngine } from './analysis-engine.ts';

const api = createAnalysisEngine(async (dbName) => {
  const idb = await openWorkbenchDb(dbName);
  return {
    async header(runId) {
      const run = await idb.get('runs', runId);
      if (!run) throw new StoreError('NOT_FOUND', `run ${runId} is not in browser storage (deleted?)`);
      return run;
    },
    samples: (runId, onStep, keep) => allSamplesInSteps(idb, runId, onStep, keep),
    overlay: (runId) => idb.get('overlays', runId),
    exclusions: async (ownerId) => (await idb.get('exclusions', ownerId))?.exclusions ?? [],
    seriesOfRun: (runId) => idb.getAllFromIndex('series', 'byRun', runId),
    series: (seriesId) => seriesOrThrow(idb, seriesId),
    scores: async (seriesId, step) => (await idb.get('seriesScores', [seriesId, step]))?.scores ?? [],
    rewards: async (seriesId, step) => (await idb.get('seriesScores', [seriesId, step]))?.rewards ?? [],
    questionSamples: (runId, index) => questionSamples(idb, runId, index),
    questionSamplesAt: (runId, index) => questionSamplesAt(idb, runId, index),
    questions: async (datasetId) => (await idb.get('datasets', datasetId))?.questions,
    close: () => idb.close(),
  };
});

expose(api satisfies AnalysisWorkerApi);
