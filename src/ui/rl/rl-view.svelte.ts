/**
 * One stored run through the RLVR lens: its samples grouped per question, pass@k and maj@k for
 * every k <= n, best-of-n, GRPO group statistics and the learnable frontier, computed by the
 * core (src/core/rl) exactly as the CLI's `stats` does (seed 0 unless changed), plus the
 * exports (per-prompt CSV/JSON, frontier JSONL).
 */
import type { WorkbenchStore } from '../../adapters/store/workbench-store.ts';
import { errorMessage } from '../../core/errors.ts';
import { frontierJsonl, promptStatsCsv, promptStatsJson } from '../../core/rl/exports.ts';
import { mulberry32 } from '../../core/rl/rng.ts';
import { computeRunStats, type PromptStats, type RunStats } from '../../core/rl/run-stats.ts';
import { statsExplanations, statsJson } from '../../core/rl/stats-report.ts';
import type { RunFile, RunQuestion } from '../../core/run/types.ts';
import { downloadBlob, downloadText, safeFileName } from '../shell/download.ts';
import { promptStatsParquetBlob } from '../workbench/parquet-export.ts';

export type PromptFilter = 'all' | 'frontier' | 'zero-variance' | 'all-right' | 'all-wrong';

export class RlView {
  readonly runId: string;
  readonly #store: WorkbenchStore;
  #file = $state.raw<RunFile | null>(null);
  #questions = $state.raw<RunQuestion[] | null>(null);
  #loading = $state(true);
  #error = $state<string | null>(null);
  #seed = $state(0);
  #filter = $state<PromptFilter>('all');

  #computed = $derived.by((): { stats: RunStats | null; error: string | null } => {
    const file = this.#file;
    if (!file) return { stats: null, error: null };
    try {
      return { stats: computeRunStats(file.samples, { rng: mulberry32(this.#seed) }), error: null };
    } catch (err) {
      return { stats: null, error: errorMessage(err) };
    }
  });
  #explanations = $derived.by(() => {
    const s = this.#computed.stats;
    return s ? statsExplanations(s.overall, s.ks) : {};
  });
  #visible = $derived.by((): PromptStats[] => {
    const prompts = this.#computed.stats?.prompts ?? [];
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

  get file(): RunFile | null {
    return this.#file;
  }
  get loading(): boolean {
    return this.#loading;
  }
  /** Why the run cannot be shown (not stored, unreadable, nothing scorable). */
  get error(): string | null {
    return this.#error ?? this.#computed.error;
  }
  get stats(): RunStats | null {
    return this.#computed.stats;
  }
  /** One line per statistic, with this run's values (`pass_at_4`, `zero_variance_share`, ...). */
  get explanations(): Record<string, string> {
    return this.#explanations;
  }
  get seed(): number {
    return this.#seed;
  }
  setSeed(seed: number): void {
    if (Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff) this.#seed = seed;
  }
  get filter(): PromptFilter {
    return this.#filter;
  }
  setFilter(f: PromptFilter): void {
    this.#filter = f;
  }
  get visible(): readonly PromptStats[] {
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
      const questionsKnown = this.#file !== null;
      const [file, dataset] = await Promise.all([this.#store.runs.export(this.runId), questionsKnown ? null : this.#store.datasets.get(run.dataset.id)]);
      if (!questionsKnown) {
        this.#questions = dataset
          ? dataset.questions.map((q, index) => ({ index, questionId: q.questionId, dbId: q.dbId, question: q.question, evidence: q.evidence }))
          : null;
      }
      this.#file = file;
      this.#error = null;
    } catch (err) {
      this.#error = `The run could not be read: ${errorMessage(err)}`;
    } finally {
      this.#loading = false;
    }
  }

  #name(suffix: string): string {
    return `${safeFileName(this.#file?.run.name ?? 'run')}-${suffix}`;
  }

  /** Downloads the per-prompt statistics as Parquet (prompt-stats table); returns an error message when it cannot be written. */
  async downloadParquet(): Promise<string | null> {
    const s = this.#computed.stats;
    const file = this.#file;
    if (!s || !file) return 'Nothing to export yet.';
    try {
      downloadBlob(this.#name('prompts.parquet'), await promptStatsParquetBlob(s.prompts, s.ks, file.run));
      return null;
    } catch (err) {
      return `The export failed: ${errorMessage(err)}`;
    }
  }

  /** Downloads an export; returns an error message when it cannot be written. */
  download(kind: 'csv' | 'json' | 'frontier' | 'stats'): string | null {
    const s = this.#computed.stats;
    const file = this.#file;
    if (!s || !file) return 'Nothing to export yet.';
    try {
      if (kind === 'csv') downloadText(this.#name('prompts.csv'), promptStatsCsv(s.prompts, s.ks), 'text/csv');
      else if (kind === 'json') downloadText(this.#name('prompts.json'), JSON.stringify(promptStatsJson(s.prompts, s.ks), null, 1), 'application/json');
      else if (kind === 'stats') {
        const meta = { runName: file.run.name, runId: file.run.id, rewardFormula: file.run.config.rewardFormula, seed: this.#seed };
        downloadText(this.#name('stats.json'), JSON.stringify(statsJson(s, meta), null, 1), 'application/json');
      } else {
        const questions = this.#questions ?? file.questions;
        if (!questions) return "The run's dataset is no longer stored: the frontier prompts need the questions' texts.";
        downloadText(this.#name('frontier.jsonl'), frontierJsonl(s.prompts, questions), 'application/jsonl');
      }
      return null;
    } catch (err) {
      return `The export failed: ${errorMessage(err)}`;
    }
  }
}
