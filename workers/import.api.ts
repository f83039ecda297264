/**
 * The contract of the import worker (workers/import.worker.ts): dataset import (hashing,
 * unzipping, writing database chunks to IndexedDB) and predictions parsing, off the main thread.
 * Results are plain data; errors come back as data too, since comlink keeps only an
 * error's name and message and the UI needs its `code`.
 */
import type { Result } from '../src/core/result.ts';
import type { ErrorData } from '../src/core/errors.ts';
import type { RunHeader } from '../src/core/run/types.ts';
import type {
  DatasetRecord,
  ImportProgress,
  ImportSource,
  PairJob,
  PairedPredictions,
  PairedSeriesDump,
  SeriesDumpJob,
  SeriesRecord,
} from '../src/app/records.ts';

export type { PairJob, PairedPredictions, PairedSeriesDump, SeriesDumpJob };

export type Outcome<T> = Result<T, ErrorData>;

export interface ImportJob {
  /** Lets `abort(jobId)` cancel it (an AbortSignal cannot cross to a worker). */
  jobId: string;
  dbName: string;
  source: ImportSource;
  simulateQuotaAfterBytes?: number;
}

export interface RunFileJob {
  dbName: string;
  /** The run file as picked (JSON: a run file or an `eval --out` report; HTML: an offline report); read in the worker. */
  file: Blob;
  fileName: string;
}

export interface ImportWorkerApi {
  /** Reads, validates and stores a run file or an offline report's runs (see run-upload.ts), off the main thread. */
  importRunFile(job: RunFileJob): Promise<Outcome<RunHeader[]>>;
  importDataset(job: ImportJob, onProgress?: (p: ImportProgress) => void): Promise<Outcome<DatasetRecord>>;
  abort(jobId: string): Promise<void>;
  /** Parses a predictions file (any core format), checks it belongs to the dataset, pairs it. */
  pairPredictions(job: PairJob): Promise<Outcome<PairedPredictions>>;
  /** Reads one file of a training run as steps (series-dump.ts) and pairs each with the gold. */
  pairSeriesDump(job: SeriesDumpJob): Promise<Outcome<PairedSeriesDump>>;
  /** Reads, validates and stores a series file (series-file-store.ts), off the main thread. */
  importSeriesFile(job: RunFileJob): Promise<Outcome<SeriesRecord>>;
}
