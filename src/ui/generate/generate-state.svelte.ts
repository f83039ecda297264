/**
 * State of the Generate screen: the engine (CPU GGUF, OpenAI-compatible server, WebLLM), the
 * run's settings, the prompt preview and the run in progress. One instance for the page's
 * lifetime (`generateState()`), so a run keeps going while the user looks at other screens.
 *
 * The engine part (choice, loading, the server settings kept in localStorage) is an EngineSlot.
 */
import type { GenerationRunRequest, RunService, WorkbenchStore } from '../../app/store-ports.ts';
import type { Engine, SamplingParams } from '../../core/engine/engine.ts';
import { errorMessage, WorkbenchError } from '../../core/errors.ts';
import { BUILTIN_TEMPLATES, findTemplate } from '../../core/prompt/templates.ts';
import { findPreset, type PolicyPreset } from '../../core/prompt/presets.ts';
import {
  CANCEL,
  PAUSE,
  exWithInterval,
  quickCheckIndices,
  quickCheckParams,
  type GenerationOutcome,
  type GenerationProgress,
  type GenerationSpec,
} from '../../core/run/generation.ts';
import { DEFAULT_RUN_CONFIG, type RunHeader } from '../../core/run/types.ts';
import type { PromptTemplate } from '../../core/prompt/templates.ts';
import { EngineSlot } from '../engine/engine-slot.svelte.ts';
import { BatchState } from './batch-state.svelte.ts';
import { loadUserTemplates } from '../engine/user-library.ts';

type SubsetChoice = 'quick' | 'first' | 'all';

interface FinishedSummary {
  runId: string;
  outcome: GenerationOutcome['kind'];
  message: string | null;
  ex: { ex: number; low: number; high: number; n: number; correct: number } | null;
}

/** The Generate screen's own fields (the templates, progress, summary and unfinished runs are `$state.raw`, apart). */
interface GenerateFields {
  datasetId: string | null;
  templateId: string;
  /**
   * The policy preset (docs/presets.md) the run is to use, null for none (the template above).
   * Choosing one sets n, temperature, top-p and max tokens from its published sampling.
   */
  presetId: string | null;
  /** Sample rows per table; null: the template's. */
  sampleRows: number | null;
  subset: SubsetChoice;
  /** How many questions `subset: 'first'` takes. */
  firstN: number;
  n: number;
  temperature: number;
  topP: number;
  maxTokens: number;
  seed: number;
  /** The run's name; empty: one made of the model and template. */
  name: string;
  /** The first question's prompt as the template builds it, its token count and cuts (`previewNote`), or why not. */
  preview: string | null;
  previewNote: string | null;
  previewError: string | null;
  running: boolean;
  /** The run being generated (known once it is stored). */
  runId: string | null;
  error: string | null;
}

export class GenerateState extends EngineSlot {
  #s = $state<GenerateFields>({
    datasetId: null,
    templateId: BUILTIN_TEMPLATES[0]!.id,
    presetId: null,
    sampleRows: null,
    subset: 'quick',
    firstN: 10,
    n: 1,
    temperature: 0,
    topP: 1,
    maxTokens: 256,
    seed: 0,
    name: '',
    preview: null,
    previewNote: null,
    previewError: null,
    running: false,
    runId: null,
    error: null,
  });
  #userTemplates = $state.raw<PromptTemplate[]>(loadUserTemplates());
  /** Batch files for a cluster: export of this screen's plan, import of the output. */
  readonly batch = new BatchState();

  #progress = $state.raw<GenerationProgress | null>(null);
  #finished = $state.raw<FinishedSummary | null>(null);
  #unfinished = $state.raw<RunHeader[]>([]);
  #controller: AbortController | null = null;

  /** The screen's settings, preview and run state, read-only: the methods below change it (the engine's are in `slot`). */
  get state(): Readonly<GenerateFields> {
    return this.#s;
  }
  /** The researcher's own templates (user-library.ts). */
  get userTemplates(): PromptTemplate[] {
    return this.#userTemplates;
  }
  get progress(): GenerationProgress | null {
    return this.#progress;
  }
  get finished(): FinishedSummary | null {
    return this.#finished;
  }
  get unfinished(): RunHeader[] {
    return this.#unfinished;
  }

  chooseDataset(id: string | null): void {
    this.#s.datasetId = id;
  }
  chooseTemplate(id: string): void {
    this.#s.templateId = id;
  }
  /** A preset chosen (or none: null): its sampling becomes the run's (the fields stay editable). */
  choosePreset(id: string | null): void {
    const preset = id === null ? undefined : findPreset(id);
    this.#s.presetId = preset ? preset.id : null;
    if (!preset) return;
    this.#s.n = preset.sampling.n;
    this.#s.temperature = preset.sampling.temperature;
    this.#s.topP = preset.sampling.topP;
    this.#s.maxTokens = preset.sampling.maxTokens;
  }
  /** The chosen preset, or null. */
  preset(): PolicyPreset | null {
    return this.#s.presetId === null ? null : (findPreset(this.#s.presetId) ?? null);
  }
  setSampleRows(rows: number | null): void {
    this.#s.sampleRows = rows;
  }
  chooseSubset(subset: SubsetChoice): void {
    this.#s.subset = subset;
  }
  setFirstN(n: number): void {
    this.#s.firstN = n;
  }
  setN(n: number): void {
    this.#s.n = n;
  }
  setTemperature(t: number): void {
    this.#s.temperature = t;
  }
  setTopP(p: number): void {
    this.#s.topP = p;
  }
  setMaxTokens(n: number): void {
    this.#s.maxTokens = n;
  }
  setSeed(seed: number): void {
    this.#s.seed = seed;
  }
  setName(name: string): void {
    this.#s.name = name;
  }
  /** A template saved by the template panel: the new list, the saved one chosen, and no stale preview. */
  setUserTemplates(list: PromptTemplate[], chosenId: string): void {
    this.#userTemplates = list;
    this.#s.templateId = chosenId;
    this.#s.preview = null;
  }

  /** No engine change while a run uses the engine. */
  protected override canLoad(): boolean {
    return !this.#s.running;
  }

  /** Quick check: 50 seeded questions, one greedy sample, EX with a 95% interval. */
  quickCheckPreset(): void {
    this.#s.subset = 'quick';
    const q = quickCheckParams(this.#s.maxTokens);
    this.#s.n = q.n;
    this.#s.temperature = q.temperature;
    this.#s.topP = q.topP;
    this.#s.seed = q.seed ?? 0;
  }

  template() {
    return findTemplate(this.#s.templateId, this.userTemplates) ?? BUILTIN_TEMPLATES[0]!;
  }

  params(): SamplingParams {
    return {
      n: this.#s.n,
      temperature: this.#s.temperature,
      topP: this.#s.topP,
      maxTokens: this.#s.maxTokens,
      seed: this.#s.seed,
      stop: [...this.template().stop],
      logprobs: false,
    };
  }

  async refreshPreview(store: WorkbenchStore): Promise<void> {
    this.#s.previewError = null;
    if (!this.#s.datasetId) return;
    try {
      const indices = await store.datasets.questionsWithDatabase(this.#s.datasetId);
      if (indices.length === 0)
        throw new WorkbenchError(
          'NOT_FOUND',
          'this dataset has no stored database: import it again with its databases (Data)',
        );
      const built = await store.service.previewPrompt(
        this.#s.datasetId,
        indices[0]!,
        { template: this.template(), sampleRows: this.#s.sampleRows ?? undefined, maxTokens: this.#s.maxTokens },
        this.engine,
      );
      this.#s.preview = built.prompt.messages.map((m) => `[${m.role}]\n${m.content}`).join('\n\n');
      const c = built.fit.cut;
      const cut = [
        ...c.sampleRows.map((t) => `rows of ${t}`),
        ...c.descriptions.map((t) => `descriptions of ${t}`),
        ...c.tables.map((t) => `table ${t}`),
      ];
      this.#s.previewNote =
        `${built.fit.tokens} tokens (${built.fit.counter === 'engine' ? "the engine's tokenizer" : 'estimated at 4 characters per token'})` +
        (built.fit.limit !== null ? ` of ${built.fit.limit} available` : '') +
        (cut.length ? `; cut to fit: ${cut.join(', ')}` : '') +
        (built.fit.fits ? '' : '; does NOT fit the context window');
    } catch (err) {
      this.#s.preview = null;
      this.#s.previewError = errorMessage(err);
    }
  }

  async refreshUnfinished(store: WorkbenchStore): Promise<void> {
    const [runs, active] = await Promise.all([store.runs.list(), store.runs.activeIds()]);
    this.#unfinished = runs.filter(
      (r) => r.source.kind === 'generation' && r.status === 'running' && !active.includes(r.id),
    );
  }

  async start(store: WorkbenchStore, onDone: (runId: string) => void): Promise<void> {
    if (!this.engine || !this.model || !this.#s.datasetId || this.#s.running) return;
    const available = await store.datasets.questionsWithDatabase(this.#s.datasetId);
    const indices =
      this.#s.subset === 'quick'
        ? quickCheckIndices(available)
        : this.#s.subset === 'first'
          ? available.slice(0, Math.max(1, this.#s.firstN))
          : available;
    const description =
      this.#s.subset === 'quick'
        ? `quick check: ${indices.length} seeded-random questions with a database`
        : this.#s.subset === 'first'
          ? `first ${indices.length} questions with a database`
          : 'every question with a database';
    const spec: GenerationSpec = {
      engine: this.engine.kind,
      model: this.recordedModel() ?? this.model,
      template: this.template(),
      params: this.params(),
    };
    if (this.#s.sampleRows !== null) spec.sampleRows = this.#s.sampleRows;
    // The chosen preset, whole (the run keeps it in its plan: a resume asks the same); the run
    // asks it instead of the template, with the sampling fields above.
    const preset = this.preset();
    if (preset) spec.preset = structuredClone(preset);
    const name =
      this.#s.name.trim() ||
      `${this.model.id} · ${preset ? preset.id : spec.template.id}${this.#s.subset === 'quick' ? ' · quick check' : ''}`;
    await this.#drive(
      onDone,
      (hooks) =>
        store.service.startGeneration(
          {
            name,
            datasetId: this.#s.datasetId!,
            subset: { description, indices },
            spec,
            config: { ...DEFAULT_RUN_CONFIG, metrics: ['ex', 'soft-f1'] },
          },
          this.engine!,
          hooks,
        ),
      store,
    );
  }

  /** A run with an engine other than the loaded one: the batch engine over an imported output file. */
  async startWith(
    store: WorkbenchStore,
    engine: Engine,
    req: GenerationRunRequest,
    onDone: (runId: string) => void,
  ): Promise<void> {
    if (this.#s.running) return;
    await this.#drive(onDone, (hooks) => store.service.startGeneration(req, engine, hooks), store);
  }

  async resume(store: WorkbenchStore, runId: string, onDone: (runId: string) => void): Promise<void> {
    if (!this.engine || this.#s.running) return;
    await this.#drive(onDone, (hooks) => store.service.resumeGeneration(runId, this.engine!, hooks), store);
  }

  async #drive(
    onDone: (runId: string) => void,
    go: (hooks: Parameters<RunService['startGeneration']>[2]) => ReturnType<RunService['startGeneration']>,
    store: WorkbenchStore,
  ): Promise<void> {
    this.#s.running = true;
    this.#s.error = null;
    this.#finished = null;
    this.#progress = null;
    this.#controller = new AbortController();
    try {
      const r = await go({
        signal: this.#controller.signal,
        onStart: (run) => (this.#s.runId = run.id),
        onProgress: (p) => (this.#progress = p),
      });
      const samples = await store.runs.samples(r.run.id);
      this.#finished = {
        runId: r.run.id,
        outcome: r.outcome.kind,
        message: r.outcome.kind === 'paused' || r.outcome.kind === 'gpu-lost' ? r.outcome.message : null,
        ex: samples.length ? exWithInterval(samples) : null,
      };
      if (r.outcome.kind === 'done') onDone(r.run.id);
    } catch (err) {
      this.#s.error = errorMessage(err);
    } finally {
      this.#s.running = false;
      this.#controller = null;
      await this.refreshUnfinished(store).catch(() => undefined);
    }
  }

  pause(): void {
    this.#controller?.abort(PAUSE);
    void this.engine?.interrupt();
  }

  cancel(): void {
    this.#controller?.abort(CANCEL);
    void this.engine?.interrupt();
  }
}
