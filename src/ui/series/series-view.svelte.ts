/**
 * One training run as the series view shows it, every number from the analysis worker (the
 * core's series statistics, as the CLI's `series`): curves over steps, question dynamics,
 * buckets, warnings and the best step; the question grid's filter and order (from the address);
 * and the exports. `SeriesQuestionView` is one question across the steps.
 */
import { errorMessage, isCancellation } from '../../core/errors.ts';
import type { QuestionStep } from '../../core/series/question-steps.ts';
import type { QuestionDynamics } from '../../core/series/stats.ts';
import type { AnalysisProgress, SeriesExportKind, SeriesView as SeriesData } from '../../app/records.ts';
import type { SeriesAnalysisPort } from '../../app/store-ports.ts';
import { downloadBlob, safeFileName } from '../shell/download.ts';
import { DEFAULT_GRID, type GridQuery } from '../shell/route.ts';

const EXPORT_NAMES: Record<SeriesExportKind, string> = {
  report: 'series-report.json',
  'steps-parquet': 'steps.parquet',
  'questions-parquet': 'steps.questions.parquet',
  'series-file': 'series.json',
};

/** Questions in grid order: by gold index, first or last step solved (never solved last), or flips. */
function sortQuestions(questions: readonly QuestionDynamics[], q: GridQuery): QuestionDynamics[] {
  const rows = q.bucket ? questions.filter((x) => x.bucket === q.bucket) : [...questions];
  const never = Number.POSITIVE_INFINITY;
  const key = (x: QuestionDynamics): number =>
    q.sort === 'first'
      ? (x.firstSolvedStep ?? never)
      : q.sort === 'last'
        ? (x.lastSolvedStep ?? never)
        : q.sort === 'flips'
          ? x.flips
          : x.index;
  rows.sort((a, b) => {
    const d = key(a) - key(b);
    // Unsolved questions stay last in either direction; ties in gold order.
    if (Number.isNaN(d) || d === 0) return a.index - b.index;
    if (key(a) === never) return 1;
    if (key(b) === never) return -1;
    return q.descending ? -d : d;
  });
  return rows;
}

/** A training run's page's own fields (its data, progress and grid query are `$state.raw`, apart). */
interface SeriesViewFields {
  error: string | null;
  computing: boolean;
  exporting: SeriesExportKind | null;
  exportError: string | null;
}

export class SeriesView {
  readonly seriesId: string;
  readonly #analysis: SeriesAnalysisPort;
  #data = $state.raw<SeriesData | null>(null);
  #s = $state<SeriesViewFields>({
    error: null,
    computing: false,
    exporting: null,
    exportError: null,
  });
  #progress = $state.raw<AnalysisProgress | null>(null);
  #grid = $state.raw<GridQuery>(DEFAULT_GRID);
  #job: AbortController | null = null;
  #loadedVersion = -1;

  #rows = $derived.by(() => sortQuestions(this.#data?.report.questions ?? [], this.#grid));

  constructor(seriesId: string, analysis: SeriesAnalysisPort) {
    this.seriesId = seriesId;
    this.#analysis = analysis;
  }

  get data(): SeriesData | null {
    return this.#data;
  }
  /** What the screen shows of these fields, read-only: the methods below change them. */
  get state(): Readonly<SeriesViewFields> {
    return this.#s;
  }
  get progress(): AnalysisProgress | null {
    return this.#progress;
  }
  get grid(): GridQuery {
    return this.#grid;
  }
  /** The grid's questions: its bucket, in its order. */
  get rows(): readonly QuestionDynamics[] {
    return this.#rows;
  }
  /** The run id of a step (for its dashboard and comparisons). */
  runOf(step: number): string | null {
    return this.#data?.runs.find((r) => r.step === step)?.runId ?? null;
  }

  /** The grid as the address says (a bucket link, a sort). */
  setGrid(q: GridQuery | undefined): void {
    const next = q ?? DEFAULT_GRID;
    const g = this.#grid;
    if (g.bucket !== next.bucket || g.sort !== next.sort || g.descending !== next.descending) this.#grid = next;
  }

  /** Computes the view when first shown, and again when the series changed (`version`). */
  async load(version: number): Promise<void> {
    if (version === this.#loadedVersion) return;
    this.#loadedVersion = version;
    this.#job?.abort();
    const job = new AbortController();
    this.#job = job;
    this.#s.computing = true;
    this.#progress = null;
    try {
      const data = await this.#analysis.seriesView(this.seriesId, {
        signal: job.signal,
        onProgress: (p) => void (this.#job === job && (this.#progress = p)),
      });
      if (this.#job !== job) return;
      this.#data = data;
      this.#s.error = null;
    } catch (err) {
      if (this.#job !== job || isCancellation(err)) return;
      this.#s.error = errorMessage(err);
    } finally {
      if (this.#job === job) {
        this.#s.computing = false;
        this.#job = null;
      }
    }
  }

  cancel(): void {
    this.#job?.abort();
    this.#loadedVersion = -1;
  }

  /** Writes an export (in the worker) and saves it. */
  async download(kind: SeriesExportKind): Promise<void> {
    this.#s.exporting = kind;
    this.#s.exportError = null;
    try {
      const blob = await this.#analysis.seriesExport(this.seriesId, kind);
      const name = safeFileName(this.#data?.series.name ?? 'training-run');
      downloadBlob(`${name}.${EXPORT_NAMES[kind]}`, blob);
    } catch (err) {
      this.#s.exportError = `The export failed: ${errorMessage(err)}`;
    } finally {
      this.#s.exporting = null;
    }
  }
}

/** The question page's own fields (its steps are `$state.raw`, apart). */
interface SeriesQuestionFields {
  error: string | null;
}

/** One question across the steps of a series (`#/series/<id>/question/<index>`). */
export class SeriesQuestionView {
  readonly seriesId: string;
  readonly index: number;
  readonly #analysis: SeriesAnalysisPort;
  #steps = $state.raw<QuestionStep[] | null>(null);
  #s = $state<SeriesQuestionFields>({
    error: null,
  });
  #job: AbortController | null = null;

  constructor(seriesId: string, index: number, analysis: SeriesAnalysisPort) {
    this.seriesId = seriesId;
    this.index = index;
    this.#analysis = analysis;
  }

  get steps(): readonly QuestionStep[] | null {
    return this.#steps;
  }
  /** What the screen shows of these fields, read-only: the methods below change them. */
  get state(): Readonly<SeriesQuestionFields> {
    return this.#s;
  }
  async load(): Promise<void> {
    this.#job?.abort();
    const job = new AbortController();
    this.#job = job;
    try {
      const steps = await this.#analysis.seriesQuestion(this.seriesId, this.index, { signal: job.signal });
      if (this.#job === job) this.#steps = steps;
    } catch (err) {
      if (this.#job === job && !isCancellation(err)) this.#s.error = errorMessage(err);
    }
  }

  cancel(): void {
    this.#job?.abort();
  }
}
