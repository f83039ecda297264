/** Import worker entry: see import.api.ts. */
import { expose } from 'comlink';
import { importDataset } from '../src/adapters/import/import-dataset.ts';
import { pairRunPredictions } from '../src/adapters/import/pair-run.ts';
import { pairSeriesDump } from '../src/adapters/import/pair-series.ts';
import { storeSeriesFile } from '../src/adapters/store/series-file-store.ts';
import { releaseSpooledFiles } from '../src/adapters/import/nested-zip.ts';
import { toErrorData } from '../src/core/errors.ts';
import { storeRunUpload } from '../src/adapters/store/run-upload.ts';
import { openWorkbenchDb, type WorkbenchIdb } from '../src/adapters/store/schema.ts';
import type { ImportWorkerApi, Outcome, RunFileJob } from './import.api.ts';

const jobs = new Map<string, AbortController>();

async function outcome<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    return { ok: false, error: toErrorData(err) };
  }
}

/** An uploaded file's text stored by `store` in the job's database, closed again afterwards. */
async function storeUploadedFile<T>(
  job: RunFileJob,
  store: (idb: WorkbenchIdb, text: string, fileName: string) => Promise<T>,
): Promise<T> {
  const idb = await openWorkbenchDb(job.dbName);
  try {
    return await store(idb, await job.file.text(), job.fileName);
  } finally {
    idb.close();
  }
}

const api: ImportWorkerApi = {
  async importDataset(job, onProgress) {
    const ctl = new AbortController();
    jobs.set(job.jobId, ctl);
    return outcome(async () => {
      const idb = await openWorkbenchDb(job.dbName);
      // Progress travels on the callback's own port: the last report ('done') is awaited before
      // the result is sent, or it could arrive after the caller has terminated this worker.
      let lastReport: Promise<unknown> = Promise.resolve();
      try {
        const record = await importDataset(idb, job.source, {
          signal: ctl.signal,
          onProgress: onProgress
            ? (p) => void (lastReport = Promise.resolve(onProgress(p)).catch(() => undefined))
            : undefined,
          simulateQuotaAfterBytes: job.simulateQuotaAfterBytes,
        });
        await lastReport;
        return record;
      } finally {
        idb.close();
        jobs.delete(job.jobId);
        await releaseSpooledFiles();
      }
    });
  },
  async abort(jobId) {
    jobs.get(jobId)?.abort();
  },
  async importRunFile(job) {
    return outcome(() => storeUploadedFile(job, storeRunUpload));
  },
  async pairPredictions(job) {
    return outcome(async () => pairRunPredictions(job));
  },
  async pairSeriesDump(job) {
    return outcome(async () => pairSeriesDump(job));
  },
  async importSeriesFile(job) {
    return outcome(() => storeUploadedFile(job, storeSeriesFile));
  },
};

expose(api satisfies ImportWorkerApi);
