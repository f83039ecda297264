/**
 * The embedded demo (public/demo: a made-up city library) as an ordinary stored dataset and
 * replay run. The first time the first page is shown, the demo files are fetched from the
 * app's own folder (precached by the service worker, so this works offline), imported through
 * the store and evaluated as a replay run of predictions.json; the first page then shows that
 * run's dashboard. Later visits find the dataset by its name and the run by its dataset and
 * predictions file, so nothing is ever stored twice. A user who deleted the demo is offered to
 * add it again instead of having it come back unasked. The hostile predictions (a runaway
 * query, a DELETE, two statements, markup) become a further run on request.
 */
import type { DatasetRecord, ImportSource, RunRequest, WorkbenchStore } from '../../app/store-ports.ts';
import { errorMessage, WorkbenchError } from '../../core/errors.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig, type RunHeader } from '../../core/run/types.ts';
import type { DatasetsState } from '../context/datasets.svelte.ts';
import type { RunsState } from '../context/runs.svelte.ts';

/** The stable marker of the demo dataset: datasets cannot be renamed. */
export const DEMO_DATASET_NAME = 'City library (demo)';
const DEMO_RUN_NAME = 'Demo model on the city library';
const DEMO_PREDICTIONS = 'predictions.json';
const HOSTILE_PREDICTIONS = 'predictions-hostile.json';
/** Paths under the app's `demo/` folder, as the import sees them. */
const DEMO_FILES = { questions: 'questions.json', gold: 'gold.sql', database: 'city_library/city_library.sqlite' };
/** Remembers that the demo was added once, so that a deleted demo is offered, not re-added. */
const SEEDED_KEY = 'rlvr-workbench.demo-added';
/** Serialises the check-then-add of two tabs opened at once. */
const LOCK = 'rlvr-workbench.demo-seed';

/** As the first-generation demo page evaluated it: EX and Soft-F1, no R-VES timing rounds. */
const DEMO_CONFIG: RunConfig = { ...DEFAULT_RUN_CONFIG, metrics: ['ex', 'soft-f1'], vesIterations: 0 };

type DemoPhase = 'idle' | 'checking' | 'loading' | 'running' | 'done' | 'absent' | 'failed';

interface DemoDeps {
  store: WorkbenchStore;
  datasets: DatasetsState;
  runs: RunsState;
  /** A file of the embedded demo, by its path under `demo/`. */
  fetchDemoFile(path: string): Promise<Blob>;
}

const isDemoDataset = (d: DatasetRecord): boolean => d.name === DEMO_DATASET_NAME;

/** Replay runs of the demo dataset with this predictions file, oldest first (renames keep them). */
function demoRuns(runs: readonly RunHeader[], datasetId: string, predictions: string): RunHeader[] {
  return runs
    .filter(
      (r) => r.dataset.id === datasetId && r.source.kind === 'replay' && r.source.predictions.name === predictions,
    )
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

function withLock<T>(fn: () => Promise<T>): Promise<T> {
  return navigator.locks ? navigator.locks.request(LOCK, fn) : fn();
}

/** DemoState's own fields (read through `state`). */
interface DemoFields {
  phase: DemoPhase;
  error: string | null;
  datasetId: string | null;
  /** The demo run shown on the first page. */
  runId: string | null;
  hostileError: string | null;
}

export class DemoState {
  readonly #deps: DemoDeps;
  #s = $state<DemoFields>({
    phase: 'idle',
    error: null,
    datasetId: null,
    runId: null,
    hostileError: null,
  });

  constructor(deps: DemoDeps) {
    this.#deps = deps;
  }

  /** The fields the screen shows, read-only: the methods below change them. */
  get state(): Readonly<DemoFields> {
    return this.#s;
  }
  get busy(): boolean {
    return this.#s.phase === 'checking' || this.#s.phase === 'loading' || this.#s.phase === 'running';
  }
  /** Runs of the hostile predictions made so far, newest first. */
  get hostileRuns(): RunHeader[] {
    return this.#s.datasetId ? demoRuns(this.#deps.runs.list, this.#s.datasetId, HOSTILE_PREDICTIONS).reverse() : [];
  }

  /**
   * Finds the stored demo, or adds it on the first visit; called each time the first page is
   * shown (two list reads), so a demo deleted meanwhile is noticed.
   */
  async ensure(): Promise<void> {
    if (this.busy) return;
    await this.#go(false);
  }

  /** Adds the demo again after the user deleted it (only what is missing is added). */
  async addAgain(): Promise<void> {
    if (this.busy) return;
    await this.#go(true);
  }

  async #go(add: boolean): Promise<void> {
    this.#s.phase = 'checking';
    this.#s.error = null;
    try {
      const run = await withLock(async () => {
        const { store } = this.#deps;
        const [datasets, runs] = await Promise.all([store.datasets.list(), store.runs.list()]);
        const dataset = datasets.find(isDemoDataset) ?? null;
        const found = dataset ? (demoRuns(runs, dataset.id, DEMO_PREDICTIONS)[0] ?? null) : null;
        this.#s.datasetId = dataset?.id ?? null;
        if (found) return { run: found, created: false };
        if (!add && localStorage.getItem(SEEDED_KEY)) return null;
        this.#s.phase = 'loading';
        const ds = dataset ?? (await this.#importDataset());
        this.#s.datasetId = ds.id;
        localStorage.setItem(SEEDED_KEY, new Date().toISOString());
        this.#s.phase = 'running';
        return { run: await this.#startRun(ds, DEMO_PREDICTIONS, DEMO_RUN_NAME, DEMO_CONFIG), created: true };
      });
      if (!run) {
        this.#s.runId = null;
        this.#s.phase = 'absent';
        return;
      }
      this.#s.runId = run.run.id;
      const { datasets, runs } = this.#deps;
      // Added by another tab since this one read its lists: list it here too.
      if (!runs.byId(run.run.id) || !datasets.byId(run.run.dataset.id))
        await Promise.all([datasets.refresh(), runs.refresh()]);
      if (!run.created && runs.interrupted(run.run)) {
        // Closed while it was being evaluated: finish it (only its missing items are evaluated).
        this.#s.phase = 'running';
        await runs.resume(run.run);
      }
      this.#s.phase = 'done';
    } catch (err) {
      this.#s.error = errorMessage(err);
      this.#s.phase = 'failed';
    }
  }

  async #importDataset(): Promise<DatasetRecord> {
    const entries = await Promise.all(
      Object.values(DEMO_FILES).map(async (path) => ({ path, file: await this.#deps.fetchDemoFile(path) })),
    );
    const source: ImportSource = {
      kind: 'custom',
      name: DEMO_DATASET_NAME,
      files: entries,
      questionsPath: DEMO_FILES.questions,
      goldPath: DEMO_FILES.gold,
    };
    const ds = await this.#deps.store.datasets.import(source);
    await this.#deps.datasets.refresh();
    return ds;
  }

  /** A replay run of one demo predictions file, tracked like any run (live progress, cancel). */
  async #startRun(ds: DatasetRecord, predictions: string, name: string, config: RunConfig): Promise<RunHeader> {
    const text = await (await this.#deps.fetchDemoFile(predictions)).text();
    const req: RunRequest = {
      name,
      datasetId: ds.id,
      subset: { description: 'all questions', indices: [] },
      predictions: { name: predictions, text },
      config,
    };
    const { runs } = this.#deps;
    if (runs.job)
      throw new WorkbenchError(
        'REFUSED',
        `run "${runs.job.name}" is being evaluated: wait for it to finish (Runs), then open the first page again`,
      );
    const run = await runs.start(req);
    if (!run)
      throw new WorkbenchError(
        'FAILED',
        runs.state.jobError ?? 'the demo run could not be started: reload the page to try again',
      );
    return run;
  }

  /**
   * Evaluates the hostile predictions on the demo dataset as a new run; resolves with it, or
   * null (see hostileError). `timeoutS` is per item, prediction and gold together.
   */
  async runHostile(opts: { timeoutS: number; readOnly: boolean }): Promise<RunHeader | null> {
    this.#s.hostileError = null;
    const ds = this.#s.datasetId ? await this.#deps.store.datasets.get(this.#s.datasetId) : undefined;
    if (!ds) {
      this.#s.hostileError = 'The demo dataset is not stored: add the demo again first.';
      return null;
    }
    if (!(opts.timeoutS > 0 && opts.timeoutS <= 600)) {
      this.#s.hostileError = 'Timeout: give a number of seconds between 0 and 600 (30 is official).';
      return null;
    }
    const name = `Demo: hostile predictions (timeout ${opts.timeoutS} s${opts.readOnly ? ', read-only' : ''})`;
    try {
      return await this.#startRun(ds, HOSTILE_PREDICTIONS, name, {
        ...DEMO_CONFIG,
        timeoutMs: Math.round(opts.timeoutS * 1000),
        readOnly: opts.readOnly,
      });
    } catch (err) {
      this.#s.hostileError = `The hostile predictions could not be evaluated: ${errorMessage(err)}`;
      return null;
    }
  }
}
