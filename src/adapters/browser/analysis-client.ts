/**
 * Main-thread side of the analysis worker (workers/analysis.api.ts): one worker per job, which
 * reads the run from IndexedDB by itself; cancelling (AbortSignal) terminates it, since the
 * computation is one synchronous loop that no message could interrupt. Errors are rebuilt as
 * the classes the UI guards on.
 */
import { proxy, wrap, type Remote } from 'comlink';
import type { RunComparison } from '../../core/rl/compare.ts';
import type { PromptRow, RunStatsView } from '../../core/rl/stats-view.ts';
import type { AnalysisOutcome, AnalysisWorkerApi } from '../../../workers/analysis.api.ts';
import { errorFromData, workerFailure } from './import-client.ts';
import type { AnalysisProgress } from '../../app/records.ts';
import type { AnalysisHooks, AnalysisPort, SeriesAnalysisPort } from '../../app/store-ports.ts';
import { CancelledError } from '../../core/errors.ts';

async function inWorker<T>(
  hooks: AnalysisHooks,
  call: (api: Remote<AnalysisWorkerApi>, onProgress?: (p: AnalysisProgress) => void) => Promise<AnalysisOutcome<T>>,
): Promise<T> {
  if (hooks.signal?.aborted) throw new CancelledError('analysis cancelled');
  const worker = new Worker(new URL('../../../workers/analysis.worker.ts', import.meta.url), {
    type: 'module',
    name: 'analysis',
  });
  let onAbort = () => {};
  const cancelled = new Promise<never>((_, reject) => {
    onAbort = () => reject(new CancelledError('analysis cancelled'));
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const api = wrap<AnalysisWorkerApi>(worker);
    const o = await Promise.race([
      call(api, hooks.onProgress ? proxy(hooks.onProgress) : undefined),
      workerFailure(worker, 'analysis'),
      cancelled,
    ]);
    if (o.ok) return o.value;
    throw errorFromData(o.error);
  } finally {
    hooks.signal?.removeEventListener('abort', onAbort);
    worker.terminate();
  }
}

export function createAnalysisClient(dbName: string): AnalysisPort & SeriesAnalysisPort {
  return {
    async runStats(runId, seed, hooks = {}): Promise<RunStatsView> {
      // The prompts arrive in several messages (one task each on the page), the rest after them.
      const prompts: PromptRow[] = [];
      const onPrompts = proxy((chunk: PromptRow[]) => void prompts.push(...chunk));
      const view = await inWorker(hooks, (api, onProgress) =>
        api.runStats({ dbName, runId, seed, ...(hooks.gold ? { gold: hooks.gold } : {}) }, onProgress, onPrompts),
      );
      return { ...view, prompts };
    },
    compare(runIdA, runIdB, options, hooks = {}): Promise<RunComparison> {
      return inWorker(hooks, (api, onProgress) =>
        api.compare(
          {
            dbName,
            runIdA,
            runIdB,
            resamples: options.resamples,
            seed: options.seed,
            ...(options.gold ? { gold: options.gold } : {}),
          },
          onProgress,
        ),
      );
    },
    seriesView(seriesId, hooks = {}) {
      return inWorker(hooks, (api, onProgress) => api.seriesView({ dbName, seriesId }, onProgress));
    },
    seriesQuestion(seriesId, index, hooks = {}) {
      return inWorker(hooks, (api, onProgress) => api.seriesQuestion({ dbName, seriesId, index }, onProgress));
    },
    seriesExport(seriesId, kind, hooks = {}) {
      return inWorker(hooks, (api, onProgress) => api.seriesExport({ dbName, seriesId, kind }, onProgress));
    },
    seriesReport(seriesId, input, hooks = {}) {
      // The page answers the worker's wrong samples with their rows (it has the SQL pool; the worker has none).
      const rows = hooks.resultRows;
      return inWorker(hooks, (api, onProgress) =>
        api.seriesReport({ dbName, seriesId, ...input }, onProgress, rows ? proxy(rows) : undefined),
      );
    },
  };
}
