/**
 * The report's store: the app's store ports (src/app/store-ports.ts) read-only over
 * the runs the report carries, in memory. The screens read runs, samples and question texts
 * through it exactly as they read IndexedDB in the app; everything that would change, evaluate
 * or need a database is refused with a message that says where it can be done (the workbench,
 * after importing the report). There is no analysis worker: the RL and Compare views compute
 * on the page (their path for a store without one).
 */
import type { Exclusion } from '../core/eval/exclusions.ts';
import { WorkbenchError } from '../core/errors.ts';
import { toRunFile } from '../core/runfile/export.ts';
import type { RunFile, SampleRecord } from '../core/run/types.ts';
import type { Question } from '../core/types.ts';
import type {
  DatasetRecord,
  DatasetRepository,
  RunRepository,
  RunService,
  StoragePort,
  WorkbenchStore,
} from '../app/store-ports.ts';

/** What the report cannot do, and where it can be done. */
export function notInReport(what: string): WorkbenchError {
  return new WorkbenchError(
    'UNSUPPORTED',
    `${what} is not part of this report (a read-only file): import the report into the workbench (Runs → Import a run file or report) to do it there`,
  );
}

/** A port's method that the report refuses: a rejected promise, as the store's methods are asynchronous. */
const refuse =
  (what: string) =>
  async (..._args: unknown[]): Promise<never> => {
    throw notInReport(what);
  };
/** The same for the two synchronous methods (a dataset's databases as the SQL pool reads them). */
const refuseNow =
  (what: string) =>
  (..._args: unknown[]): never => {
    throw notInReport(what);
  };

/** The dataset a run file's question texts make (sparse: indexed by gold position), or null without texts. */
function datasetOf(file: RunFile): DatasetRecord | null {
  if (!file.questions || file.questions.length === 0) return null;
  const bySample = new Map<number, SampleRecord>();
  for (const s of file.samples) if (!bySample.has(s.index)) bySample.set(s.index, s);
  const questions: Question[] = [];
  for (const q of file.questions) {
    const s = bySample.get(q.index);
    questions[q.index] = {
      questionId: q.questionId,
      dbId: q.dbId,
      question: q.question,
      evidence: q.evidence,
      goldSql: s?.goldSql ?? '',
      difficulty: s?.difficulty ?? 'unknown',
    };
  }
  const d = file.run.dataset;
  return {
    id: d.id,
    name: d.name,
    kind: 'custom',
    createdAt: file.run.createdAt,
    questionsFile: d.questions,
    goldFile: d.gold,
    questions,
    gold: [],
    databases: {},
  };
}

/** First position in `samples` (sorted by index, sample) whose index is >= `index`. */
function firstAt(samples: readonly SampleRecord[], index: number): number {
  let lo = 0;
  let hi = samples.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (samples[mid]!.index < index) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `exclusions`: what the report's training run excludes (its series file's header, by the
 * series' id) and what each of its runs excludes (by the run's id): a dashboard honours them as
 * the app's does.
 */
export function createReportStore(
  files: readonly RunFile[],
  exclusions: ReadonlyArray<{ ownerId: string; list: readonly Exclusion[] }> = [],
): WorkbenchStore {
  const runs = new Map<string, RunFile>();
  // In (index, sample) order, as the stored runs are (the run file's order; sorted here only if not).
  for (const f of files) runs.set(f.run.id, toRunFile(f.run, f.samples, f.questions));
  const datasets = new Map<string, DatasetRecord>();
  for (const f of runs.values()) {
    const d = datasetOf(f);
    if (d && !datasets.has(d.id)) datasets.set(d.id, d);
  }
  const file = (runId: string): RunFile => {
    const f = runs.get(runId);
    if (!f) throw new WorkbenchError('NOT_FOUND', `run ${runId} is not in this report`);
    return f;
  };

  const storage: StoragePort = {
    estimate: async () => ({ usage: 0, quota: 0, persisted: false }),
    requestPersistence: async () => false,
  };
  const datasetRepository: DatasetRepository = {
    import: refuse('Importing a dataset'),
    list: async () => [...datasets.values()],
    get: async (id) => datasets.get(id),
    card: refuse("A dataset's card"),
    delete: refuse('Deleting a dataset'),
    databases: async () => [],
    questionsWithDatabase: async () => [],
    source: refuseNow('Running SQL on the databases'),
    suiteCache: refuseNow('A test suite'),
  };
  const runRepository: RunRepository = {
    list: async () => [...runs.values()].map((f) => f.run).sort((a, b) => b.createdAt.localeCompare(a.createdAt)),
    get: async (id) => runs.get(id)?.run,
    samples: async (id, page) => {
      const all = file(id).samples;
      return page ? all.slice(page.offset, page.offset + page.limit) : all;
    },
    questionSamples: async (id, index) => {
      const all = file(id).samples;
      const from = firstAt(all, index);
      return all.slice(from, firstAt(all, index + 1));
    },
    sampleCount: async (id) => file(id).samples.length,
    rename: refuse('Renaming a run'),
    delete: refuse('Deleting a run'),
    // As the IndexedDB repository exports it: the header and the samples (the question texts stay in the report).
    export: async (id) => toRunFile(file(id).run, file(id).samples),
    importFile: refuse('Importing a run file'),
    activeIds: async () => [],
    setSampleRubrics: refuse('Writing rubric scores'),
    generationPlan: async () => undefined,
  };
  const service: RunService = {
    startReplay: refuse('Starting a run'),
    checkReplay: refuse('Checking a predictions file'),
    resume: refuse('Resuming a run'),
    goldSelfTest: refuse('The gold self-test'),
    startGeneration: refuse('Generation'),
    resumeGeneration: refuse('Generation'),
    previewPrompt: refuse('A prompt preview'),
    databaseSchemas: async () => ({}),
    saveAttempt: refuse('Saving a playground attempt'),
    exportBatch: refuse('A batch export'),
  };
  const byOwner = new Map(exclusions.map((e) => [e.ownerId, e.list]));
  const runsWithExclusions =
    byOwner.size > 0
      ? { ...runRepository, exclusions: async (ownerId: string) => [...(byOwner.get(ownerId) ?? [])] }
      : runRepository;
  return { storage, datasets: datasetRepository, runs: runsWithExclusions, service, close: () => undefined };
}
