/**
 * State of the demo page: fetches the embedded demo (questions, gold, one predictions preset,
 * the database), evaluates it with an SqlExecutor handed in by the composition root, and
 * exposes items as they finish plus the official summary at the end.
 */
import { errorMessage } from '../core/errors.ts';
import type { EvalOptions, ItemPreview, MetricName, SqlExecutor } from '../core/eval/executor.ts';
import { summarize, type Summary } from '../core/eval/summary.ts';
import { parseGoldSql } from '../core/formats/gold.ts';
import { pairPredictions, parsePredictions } from '../core/formats/predictions.ts';
import { parseQuestions } from '../core/formats/questions.ts';
import type { EvalItem, GoldEntry, ItemResult, Question } from '../core/types.ts';

/** What the browser (or a test) provides: file access relative to the page, and SQL execution. */
export interface DemoDeps {
  fetchText(url: string): Promise<string>;
  fetchBytes(url: string): Promise<Uint8Array>;
  /** A fresh executor over these databases with this many workers; disposed after the run. */
  createExecutor(dbs: Map<string, Uint8Array>, workers: number): SqlExecutor;
  defaultWorkers: number;
  maxWorkers: number;
}

export type PresetId = 'model' | 'hostile';

export interface Preset {
  label: string;
  file: string;
  description: string;
}

export const PRESETS: Record<PresetId, Preset> = {
  model: {
    label: 'demo model',
    file: 'predictions.json',
    description: 'a fair but imperfect model: right answers written differently from gold, and instructive mistakes',
  },
  hostile: {
    label: 'hostile',
    file: 'predictions-hostile.json',
    description: 'a DELETE that the official semantics reward, two statements, a query that never ends, markup in the SQL',
  },
};

/** Relative to the page, so the built app works from any folder. */
const DEMO_BASE = './demo/';
const METRICS: readonly MetricName[] = ['ex', 'soft-f1'];
const PREVIEW_ROWS = 5;
/** The official evaluator's per-item timeout. */
export const OFFICIAL_TIMEOUT_S = 30;

export interface RunSettings {
  preset: PresetId;
  /** Per item, prediction and gold together. */
  timeoutS: number;
  readOnly: boolean;
  workers: number;
}

export interface ItemView {
  item: EvalItem;
  question: Question | null;
  result: ItemResult | null;
  preview: ItemPreview | null;
}

export type Phase = 'idle' | 'loading' | 'running' | 'done' | 'stopped' | 'failed';

interface DemoFiles {
  questions: Question[];
  gold: GoldEntry[];
  dbs: Map<string, Uint8Array>;
}

export class DemoRun {
  readonly #deps: DemoDeps;
  #phase = $state<Phase>('idle');
  #settings = $state<RunSettings>({ preset: 'model', timeoutS: OFFICIAL_TIMEOUT_S, readOnly: false, workers: 1 });
  /** Raw: results carry bigints and byte arrays; each update replaces one element. */
  #items = $state.raw<ItemView[]>([]);
  #summary = $state.raw<Summary | null>(null);
  #warnings = $state.raw<string[]>([]);
  #error = $state<string | null>(null);
  #elapsedMs = $state<number | null>(null);
  /** Settings of the run on screen (the controls may have moved on since). */
  #shown = $state.raw<RunSettings | null>(null);

  #done = $derived(this.#items.filter((v) => v.result !== null).length);
  #right = $derived(this.#items.filter((v) => v.result?.ex === 1).length);

  #generation = 0;
  #abort: AbortController | null = null;
  #files: Promise<DemoFiles> | null = null;

  constructor(deps: DemoDeps) {
    this.#deps = deps;
    this.#settings.workers = clampInt(deps.defaultWorkers, 1, deps.maxWorkers);
  }

  get phase(): Phase {
    return this.#phase;
  }
  get busy(): boolean {
    return this.#phase === 'loading' || this.#phase === 'running';
  }
  get settings(): Readonly<RunSettings> {
    return this.#settings;
  }
  get shownSettings(): Readonly<RunSettings> | null {
    return this.#shown;
  }
  get maxWorkers(): number {
    return this.#deps.maxWorkers;
  }
  get items(): readonly ItemView[] {
    return this.#items;
  }
  get done(): number {
    return this.#done;
  }
  get right(): number {
    return this.#right;
  }
  get total(): number {
    return this.#items.length;
  }
  get summary(): Summary | null {
    return this.#summary;
  }
  get warnings(): readonly string[] {
    return this.#warnings;
  }
  get error(): string | null {
    return this.#error;
  }
  get elapsedMs(): number | null {
    return this.#elapsedMs;
  }

  setPreset(preset: PresetId): void {
    if (preset in PRESETS) this.#settings.preset = preset;
  }
  /** Ignores what is not a positive number (an input being edited); at most 10 minutes. */
  setTimeoutS(seconds: number): void {
    if (Number.isFinite(seconds) && seconds > 0) this.#settings.timeoutS = Math.min(seconds, 600);
  }
  setReadOnly(readOnly: boolean): void {
    this.#settings.readOnly = readOnly;
  }
  setWorkers(n: number): void {
    if (Number.isFinite(n) && n >= 1) this.#settings.workers = clampInt(n, 1, this.#deps.maxWorkers);
  }

  /** Starts a run with the current settings; a run in progress is stopped first. */
  async run(): Promise<void> {
    this.#abort?.abort();
    const generation = ++this.#generation;
    const current = () => generation === this.#generation;
    const abort = new AbortController();
    this.#abort = abort;
    const settings: RunSettings = { ...this.#settings };
    this.#phase = 'loading';
    this.#error = null;
    this.#summary = null;
    this.#warnings = [];
    this.#elapsedMs = null;
    this.#shown = settings;

    let executor: SqlExecutor | null = null;
    try {
      const files = await this.#loadFiles();
      const preset = PRESETS[settings.preset];
      const predText = await this.#deps.fetchText(DEMO_BASE + preset.file);
      if (!current()) return;
      const preds = parsePredictions(predText, preset.file);
      const { items, warnings } = pairPredictions(preds, files.gold, files.questions, preset.file);
      const position = new Map(items.map((it, k) => [it.index, k]));
      this.#items = items.map((item) => ({ item, question: files.questions[item.index] ?? null, result: null, preview: null }));
      this.#warnings = warnings;
      this.#phase = 'running';

      const options: EvalOptions = {
        metrics: METRICS,
        timeoutMs: settings.timeoutS * 1000,
        readOnly: settings.readOnly,
        vesIterations: 0,
        previewRows: PREVIEW_ROWS,
      };
      const t0 = performance.now();
      executor = this.#deps.createExecutor(files.dbs, settings.workers);
      const results = await executor.evaluate(items, options, {
        signal: abort.signal,
        onEvent: (e) => {
          if (e.type !== 'item' || !current()) return;
          const k = position.get(e.result.index);
          if (k === undefined) return;
          const next = this.#items.slice();
          next[k] = { ...next[k]!, result: e.result, preview: e.preview };
          this.#items = next;
        },
      });
      if (!current()) return;
      this.#summary = summarize(results, METRICS);
      this.#elapsedMs = performance.now() - t0;
      this.#phase = 'done';
    } catch (err) {
      if (!current() || abort.signal.aborted) return;
      this.#error = errorMessage(err);
      this.#phase = 'failed';
    } finally {
      if (this.#abort === abort) this.#abort = null;
      await executor?.dispose();
    }
  }

  /** Stops the run in progress; finished items stay on screen. */
  stop(): void {
    if (!this.busy) return;
    this.#generation++;
    this.#abort?.abort();
    this.#phase = 'stopped';
  }

  /** Questions, gold and databases are the same for every preset: fetched once. */
  #loadFiles(): Promise<DemoFiles> {
    this.#files ??= (async () => {
      const [questionsText, goldText] = await Promise.all([
        this.#deps.fetchText(DEMO_BASE + 'questions.json'),
        this.#deps.fetchText(DEMO_BASE + 'gold.sql'),
      ]);
      const questions = parseQuestions(questionsText, 'questions.json');
      const gold = parseGoldSql(goldText, 'gold.sql');
      const dbIds = [...new Set(gold.map((g) => g.dbId))];
      const bytes = await Promise.all(dbIds.map((id) => this.#deps.fetchBytes(`${DEMO_BASE}${id}/${id}.sqlite`)));
      return { questions, gold, dbs: new Map(dbIds.map((id, k) => [id, bytes[k]!])) };
    })();
    // A failed fetch is not cached: the next run tries again.
    this.#files.catch(() => {
      this.#files = null;
    });
    return this.#files;
  }
}

function clampInt(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(n)));
}

export function createDemoRun(deps: DemoDeps): DemoRun {
  return new DemoRun(deps);
}
