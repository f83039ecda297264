/**
 * The browser's record of datasets, databases and runs (IndexedDB), as the UI sees it.
 * Implemented by `idb-store.ts`; the UI receives it from its composition root.
 */
import type { EvalEvent } from '../../core/eval/executor.ts';
import type { GoldEntry, Question } from '../../core/types.ts';
import type { FileRef, RunConfig, RunHeader, SampleRecord } from '../../core/run/types.ts';

export interface StoredDatabase {
  /** sha256 of the file: one stored copy per distinct database, shared by every dataset and run. */
  sha256: string;
  dbId: string;
  sizeBytes: number;
  /** Name and version of a published release when the sha256 matches DB_REFERENCE-style fingerprints. */
  knownAs: string | null;
  storedAt: string;
}

export interface DatasetRecord {
  id: string;
  name: string;
  kind: 'bird' | 'spider' | 'custom';
  createdAt: string;
  questionsFile: FileRef;
  goldFile: FileRef | null;
  questions: Question[];
  gold: GoldEntry[];
  /** db_id -> sha256 of the stored database; a db_id absent here has no database. */
  databases: Record<string, string>;
}

export interface DatasetCard {
  dataset: DatasetRecord;
  byDifficulty: Record<string, number>;
  byDb: Record<string, { questions: number; sizeBytes: number | null; sha256: string | null; knownAs: string | null }>;
  questionsWithoutDb: number[];
}

export interface ImportProgress {
  phase: 'reading' | 'hashing' | 'storing' | 'parsing' | 'done';
  file: string;
  doneBytes: number;
  totalBytes: number;
}

/** What a user hands the importer: files from a picker, a dropped folder, or a zip. */
export interface ImportSource {
  kind: 'bird' | 'spider' | 'custom';
  name: string;
  /** Every file with its relative path (`dev_databases/x/x.sqlite`, `dev.json`, a .zip...). */
  files: { path: string; file: Blob }[];
}

export interface RunRequest {
  name: string;
  datasetId: string;
  subset: { description: string; indices: number[] };
  predictions: { name: string; text: string };
  config: RunConfig;
}

export interface StorageInfo {
  usage: number;
  quota: number;
  persisted: boolean;
}

export interface WorkbenchStore {
  storage(): Promise<StorageInfo>;
  requestPersistence(): Promise<boolean>;

  importDataset(source: ImportSource, hooks?: { signal?: AbortSignal; onProgress?: (p: ImportProgress) => void }): Promise<DatasetRecord>;
  listDatasets(): Promise<DatasetRecord[]>;
  datasetCard(datasetId: string): Promise<DatasetCard>;
  deleteDataset(datasetId: string): Promise<void>;

  /** Creates the run, evaluates it in the worker pool, stores each sample as it finishes. */
  startRun(req: RunRequest, hooks?: { signal?: AbortSignal; onEvent?: (e: EvalEvent) => void }): Promise<RunHeader>;
  /** Continues a run whose tab was closed: only samples not yet stored are evaluated. */
  resumeRun(runId: string, hooks?: { signal?: AbortSignal; onEvent?: (e: EvalEvent) => void }): Promise<RunHeader>;
  listRuns(): Promise<RunHeader[]>;
  getRun(runId: string): Promise<RunHeader | undefined>;
  /** Samples of a run in (index, sample) order; `offset`/`limit` page through large runs. */
  samples(runId: string, page?: { offset: number; limit: number }): Promise<SampleRecord[]>;
  renameRun(runId: string, name: string): Promise<void>;
  deleteRun(runId: string): Promise<void>;
}
