/**
 * Runs screen state: the stored runs, the run being evaluated (live progress, cancel), and the
 * run-level actions (rename, delete, export, import of a run file).
 */
import type { Exclusion } from '../../core/eval/exclusions.ts';
import { runExclusions } from '../../app/run-exclusions.ts';
import { sampleKey } from '../../core/eval/constants.ts';
import { birdPredictionsJson, csvParts, runFileJsonParts, samplesJsonlParts } from '../../core/runfile/export.ts';
import { errorMessage, WorkbenchError } from '../../core/errors.ts';
import type { EvalEvent } from '../../core/eval/executor.ts';
import type { RunHeader } from '../../core/run/types.ts';
import type { RunRequest, WorkbenchStore } from '../../app/store-ports.ts';
import { downloadBlob, downloadParts, downloadText, safeFileName } from '../shell/download.ts';
import { parquetWriter, runParquetBlob, type ParquetBlobWriter } from './parquet-export.ts';
import { estimate, executedRate, type Estimate, type ProgressCounts } from './run-progress.ts';

export interface RunJob {
  name: string;
  done: number;
  total: number;
  startedAt: number;
  /** performance.now() of the last finished item. */
  lastAt: number;
  /** Items a worker ran in this job, and items settled without running (their database is missing): run-progress.ts. */
  executed: number;
  skipped: number;
  /** performance.now() when the first item went to a worker, and when the last executed one finished. */
  execStartedAt: number | null;
  lastExecAt: number;
  cancelling: boolean;
  /** Metric ts: the test suite being built (candidate databases done of total), if one is. */
  suite?: { dbId: string; done: number; total: number };
}

/** The trainer's scores and reward columns of a run that is a step of a training run (SeriesService.trainerScores). */
interface TrainerOfRun {
  scores: Array<number | null>;
  rewards?: Array<Record<string, number | null> | null>;
}

/** An item a worker is running now (from the pool's `item-started` events). */
interface RunningItem {
  questionId: number;
  dbId: string;
  sample: number;
  /** performance.now() when it was handed to a worker. */
  since: number;
}

export type ExportKind = 'run' | 'bird' | 'csv' | 'parquet' | 'jsonl';

/** The runs list's own fields (the list, the job and what runs are `$state.raw`, apart). */
interface RunsFields {
  loaded: boolean;
  error: string | null;
  jobError: string | null;
}

export class RunsState {
  readonly #store: WorkbenchStore;
  readonly #onChange: () => void;
  #list = $state.raw<RunHeader[]>([]);
  #active = $state.raw<ReadonlySet<string>>(new Set());
  #s = $state<RunsFields>({
    loaded: false,
    error: null,
    jobError: null,
  });
  #job = $state.raw<RunJob | null>(null);
  /** Items started and not yet finished, by `index.sample` (a handful: one or two per worker). */
  #running = $state.raw<ReadonlyMap<string, RunningItem>>(new Map());
  #lastFinished = $state.raw<RunHeader | null>(null);
  #abort: AbortController | null = null;

  #counts = $derived.by((): ProgressCounts | null => {
    const j = this.#job;
    if (!j) return null;
    const span = j.execStartedAt === null ? 0 : j.lastExecAt - j.execStartedAt;
    return { done: j.done, total: j.total, executed: j.executed, executedSpanMs: span, running: this.#running.size };
  });
  #rate = $derived(this.#counts ? executedRate(this.#counts) : null);

  /** The trainer's scores of a run that is a step of a training run (its CSV and JSONL exports carry them); null when none. */
  readonly #trainerScores: (runId: string) => Promise<TrainerOfRun | null>;
  readonly #parquetBlob: ParquetBlobWriter | undefined;

  readonly #seriesOf: (runId: string) => Promise<Array<{ id: string }>>;

  /**
   * `parquetBlob`: the composition root's Parquet writer (without it, a Parquet download is
   * refused); `seriesOf`: the training runs a run is a step of (their exclusions count for it).
   */
  constructor(
    store: WorkbenchStore,
    onChange: () => void,
    trainerScores: (runId: string) => Promise<TrainerOfRun | null> = async () => null,
    parquetBlob?: ParquetBlobWriter,
    seriesOf: (runId: string) => Promise<Array<{ id: string }>> = async () => [],
  ) {
    this.#seriesOf = seriesOf;
    this.#store = store;
    this.#onChange = onChange;
    this.#trainerScores = trainerScores;
    this.#parquetBlob = parquetBlob;
  }

  get list(): readonly RunHeader[] {
    return this.#list;
  }
  /** What the screen shows of these fields, read-only: the methods below change them. */
  get state(): Readonly<RunsFields> {
    return this.#s;
  }
  get job(): RunJob | null {
    return this.#job;
  }
  /** The item running the longest, or null: what a quiet progress bar is waiting for. */
  get slowest(): RunningItem | null {
    let out: RunningItem | null = null;
    for (const r of this.#running.values()) if (!out || r.since < out.since) out = r;
    return out;
  }
  /** The run that the last job produced (done or cancelled), for a link to its dashboard. */
  get lastFinished(): RunHeader | null {
    return this.#lastFinished;
  }
  /** Executed items per second so far (skipped and stored ones left out: run-progress.ts). */
  get rate(): number | null {
    return this.#rate;
  }
  /** Time left at the executed rate, or that the run waits for the items still running. */
  get estimate(): Estimate | null {
    return this.#counts ? estimate(this.#counts) : null;
  }
  /** A stored run whose status says running but that no tab is evaluating: it was interrupted. */
  interrupted(run: RunHeader): boolean {
    return run.status === 'running' && !this.#active.has(run.id);
  }
  byId(id: string): RunHeader | null {
    return this.#list.find((r) => r.id === id) ?? null;
  }

  async refresh(): Promise<void> {
    try {
      const [list, active] = await Promise.all([this.#store.runs.list(), this.#store.runs.activeIds()]);
      this.#list = list;
      this.#active = new Set(active);
      this.#s.error = null;
    } catch (err) {
      this.#s.error = `The stored runs could not be read: ${errorMessage(err)}`;
    } finally {
      this.#s.loaded = true;
    }
  }

  /** Evaluates a run; resolves with its header (done or cancelled) or null when it failed. */
  start(req: RunRequest): Promise<RunHeader | null> {
    return this.#track(req.name, req.subset.indices.length, (hooks) => this.#store.service.startReplay(req, hooks));
  }

  /** Continues an interrupted run: only its missing samples are evaluated, with the same live progress. */
  resume(run: RunHeader): Promise<RunHeader | null> {
    return this.#track(run.name, run.subset.indices.length, (hooks) => this.#store.service.resume(run.id, hooks));
  }

  async #track(
    name: string,
    total: number,
    go: (hooks: { signal: AbortSignal; onEvent: (e: EvalEvent) => void }) => Promise<RunHeader>,
  ): Promise<RunHeader | null> {
    if (this.#job) return null;
    const abort = new AbortController();
    this.#abort = abort;
    const now = performance.now();
    this.#job = {
      name,
      done: 0,
      total,
      startedAt: now,
      lastAt: now,
      cancelling: false,
      executed: 0,
      skipped: 0,
      execStartedAt: null,
      lastExecAt: now,
    };
    this.#s.jobError = null;
    this.#lastFinished = null;
    const refreshSoon = setTimeout(() => void this.refresh(), 1500);
    try {
      const run = await go({
        signal: abort.signal,
        onEvent: (e) => {
          if (!this.#job) return;
          if (e.type === 'suite-progress')
            this.#job = { ...this.#job, suite: { dbId: e.dbId, done: e.done, total: e.total } };
          else if (e.type === 'suite-ready') this.#job = { ...this.#job, suite: undefined };
          if (e.type === 'item-started') {
            if (this.#job.execStartedAt === null) this.#job = { ...this.#job, execStartedAt: performance.now() };
            const next = new Map(this.#running);
            next.set(sampleKey(e), {
              questionId: e.questionId,
              dbId: e.dbId,
              sample: e.sample,
              since: performance.now(),
            });
            this.#running = next;
            return;
          }
          if (e.type !== 'item') return;
          const key = sampleKey(e.result);
          if (this.#running.has(key)) {
            const next = new Map(this.#running);
            next.delete(key);
            this.#running = next;
          }
          const at = performance.now();
          const skipped = e.result.status === 'missing-db';
          this.#job = {
            ...this.#job,
            done: e.done,
            total: e.total,
            lastAt: at,
            ...(skipped ? { skipped: this.#job.skipped + 1 } : { executed: this.#job.executed + 1, lastExecAt: at }),
          };
        },
      });
      this.#lastFinished = run;
      return run;
    } catch (err) {
      this.#s.jobError = `The run could not be evaluated: ${errorMessage(err)}`;
      return null;
    } finally {
      clearTimeout(refreshSoon);
      this.#job = null;
      this.#running = new Map();
      this.#abort = null;
      await this.refresh();
      this.#onChange();
    }
  }

  cancel(): void {
    if (!this.#job) return;
    this.#job = { ...this.#job, cancelling: true };
    this.#abort?.abort();
  }

  async rename(runId: string, name: string): Promise<string | null> {
    const trimmed = name.trim();
    if (!trimmed) return 'A run needs a name.';
    try {
      await this.#store.runs.rename(runId, trimmed);
      await this.refresh();
      return null;
    } catch (err) {
      return `The run could not be renamed: ${errorMessage(err)}`;
    }
  }

  async remove(runId: string): Promise<string | null> {
    try {
      await this.#store.runs.delete(runId);
      await this.refresh();
      this.#onChange();
      return null;
    } catch (err) {
      return `The run could not be deleted: ${errorMessage(err)}`;
    }
  }

  #exclusions(runId: string): Promise<Exclusion[]> {
    return runExclusions(
      { exclusions: this.#store.runs.exclusions?.bind(this.#store.runs), seriesOf: this.#seriesOf },
      runId,
    );
  }

  async export(runId: string, kind: ExportKind): Promise<string | null> {
    try {
      const file = await this.#store.runs.export(runId);
      const base = safeFileName(file.run.name);
      const trainer = kind === 'csv' || kind === 'jsonl' ? await this.#trainerScores(runId).catch(() => null) : null;
      // Excluded questions (the run's own and its training runs') keep their rows, marked `excluded`
      // (the reason in CSV and JSONL; reason, author and date in the run file and the Parquet table).
      const exclusions = kind === 'bird' ? [] : await this.#exclusions(runId);
      // The run file, CSV and JSONL are written from parts (a 500,000-sample run file is ~350 MB).
      if (kind === 'run')
        await downloadParts(`${base}.run.json`, runFileJsonParts(file, 500, exclusions), 'application/json');
      else if (kind === 'jsonl')
        await downloadParts(
          `${base}.samples.jsonl`,
          samplesJsonlParts(file.samples, 1000, trainer?.scores, trainer?.rewards, exclusions),
          'application/jsonl',
        );
      else if (kind === 'bird')
        downloadText(`${base}.predict_bird.json`, birdPredictionsJson(file.samples), 'application/json');
      else if (kind === 'parquet') {
        // The questions' texts go into the table too, from the run's dataset while it is stored.
        const dataset = file.questions ? null : await this.#store.datasets.get(file.run.dataset.id);
        const questions =
          file.questions ??
          dataset?.questions.map((q, index) => ({
            index,
            questionId: q.questionId,
            dbId: q.dbId,
            question: q.question,
            evidence: q.evidence,
          }));
        downloadBlob(
          `${base}.samples.parquet`,
          await runParquetBlob(
            { ...file, ...(questions ? { questions } : {}) },
            parquetWriter(this.#parquetBlob),
            exclusions,
          ),
        );
      } else
        await downloadParts(
          `${base}.csv`,
          csvParts(file.samples, 1000, trainer?.scores, trainer?.rewards, exclusions),
          'text/csv',
        );
      return null;
    } catch (err) {
      return `The run could not be exported: ${errorMessage(err)}`;
    }
  }

  /** Stores a run file (or an offline report's runs); resolves with the runs stored, or throws an Error with a message to show. */
  async importFile(file: File): Promise<RunHeader[]> {
    try {
      const runs = this.#store.runs;
      return runs.importBlob
        ? await runs.importBlob(file, file.name)
        : await runs.importFile(await file.text(), file.name);
    } catch (err) {
      throw new WorkbenchError('FAILED', `${file.name} was not imported: ${errorMessage(err)}`, undefined, {
        cause: err,
      });
    } finally {
      await this.refresh();
      this.#onChange();
    }
  }
}
