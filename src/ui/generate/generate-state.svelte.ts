/**
 * State of the Generate screen: the engine (CPU GGUF, OpenAI-compatible server, WebLLM), the
 * run's settings, the prompt preview and the run in progress. One instance for the page's
 * lifetime (`generateState()`), so a run keeps going while the user looks at other screens.
 *
 * The engine part (choice, loading, the server settings kept in localStorage) is an EngineSlot.
 */
import type { GenerationRunRequest, RunService, WorkbenchStore } from '../../adapters/store/workbench-store.ts';
import type { Engine, SamplingParams } from '../../core/engine/engine.ts';
import { errorMessage, WorkbenchError } from '../../core/errors.ts';
import { BUILTIN_TEMPLATES, findTemplate } from '../../core/prompt/templates.ts';
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
import { loadUserTemplates } from './user-library.ts';

export type { EngineChoice } from '../engine/engine-slot.svelte.ts';
export type SubsetChoice = 'quick' | 'first' | 'all';

export interface FinishedSummary {
  runId: string;
  outcome: GenerationOutcome['kind'];
  message: string | null;
  ex: { ex: number; low: number; high: number; n: number; correct: number } | null;
}

export class GenerateState extends EngineSlot {
  #userTemplates = $state.raw<PromptTemplate[]>(loadUserTemplates());
  /** Batch files for a cluster: export of this screen's plan, import of the output. */
  readonly batch = new BatchState();

  #datasetId = $state<string | null>(null);
  #templateId = $state(BUILTIN_TEMPLATES[0]!.id);
  #sampleRows = $state<number | null>(null);
  #subset = $state<SubsetChoice>('quick');
  #firstN = $state(10);
  #n = $state(1);
  #temperature = $state(0);
  #topP = $state(1);
  #maxTokens = $state(256);
  #seed = $state(0);
  #name = $state('');

  #preview = $state<string | null>(null);
  #previewNote = $state<string | null>(null);
  #previewError = $state<string | null>(null);

  #running = $state(false);
  #runId = $state<string | null>(null);
  #progress = $state.raw<GenerationProgress | null>(null);
  #error = $state<string | null>(null);
  #finished = $state.raw<FinishedSummary | null>(null);
  #unfinished = $state.raw<RunHeader[]>([]);
  #controller: AbortController | null = null;

  /** The researcher's own templates (user-library.ts). */
  get userTemplates(): PromptTemplate[] {
    return this.#userTemplates;
  }
  get datasetId(): string | null {
    return this.#datasetId;
  }
  get templateId(): string {
    return this.#templateId;
  }
  /** Sample rows per table; null: the template's. */
  get sampleRows(): number | null {
    return this.#sampleRows;
  }
  get subset(): SubsetChoice {
    return this.#subset;
  }
  get firstN(): number {
    return this.#firstN;
  }
  get n(): number {
    return this.#n;
  }
  get temperature(): number {
    return this.#temperature;
  }
  get topP(): number {
    return this.#topP;
  }
  get maxTokens(): number {
    return this.#maxTokens;
  }
  get seed(): number {
    return this.#seed;
  }
  get name(): string {
    return this.#name;
  }
  get preview(): string | null {
    return this.#preview;
  }
  get previewNote(): string | null {
    return this.#previewNote;
  }
  get previewError(): string | null {
    return this.#previewError;
  }
  get running(): boolean {
    return this.#running;
  }
  get runId(): string | null {
    return this.#runId;
  }
  get progress(): GenerationProgress | null {
    return this.#progress;
  }
  get error(): string | null {
    return this.#error;
  }
  get finished(): FinishedSummary | null {
    return this.#finished;
  }
  get unfinished(): RunHeader[] {
    return this.#unfinished;
  }

  chooseDataset(id: string | null): void {
    this.#datasetId = id;
  }
  chooseTemplate(id: string): void {
    this.#templateId = id;
  }
  setSampleRows(rows: number | null): void {
    this.#sampleRows = rows;
  }
  chooseSubset(subset: SubsetChoice): void {
    this.#subset = subset;
  }
  setFirstN(n: number): void {
    this.#firstN = n;
  }
  setN(n: number): void {
    this.#n = n;
  }
  setTemperature(t: number): void {
    this.#temperature = t;
  }
  setTopP(p: number): void {
    this.#topP = p;
  }
  setMaxTokens(n: number): void {
    this.#maxTokens = n;
  }
  setSeed(seed: number): void {
    this.#seed = seed;
  }
  setName(name: string): void {
    this.#name = name;
  }
  /** A template saved by the template panel: the new list, the saved one chosen, and no stale preview. */
  setUserTemplates(list: PromptTemplate[], chosenId: string): void {
    this.#userTemplates = list;
    this.#templateId = chosenId;
    this.#preview = null;
  }

  /** No engine change while a run uses the engine. */
  protected override canLoad(): boolean {
    return !this.running;
  }

  /** Quick check: 50 seeded questions, one greedy sample, EX with a 95% interval. */
  quickCheckPreset(): void {
    this.#subset = 'quick';
    const q = quickCheckParams(this.maxTokens);
    this.#n = q.n;
    this.#temperature = q.temperature;
    this.#topP = q.topP;
    this.#seed = q.seed ?? 0;
  }

  template() {
    return findTemplate(this.templateId, this.userTemplates) ?? BUILTIN_TEMPLATES[0]!;
  }

  params(): SamplingParams {
    return {
      n: this.n,
      temperature: this.temperature,
      topP: this.topP,
      maxTokens: this.maxTokens,
      seed: this.seed,
      stop: [...this.template().stop],
      logprobs: false,
    };
  }

  async refreshPreview(store: WorkbenchStore): Promise<void> {
    this.#previewError = null;
    if (!this.datasetId) return;
    try {
      const indices = await store.datasets.questionsWithDatabase(this.datasetId);
      if (indices.length === 0)
        throw new WorkbenchError(
          'NOT_FOUND',
          'this dataset has no stored database: import it again with its databases (Data)',
        );
      const built = await store.service.previewPrompt(
        this.datasetId,
        indices[0]!,
        { template: this.template(), sampleRows: this.sampleRows ?? undefined, maxTokens: this.maxTokens },
        this.engine,
      );
      this.#preview = built.prompt.messages.map((m) => `[${m.role}]\n${m.content}`).join('\n\n');
      const c = built.fit.cut;
      const cut = [
        ...c.sampleRows.map((t) => `rows of ${t}`),
        ...c.descriptions.map((t) => `descriptions of ${t}`),
        ...c.tables.map((t) => `table ${t}`),
      ];
      this.#previewNote =
        `${built.fit.tokens} tokens (${built.fit.counter === 'engine' ? "the engine's tokenizer" : 'estimated at 4 characters per token'})` +
        (built.fit.limit !== null ? ` of ${built.fit.limit} available` : '') +
        (cut.length ? `; cut to fit: ${cut.join(', ')}` : '') +
        (built.fit.fits ? '' : '; does NOT fit the context window');
    } catch (err) {
      this.#preview = null;
      this.#previewError = errorMessage(err);
    }
  }

  async refreshUnfinished(store: WorkbenchStore): Promise<void> {
    const [runs, active] = await Promise.all([store.runs.list(), store.runs.activeIds()]);
    this.#unfinished = runs.filter(
      (r) => r.source.kind === 'generation' && r.status === 'running' && !active.includes(r.id),
    );
  }

  async start(store: WorkbenchStore, onDone: (runId: string) => void): Promise<void> {
    if (!this.engine || !this.model || !this.datasetId || this.running) return;
    const available = await store.datasets.questionsWithDatabase(this.datasetId);
    const indices =
      this.subset === 'quick'
        ? quickCheckIndices(available)
        : this.subset === 'first'
          ? available.slice(0, Math.max(1, this.firstN))
          : available;
    const description =
      this.subset === 'quick'
        ? `quick check: ${indices.length} seeded-random questions with a database`
        : this.subset === 'first'
          ? `first ${indices.length} questions with a database`
          : 'every question with a database';
    const spec: GenerationSpec = {
      engine: this.engine.kind,
      model: this.recordedModel() ?? this.model,
      template: this.template(),
      params: this.params(),
    };
    if (this.sampleRows !== null) spec.sampleRows = this.sampleRows;
    const name =
      this.name.trim() || `${this.model.id} · ${spec.template.id}${this.subset === 'quick' ? ' · quick check' : ''}`;
    await this.#drive(
      onDone,
      (hooks) =>
        store.service.startGeneration(
          {
            name,
            datasetId: this.datasetId!,
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
    if (this.running) return;
    await this.#drive(onDone, (hooks) => store.service.startGeneration(req, engine, hooks), store);
  }

  async resume(store: WorkbenchStore, runId: string, onDone: (runId: string) => void): Promise<void> {
    if (!this.engine || this.running) return;
    await this.#drive(onDone, (hooks) => store.service.resumeGeneration(runId, this.engine!, hooks), store);
  }

  async #drive(
    onDone: (runId: string) => void,
    go: (hooks: Parameters<RunService['startGeneration']>[2]) => ReturnType<RunService['startGeneration']>,
    store: WorkbenchStore,
  ): Promise<void> {
    this.#running = true;
    this.#error = null;
    this.#finished = null;
    this.#progress = null;
    this.#controller = new AbortController();
    try {
      const r = await go({
        signal: this.#controller.signal,
        onStart: (run) => (this.#runId = run.id),
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
      this.#error = errorMessage(err);
    } finally {
      this.#running = false;
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
