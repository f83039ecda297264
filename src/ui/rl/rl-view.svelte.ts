/**
 * One stored run through the RLVR lens: its samples grouped per question, pass@k and maj@k for
 * every k <= n, best-of-n, GRPO group statistics and the learnable frontier, computed by the
 * core (src/core/rl) exactly as the CLI's `stats` does (seed 0 unless changed), in the
 * analysis worker (workers/analysis.api.ts) with progress and cancel, plus the exports
 * (per-prompt CSV/JSON/Parquet, frontier JSONL).
 */
import type { AnalysisProgress, WorkbenchStore } from '../../app/store-ports.ts';
import { errorMessage, isCancellation } from '../../core/errors.ts';
import { frontierJsonl, promptStatsCsv, promptStatsJson } from '../../core/rl/exports.ts';
import { mulberry32 } from '../../core/util/rng.ts';
import { computeRunStats } from '../../core/rl/run-stats.ts';
import { excludedPresent, withoutExcluded } from '../../core/eval/exclusions.ts';
import { toStatsView, type PromptRow, type RunStatsView } from '../../core/rl/stats-view.ts';
import { statsExplanations, statsJson } from '../../core/rl/stats-report.ts';
import type { RunHeader, RunQuestion } from '../../core/run/types.ts';
import { downloadBlob, downloadText, safeFileName } from '../shell/download.ts';
import { parquetWriter, promptStatsParquetBlob, type ParquetBlobWriter } from '../context/parquet-export.ts';
import { withCorrectedGold, type GoldChoice } from '../../core/run/overlay-record.ts';
import { runFormula } from '../../core/run/score-run.ts';

export type PromptFilter = 'all' | 'frontier' | 'zero-variance' | 'all-right' | 'all-wrong';

/** The RL view's own fields (the run, questions, statistics and progress are `$state.raw`, apart). */
interface RlViewFields {
  /** The run is being read (the first time). */
  loading: boolean;
  /** Why the run cannot be read (not stored, unreadable); `error` joins it with `statsError`. */
  runError: string | null;
  /** Why the statistics could not be computed (nothing scorable, the worker failed). */
  statsError: string | null;
  /** The bootstrap's seed (0, the CLI's, unless changed). */
  seed: number;
  /** Which gold the statistics score against (`corrected`: the overlay stored with the run; docs/gold-overlays.md). */
  gold: GoldChoice;
  /** The name of the overlay stored with the run, or null when there is none (then no choice is offered). */
  overlayName: string | null;
  /** Which prompts the table shows. */
  filter: PromptFilter;
  /** The statistics are being computed (in the analysis worker); `progress` says how far. */
  computing: boolean;
  /** The user stopped the computation; `recompute()` starts it again. */
  cancelled: boolean;
}

export class RlView {
  readonly runId: string;
  readonly #store: WorkbenchStore;
  #s = $state<RlViewFields>({
    loading: true,
    runError: null,
    statsError: null,
    seed: 0,
    gold: 'official',
    overlayName: null,
    filter: 'all',
    computing: false,
    cancelled: false,
  });
  #run = $state.raw<RunHeader | null>(null);
  #questions = $state.raw<RunQuestion[] | null>(null);
  #stats = $state.raw<RunStatsView | null>(null);
  #progress = $state.raw<AnalysisProgress | null>(null);
  /** The computation under way: a newer one (seed change, refresh while evaluating) aborts it. */
  #job: AbortController | null = null;

  #explanations = $derived.by(() => {
    const s = this.#stats;
    return s ? statsExplanations(s.overall, s.ks) : {};
  });
  #visible = $derived.by((): PromptRow[] => {
    const prompts = this.#stats?.prompts ?? [];
    const f = this.#s.filter;
    if (f === 'all') return [...prompts];
    if (f === 'frontier') return prompts.filter((p) => p.frontier);
    if (f === 'zero-variance') return prompts.filter((p) => p.zeroVariance);
    if (f === 'all-right') return prompts.filter((p) => p.correct === p.n);
    return prompts.filter((p) => p.correct === 0);
  });

  readonly #parquetBlob: ParquetBlobWriter | undefined;

  /** `parquetBlob`: the composition root's Parquet writer (without it, the Parquet download is refused). */
  constructor(runId: string, store: WorkbenchStore, parquetBlob?: ParquetBlobWriter) {
    this.runId = runId;
    this.#store = store;
    this.#parquetBlob = parquetBlob;
  }

  /** The view's load, computation and choices, read-only: the methods below change it. */
  get state(): Readonly<RlViewFields> {
    return this.#s;
  }
  /** The run's header (name, dataset, reward formula, status). */
  get run(): RunHeader | null {
    return this.#run;
  }
  /** Why the run cannot be shown (not stored, unreadable, nothing scorable). */
  get error(): string | null {
    return this.#s.runError ?? this.#s.statsError;
  }
  get stats(): RunStatsView | null {
    return this.#stats;
  }
  get progress(): AnalysisProgress | null {
    return this.#progress;
  }
  /** One line per statistic, with this run's values (`pass_at_4`, `zero_variance_share`, ...). */
  get explanations(): Record<string, string> {
    return this.#explanations;
  }
  /** Scores against the official or the corrected gold, and computes the statistics again. */
  setGold(gold: GoldChoice): void {
    if (gold === this.#s.gold) return;
    this.#s.gold = gold;
    void this.recompute();
  }
  setSeed(seed: number): void {
    if (Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff && seed !== this.#s.seed) {
      this.#s.seed = seed;
      void this.recompute();
    }
  }
  setFilter(f: PromptFilter): void {
    this.#s.filter = f;
  }
  get visible(): readonly PromptRow[] {
    return this.#visible;
  }
  /** Question texts are known (the run's dataset is still stored): the frontier JSONL can be written. */
  get hasQuestions(): boolean {
    return this.#questions !== null;
  }

  async load(): Promise<void> {
    try {
      const run = await this.#store.runs.get(this.runId);
      if (!run) {
        this.#s.runError = 'This run is not in browser storage (it was deleted, or the link is from another browser).';
        return;
      }
      // While a run is evaluated this is called again every few seconds: the dataset's questions
      // cannot change meanwhile, so they are read once.
      if (this.#run === null) {
        const dataset = await this.#store.datasets.get(run.dataset.id);
        this.#questions = dataset
          ? dataset.questions.map((q, index) => ({
              index,
              questionId: q.questionId,
              dbId: q.dbId,
              question: q.question,
              evidence: q.evidence,
            }))
          : null;
        this.#s.overlayName = (await this.#store.service?.goldOverlay?.(this.runId))?.name ?? null;
      }
      this.#run = run;
      this.#s.runError = null;
    } catch (err) {
      this.#s.runError = `The run could not be read: ${errorMessage(err)}`;
      return;
    } finally {
      this.#s.loading = false;
    }
    await this.recompute();
  }

  /**
   * Computes the statistics: in the analysis worker, which reads the samples from IndexedDB
   * itself (no long task on the page at 500,000 samples); on the page only with a store that
   * has no worker (test doubles). The numbers shown stay until the new ones are there.
   */
  async recompute(): Promise<void> {
    this.#job?.abort();
    const job = new AbortController();
    this.#job = job;
    this.#s.computing = true;
    this.#s.cancelled = false;
    this.#progress = null;
    const seed = this.#s.seed;
    try {
      const analysis = this.#store.analysis;
      const stats = analysis
        ? await analysis.runStats(this.runId, seed, {
            signal: job.signal,
            gold: this.#s.gold,
            onProgress: (p) => void (this.#job === job && (this.#progress = p)),
          })
        : await this.#pageStats(seed);
      if (this.#job !== job) return;
      this.#stats = stats;
      this.#s.statsError = null;
    } catch (err) {
      if (this.#job !== job) return;
      if (isCancellation(err)) this.#s.cancelled = true;
      else {
        this.#stats = null;
        this.#s.statsError = errorMessage(err);
      }
    } finally {
      if (this.#job === job) {
        this.#s.computing = false;
        this.#job = null;
      }
    }
  }

  /**
   * Without a worker (the offline report, test doubles): the statistics over the samples the
   * run's exclusions leave, as the worker computes them.
   */
  async #pageStats(seed: number): Promise<RunStatsView> {
    const samples = await this.#pageSamples();
    const exclusions = (await this.#store.runs.exclusions?.(this.runId)) ?? [];
    const view = toStatsView(computeRunStats(withoutExcluded(samples, exclusions), { rng: mulberry32(seed) }));
    const excluded = excludedPresent(samples, exclusions);
    return excluded > 0 ? { ...view, excluded } : view;
  }

  /** Without a worker (test doubles): the samples, against the corrected gold when chosen. */
  async #pageSamples() {
    const samples = await this.#store.runs.samples(this.runId);
    if (this.#s.gold === 'official' || !this.#run) return samples;
    return withCorrectedGold(
      samples,
      await this.#store.service?.goldOverlay?.(this.runId),
      runFormula(this.#run.config),
    );
  }

  /**
   * Re-reads the run while it is being evaluated (every few seconds): skipped while a computation
   * is under way, which would otherwise be restarted before it ends on a large run.
   */
  async refresh(): Promise<void> {
    if (!this.#s.computing) await this.load();
  }

  /** Stops the computation under way (the worker is terminated). */
  cancel(): void {
    this.#job?.abort();
  }

  #name(suffix: string): string {
    return `${safeFileName(this.#run?.name ?? 'run')}-${suffix}`;
  }

  /** Downloads the per-prompt statistics as Parquet (prompt-stats table); returns an error message when it cannot be written. */
  async downloadParquet(): Promise<string | null> {
    const s = this.#stats;
    const run = this.#run;
    if (!s || !run) return 'Nothing to export yet.';
    try {
      downloadBlob(
        this.#name('prompts.parquet'),
        await promptStatsParquetBlob(s.prompts, s.ks, run, parquetWriter(this.#parquetBlob)),
      );
      return null;
    } catch (err) {
      return `The export failed: ${errorMessage(err)}`;
    }
  }

  /** Downloads an export; returns an error message when it cannot be written. */
  download(kind: 'csv' | 'json' | 'frontier' | 'stats'): string | null {
    const s = this.#stats;
    const run = this.#run;
    if (!s || !run) return 'Nothing to export yet.';
    try {
      if (kind === 'csv') downloadText(this.#name('prompts.csv'), promptStatsCsv(s.prompts, s.ks), 'text/csv');
      else if (kind === 'json')
        downloadText(
          this.#name('prompts.json'),
          JSON.stringify(promptStatsJson(s.prompts, s.ks), null, 1),
          'application/json',
        );
      else if (kind === 'stats') {
        const meta = { runName: run.name, runId: run.id, rewardFormula: run.config.rewardFormula, seed: this.#s.seed };
        downloadText(this.#name('stats.json'), JSON.stringify(statsJson(s, meta), null, 1), 'application/json');
      } else {
        const questions = this.#questions;
        if (!questions) return "The run's dataset is no longer stored: the frontier prompts need the questions' texts.";
        downloadText(this.#name('frontier.jsonl'), frontierJsonl(s.prompts, questions), 'application/jsonl');
      }
      return null;
    } catch (err) {
      return `The export failed: ${errorMessage(err)}`;
    }
  }
}
