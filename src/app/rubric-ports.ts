/**
 * The rubrics' records and repositories: the editor's rubrics, a stored run's scorings and the
 * judge cache (RubricRepository), and the RaR-style datasets and their runs (RarRepository).
 * The browser implements both over one IndexedDB database (adapters/judge/idb-judge-cache.ts,
 * adapters/judge/rar-store.ts); the rubric services (rubric-run-service.ts) and the screens
 * use only these ports. `get…` resolves with undefined when nothing is stored under the id.
 */
import type { HumanLabel, LabelMerge } from '../core/rubric/labels.ts';
import type { LabelMode } from './label-records.ts';
import type { JudgeCache } from '../core/rubric/judge-cache.ts';
import type { Rubric } from '../core/rubric/model.ts';
import type { RarSample } from '../core/rubric/rar-run.ts';
import type { RubricScores } from '../core/rubric/scores.ts';
import type { RarDatasetRecord, RarRunHeader, StoredRarSample } from './rar-records.ts';

export interface StoredRubric {
  rubric: Rubric;
  updatedAt: string;
}

export interface ScoredSample {
  index: number;
  sample: number;
  scores: RubricScores;
}

export interface StoredRubricRun {
  runId: string;
  rubricId: string;
  /** The rubric as it was when scored (it may be edited later). */
  rubric: Rubric;
  scoredAt: string;
  samples: ScoredSample[];
}

/** The editor's rubrics and the stored scorings, with the judge cache over the same database. */
export interface RubricRepository {
  list(): Promise<StoredRubric[]>;
  save(rubric: Rubric): Promise<void>;
  remove(id: string): Promise<void>;
  saveScores(run: StoredRubricRun): Promise<void>;
  getScores(runId: string, rubricId: string): Promise<StoredRubricRun | undefined>;
  /** Raw judge answers by the hash of prompt, model and parameters. */
  cache(): JudgeCache;
}

/** RaR-style rubric datasets, their runs' headers and samples. */
export interface RarRepository {
  /**
   * Parses (errors name the file and line, or row group, row and column) and stores a RaR
   * dataset: JSONL text, or a released Parquet split as a Blob; nothing is stored when it does
   * not parse.
   */
  importDataset(source: string | Blob, fileName: string, name?: string): Promise<RarDatasetRecord>;
  listDatasets(): Promise<RarDatasetRecord[]>;
  getDataset(id: string): Promise<RarDatasetRecord | undefined>;
  /** Deletes a dataset; refused while runs of it are stored (delete them first). */
  deleteDataset(id: string): Promise<void>;
  listRuns(): Promise<RarRunHeader[]>;
  getRun(id: string): Promise<RarRunHeader | undefined>;
  samples(runId: string): Promise<StoredRarSample[]>;
  deleteRun(runId: string): Promise<void>;
  /** Runs whose lock is held right now (in any tab); a `running` run not listed was interrupted. */
  activeRunIds(): Promise<string[]>;
  /** Stores a run's header (a new run, or its status). Storage errors are thrown as they come (isQuotaError tells a full disk). */
  putRun(run: RarRunHeader): Promise<void>;
  /** The (index, sample) keys of a run's stored samples. */
  sampleKeys(runId: string): Promise<Array<{ index: number; sample: number }>>;
  /** Stores one question's samples at once (all or none). Storage errors are thrown as they come. */
  putSamples(runId: string, samples: readonly RarSample[]): Promise<void>;
  /** Takes the run's lock (held across tabs) until the returned release is called; null when another holds it. */
  lockRun(runId: string): Promise<(() => void) | null>;
}

/** Human labels of rubric runs and where each labeller was (core/rubric/labels.ts; the browser keeps them in IndexedDB). */
export interface LabelRepository {
  /** Every stored label of a dataset (by its file's sha256). */
  list(dataset: string): Promise<HumanLabel[]>;
  put(label: HumanLabel): Promise<void>;
  remove(label: Pick<HumanLabel, 'labeller' | 'dataset' | 'question' | 'response' | 'criterion'>): Promise<void>;
  /** Merges parsed labels into the stored ones (mergeLabels: the later of one labeller's two labels wins), all or nothing. */
  merge(incoming: readonly HumanLabel[]): Promise<LabelMerge>;
  position(labeller: string, runId: string, mode: LabelMode): Promise<number>;
  setPosition(labeller: string, runId: string, mode: LabelMode, position: number): Promise<void>;
}
