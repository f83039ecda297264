/**
 * One stored run through the RLVR lens: its samples grouped per question, pass@k and maj@k for
 * every k <= n, best-of-n, GRPO group statistics and the learnable frontier, computed by the
 * core (src/core/rl) exactly as the CLI's `stats` does (seed 0 unless changed), in the
 * analysis worker (workers/analysis.api.ts) with progress and cancel, plus the exports
 * (per-prompt CSV/JSON/Parquet, frontier JSONL).
 */
import type { AnalysisProgress, WorkbenchStore } from '../../adapters/store/workbench-store.ts';
import { errorMessage, isCancellation } from '../../core/errors.ts';
import { frontierJsonl, promptStatsCsv, promptStatsJson } from '../../core/rl/exports.ts';
import { mulberry32 } from '../../core/util/rng.ts';
import { computeRunStats } from '../../core/rl/run-stats.ts';
import { toStatsView, type PromptRow, type RunStatsView } from '../../core/rl/stats-view.ts';
import { statsExplanations, statsJson } from '../../core/rl/stats-report.ts';
import type { RunHeader, RunQuestion } from '../../core/run/types.ts';
import { downloadBlob, downloadText, safeFileName } from '../shell/download.ts';
import { promptStatsParquetBlob } from '../workbench/parquet-export.ts';
import { withCorrectedGold, type GoldChoice } from '../../core/run/overlay-record.ts';
import { runFormula } from '../../core/run/score-run.ts';

export type PromptFilter = 'all' | 'frontier' | 'zero-variance' | 'all-right' | 'all-wrong';

export class RlView {
  readonly runId: string;
  readonly #store: WorkbenchStore;
  #run = $state.raw<RunHeader | null>(null);
  #questions = $state.raw<RunQuestion[] | null>(null);
  #loading = $state(true);
  #error = $state<string | null>(null);
  #seed = $state(0);
  /** Which gold the statistics score against (`corrected`: the overlay stored with the run; docs/gold-overlays.md). */
  #gold = $state<GoldChoice>('official');
  /** The name of the overlay stored with the run, or null when there is none (then no choice is offered). */
  #overlayName = $state<string | null>(null);
  #filter = $state<PromptFilter>('all');
  #stats = $state.raw<RunStatsView | null>(null);
  #statsError = $state<string | null>(null);
  #progress = $state.raw<AnalysisProgress | null>(null);
  #computing = $state(false);
  #cancelled = $state(false);
  /** The computation under way: a newer one (seed change, refresh while evaluating) aborts it. */
  #job: AbortController | null = null;

  #explanations = $derived.by(() => {
    const s = this.#stats;
    return s ? statsExplanations(s.overall, s.ks) : {};
  });
  #visible = $derived.by((): PromptRow[] => {
    const prompts = this.#stats?.prompts ?? [];
    const f = this.#filter;
    if (f === 'all') return [...prompts];
    if (f === 'frontier') return prompts.filter((p) => p.frontier);
    if (f === 'zero-variance') return prompts.filter((p) => p.zeroVariance);
    if (f === 'all-right') return prompts.filter((p) => p.correct === p.n);
    return prompts.filter((p) => p.correct === 0);
  });

  constructor(runId: string, store: WorkbenchStore) {
    this.runId = runId;
    this.#store = store;
  }

  /** The run's header (name, dataset, reward formula, status). */
  get run(): RunHeader | null {
    return this.#run;
  }
  get loading(): boolean {
    return this.#loading;
  }
  /** Why the run cannot be shown (not stored, unreadable, nothing scorable). */
  get error(): string | null {
    return this.#error ?? this.#statsError;
  }
  get stats(): RunStatsView | null {
    return this.#stats;
  }
  /** The statistics are being computed (in the analysis worker); `progress` says how far. */
  get computing(): boolean {
    return this.#computing;
  }
  get progress(): AnalysisProgress | null {
    return this.#progress;
  }
  /** The user stopped the computation; `recompute()` starts it again. */
  get cancelled(): boolean {
    return this.#cancelled;
  }
  /** One line per statistic, with this run's values (`pass_at_4`, `zero_variance_share`, ...). */
  get explanations(): Record<string, string> {
    return this.#explanations;
  }
  get seed(): number {
    return this.#seed;
  }
  get gold(): GoldChoice {
    return this.#gold;
  }
  get overlayName(): string | null {
    return this.#overlayName;
  }
  /** Scores against the official or the corrected gold, and computes the statistics again. */
  setGold(gold: GoldChoice): void {
    if (gold === this.#gold) return;
    this.#gold = gold;
    void this.recompute();
  }
  setSeed(seed: number): void {
    if (Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff && seed !== this.#seed) {
      this.#seed = seed;
      void this.recompute();
    }
  }
  get filter(): PromptFilter {
    return this.#filter;
  }
  setFilter(f: PromptFilter): void {
    this.#filter = f;
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
        this.#error = 'This run is not in browser storage (it was deleted, or the link is from another browser).';
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
        this.#overlayName = (await this.#store.service?.goldOverlay?.(this.runId))?.name ?? null;
      }
      this.#run = run;
      this.#error = null;
    } catch (err) {
      this.#error = `The run could not be read: ${errorMessage(err)}`;
      return;
    } finally {
      this.#loading = false;
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
    this.#computing = true;
    this.#cancelled = false;
    this.#progress = null;
    const seed = this.#seed;
    try {
      const analysis = this.#store.analysis;
      const stats = analysis
        ? await analysis.runStats(this.runId, seed, {
            signal: job.signal,
            gold: this.#gold,
            onProgress: (p) => void (this.#job === job && (this.#progress = p)),
          })
        : toStatsView(computeRunStats(await this.#pageSamples(), { rng: mulberry32(seed) }));
      if (this.#job !== job) return;
      this.#stats = stats;
      this.#statsError = null;
    } catch (err) {
      if (this.#job !== job) return;
      if (isCancellation(err)) this.#cancelled = true;
      else {
        this.#stats = null;
        this.#statsError = errorMessage(err);
      }
    } finally {
      if (this.#job === job) {
        this.#computing = false;
        this.#job = null;
      }
    }
  }

  /** Without a worker (test doubles): the samples, against the corrected gold when chosen. */
  async #pageSamples() {
    const samples = await this.#store.runs.samples(this.runId);
    if (this.#gold === 'official' || !this.#run) return samples;
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
    if (!this.#computing) await this.load();
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
      downloadBlob(this.#name('prompts.parquet'), await promptStatsParquetBlob(s.prompts, s.ks, run));
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
        const meta = { runName: run.name, runId: run.id, rewardFormula: run.config.rewardFormula, seed: this.#seed };
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
