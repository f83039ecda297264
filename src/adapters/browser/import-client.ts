/**
 * Main-thread side of the import worker: one worker per call (freed when the call ends), errors
 * rebuilt as the classes the UI guards on, cancellation through an AbortSignal.
 */
import { proxy, wrap, type Remote } from 'comlink';
import { WorkbenchError, type ErrorCode, CancelledError, isCancellation } from '../../core/errors.ts';
import { StoreError, type ErrorData, type StoreErrorCode } from '../../app/store-errors.ts';
import type {
  ImportJob,
  ImportWorkerApi,
  Outcome,
  PairJob,
  PairedPredictions,
  PairedSeriesDump,
  RunFileJob,
  SeriesDumpJob,
} from '../../../workers/import.api.ts';
import type { RunHeader } from '../../core/run/types.ts';
import type { DatasetRecord, ImportProgress, SeriesRecord } from '../../app/store-ports.ts';

export function errorFromData(e: ErrorData): Error {
  if (e.name === 'WorkbenchError' && e.code) {
    const prefix = e.where ? `${e.where}: ` : '';
    const msg = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    return new WorkbenchError(e.code as ErrorCode, msg, e.where);
  }
  if (e.name === 'StoreError' && e.code) return new StoreError(e.code as StoreErrorCode, e.message);
  if (isCancellation(e)) return new CancelledError(e.message);
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

function unwrap<T>(o: Outcome<T>): T {
  if (o.ok) return o.value;
  throw errorFromData(o.error);
}

/** Rejects when the worker's script fails (it could not start, or it threw), naming it and what to do. */
export function workerFailure(worker: Worker, name: string): Promise<never> {
  return new Promise<never>((_, reject) => {
    worker.addEventListener('error', (e) =>
      reject(
        new WorkbenchError(
          'FAILED',
          `${e.message || `the ${name} worker failed to start`}: reload the page and try again`,
        ),
      ),
    );
  });
}

async function withWorker<T>(fn: (api: Remote<ImportWorkerApi>) => Promise<T>): Promise<T> {
  const worker = new Worker(new URL('../../../workers/import.worker.ts', import.meta.url), {
    type: 'module',
    name: 'import',
  });
  try {
    return await Promise.race([fn(wrap<ImportWorkerApi>(worker)), workerFailure(worker, 'import')]);
  } finally {
    worker.terminate();
  }
}

export function importInWorker(
  job: Omit<ImportJob, 'jobId'>,
  hooks: { signal?: AbortSignal; onProgress?: (p: ImportProgress) => void },
): Promise<DatasetRecord> {
  return withWorker(async (api) => {
    const jobId = crypto.randomUUID();
    const onAbort = () => void api.abort(jobId);
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (hooks.signal?.aborted) throw new CancelledError('import cancelled');
      const progress = hooks.onProgress ? proxy(hooks.onProgress) : undefined;
      return unwrap(await api.importDataset({ ...job, jobId }, progress));
    } finally {
      hooks.signal?.removeEventListener('abort', onAbort);
    }
  });
}

export function importRunFileInWorker(job: RunFileJob): Promise<RunHeader[]> {
  return withWorker(async (api) => unwrap(await api.importRunFile(job)));
}

export function pairInWorker(job: PairJob): Promise<PairedPredictions> {
  return withWorker(async (api) => unwrap(await api.pairPredictions(job)));
}

export function pairSeriesDumpInWorker(job: SeriesDumpJob): Promise<PairedSeriesDump> {
  return withWorker(async (api) => unwrap(await api.pairSeriesDump(job)));
}

export function importSeriesFileInWorker(job: RunFileJob): Promise<SeriesRecord> {
  return withWorker(async (api) => unwrap(await api.importSeriesFile(job)));
}
