/**
 * State of the Generate screen: the engine (CPU GGUF, OpenAI-compatible server, WebLLM), the
 * run's settings, the prompt preview and the run in progress. One instance for the page's
 * lifetime (`generateState()`), so a run keeps going while the user looks at other screens.
 *
 * The OpenAI-compatible base URL, model and key are kept in localStorage only: the run
 * records the model name, never the key.
 */
import type { WorkbenchStore } from '../../adapters/store/workbench-store.ts';
import type { Engine, LoadProgress, ModelRef, SamplingParams } from '../../core/engine/engine.ts';
import type { CapabilityVerdict } from '../../core/engine/gpu-verdict.ts';
import { errorMessage } from '../../core/errors.ts';
import { BUILTIN_TEMPLATES, findTemplate } from '../../core/prompt/templates.ts';
import { CANCEL, PAUSE, exWithInterval, quickCheckIndices, quickCheckParams, type GenerationOutcome, type GenerationProgress, type GenerationSpec } from '../../core/run/generation.ts';
import { DEFAULT_RUN_CONFIG, type RunHeader } from '../../core/run/types.ts';
import { WEBLLM_CATALOG } from '../../adapters/engines/webllm-catalog.ts';
import type { CustomModelRecord } from '../../adapters/engines/webllm-custom.ts';
import type { PromptTemplate } from '../../core/prompt/templates.ts';
import { loadCustomModels, loadUserTemplates } from './user-library.ts';

export type EngineChoice = 'wllama' | 'openai' | 'webllm';
export type SubsetChoice = 'quick' | 'first' | 'all';

const LS = { baseUrl: 'wb.openai.baseUrl', model: 'wb.openai.model', key: 'wb.openai.apiKey' };
const ls = (k: string): string => {
  try {
    return localStorage.getItem(k) ?? '';
  } catch {
    return '';
  }
};

export interface FinishedSummary {
  runId: string;
  outcome: GenerationOutcome['kind'];
  message: string | null;
  ex: { ex: number; low: number; high: number; n: number; correct: number } | null;
}

export class GenerateState {
  engineKind = $state<EngineChoice>('wllama');
  ggufFile = $state.raw<File | null>(null);
  ggufUrl = $state('');
  baseUrl = $state(ls(LS.baseUrl));
  openaiModel = $state(ls(LS.model));
  apiKey = $state(ls(LS.key));
  webllmId = $state(this.defaultWebLlmId());
  /** The researcher's own checkpoints and templates (user-library.ts). */
  customModels = $state.raw<CustomModelRecord[]>(loadCustomModels());
  userTemplates = $state.raw<PromptTemplate[]>(loadUserTemplates());
  verdict = $state.raw<CapabilityVerdict | null>(null);
  verdictError = $state<string | null>(null);

  engine = $state.raw<Engine | null>(null);
  model = $state.raw<ModelRef | null>(null);
  loading = $state(false);
  loadProgress = $state.raw<LoadProgress | null>(null);
  loadError = $state<string | null>(null);

  datasetId = $state<string | null>(null);
  templateId = $state(BUILTIN_TEMPLATES[0]!.id);
  sampleRows = $state<number | null>(null);
  subset = $state<SubsetChoice>('quick');
  firstN = $state(10);
  n = $state(1);
  temperature = $state(0);
  topP = $state(1);
  maxTokens = $state(256);
  seed = $state(0);
  name = $state('');

  preview = $state<string | null>(null);
  previewNote = $state<string | null>(null);
  previewError = $state<string | null>(null);

  running = $state(false);
  runId = $state<string | null>(null);
  progress = $state.raw<GenerationProgress | null>(null);
  error = $state<string | null>(null);
  finished = $state.raw<FinishedSummary | null>(null);
  unfinished = $state.raw<RunHeader[]>([]);
  #controller: AbortController | null = null;
  #loadAbort: AbortController | null = null;

  defaultWebLlmId(): string {
    return WEBLLM_CATALOG.find((e) => e.sqlTuned)?.id ?? WEBLLM_CATALOG[0]!.id;
  }

  /** Quick check: 50 seeded questions, one greedy sample, EX with a 95% interval. */
  quickCheckPreset(): void {
    this.subset = 'quick';
    const q = quickCheckParams(this.maxTokens);
    this.n = q.n;
    this.temperature = q.temperature;
    this.topP = q.topP;
    this.seed = q.seed ?? 0;
  }

  saveOpenAi(): void {
    try {
      localStorage.setItem(LS.baseUrl, this.baseUrl);
      localStorage.setItem(LS.model, this.openaiModel);
      localStorage.setItem(LS.key, this.apiKey);
    } catch {
      /* private mode: the values live for this page only */
    }
  }

  async checkWebLlm(): Promise<void> {
    this.verdict = null;
    this.verdictError = null;
    try {
      if (this.customModels.some((c) => c.id === this.webllmId)) {
        const { createWebLlmEngine } = await import('../../adapters/engines/webllm-engine.ts');
        this.verdict = await createWebLlmEngine({ customModels: [...this.customModels] }).check(this.webllmId);
        return;
      }
      const { checkCatalogModel } = await import('../../adapters/engines/webgpu-capability.ts');
      this.verdict = await checkCatalogModel(this.webllmId);
    } catch (err) {
      this.verdictError = errorMessage(err);
    }
  }

  async loadEngine(): Promise<void> {
    if (this.running) return;
    this.loadError = null;
    this.loading = true;
    this.loadProgress = null;
    this.#loadAbort = new AbortController();
    const old = this.engine;
    this.engine = null;
    this.model = null;
    await old?.unload().catch(() => undefined);
    try {
      let engine: Engine;
      let model: ModelRef;
      if (this.engineKind === 'wllama') {
        const { createWllamaEngine } = await import('../../adapters/engines/wllama-engine.ts');
        const e = createWllamaEngine();
        if (this.ggufFile) model = e.addFile(this.ggufFile.name, this.ggufFile);
        else if (this.ggufUrl.trim()) model = { id: this.ggufUrl.trim().split('/').pop() || this.ggufUrl.trim(), source: this.ggufUrl.trim() };
        else throw new Error('pick a GGUF file or give its URL');
        engine = e;
      } else if (this.engineKind === 'openai') {
        if (!this.baseUrl.trim() || !this.openaiModel.trim()) throw new Error('give the server base URL and the model name');
        this.saveOpenAi();
        const { createOpenAiEngine } = await import('../../adapters/engines/openai-engine.ts');
        engine = createOpenAiEngine({ baseUrl: this.baseUrl.trim(), model: this.openaiModel.trim(), apiKey: this.apiKey.trim() || null });
        model = { id: this.openaiModel.trim(), source: this.baseUrl.trim() };
      } else {
        const { createWebLlmEngine } = await import('../../adapters/engines/webllm-engine.ts');
        engine = createWebLlmEngine({ customModels: [...this.customModels] });
        model = { id: this.webllmId };
      }
      await engine.load(model, { signal: this.#loadAbort.signal, onProgress: (p) => (this.loadProgress = p) });
      this.engine = engine;
      this.model = model;
    } catch (err) {
      this.loadError = errorMessage(err);
    } finally {
      this.loading = false;
      this.#loadAbort = null;
    }
  }

  cancelLoad(): void {
    this.#loadAbort?.abort();
  }

  template() {
    return findTemplate(this.templateId, this.userTemplates) ?? BUILTIN_TEMPLATES[0]!;
  }

  params(): SamplingParams {
    return { n: this.n, temperature: this.temperature, topP: this.topP, maxTokens: this.maxTokens, seed: this.seed, stop: [...this.template().stop], logprobs: false };
  }

  async refreshPreview(store: WorkbenchStore): Promise<void> {
    this.previewError = null;
    if (!this.datasetId) return;
    try {
      const indices = await store.questionsWithDatabase(this.datasetId);
      if (indices.length === 0) throw new Error('this dataset has no stored database');
      const built = await store.previewGenerationPrompt(
        this.datasetId, indices[0]!,
        { template: this.template(), sampleRows: this.sampleRows ?? undefined, maxTokens: this.maxTokens },
        this.engine,
      );
      this.preview = built.prompt.messages.map((m) => `[${m.role}]\n${m.content}`).join('\n\n');
      const c = built.fit.cut;
      const cut = [...c.sampleRows.map((t) => `rows of ${t}`), ...c.descriptions.map((t) => `descriptions of ${t}`), ...c.tables.map((t) => `table ${t}`)];
      this.previewNote =
        `${built.fit.tokens} tokens (${built.fit.counter === 'engine' ? "the engine's tokenizer" : 'estimated at 4 characters per token'})` +
        (built.fit.limit !== null ? ` of ${built.fit.limit} available` : '') +
        (cut.length ? `; cut to fit: ${cut.join(', ')}` : '') +
        (built.fit.fits ? '' : '; does NOT fit the context window');
    } catch (err) {
      this.preview = null;
      this.previewError = errorMessage(err);
    }
  }

  async refreshUnfinished(store: WorkbenchStore): Promise<void> {
    const [runs, active] = await Promise.all([store.listRuns(), store.activeRunIds()]);
    this.unfinished = runs.filter((r) => r.source.kind === 'generation' && r.status === 'running' && !active.includes(r.id));
  }

  async start(store: WorkbenchStore, onDone: (runId: string) => void): Promise<void> {
    if (!this.engine || !this.model || !this.datasetId || this.running) return;
    const available = await store.questionsWithDatabase(this.datasetId);
    const indices =
      this.subset === 'quick' ? quickCheckIndices(available) : this.subset === 'first' ? available.slice(0, Math.max(1, this.firstN)) : available;
    const description =
      this.subset === 'quick' ? `quick check: ${indices.length} seeded-random questions with a database` : this.subset === 'first' ? `first ${indices.length} questions with a database` : 'every question with a database';
    const spec: GenerationSpec = {
      engine: this.engine.kind,
      model: this.engineKind === 'openai' ? { id: this.model.id, source: this.baseUrl.trim() } : this.model,
      template: this.template(),
      params: this.params(),
    };
    if (this.sampleRows !== null) spec.sampleRows = this.sampleRows;
    const name = this.name.trim() || `${this.model.id} · ${spec.template.id}${this.subset === 'quick' ? ' · quick check' : ''}`;
    await this.#drive(onDone, (hooks) =>
      store.startGenerationRun({ name, datasetId: this.datasetId!, subset: { description, indices }, spec, config: { ...DEFAULT_RUN_CONFIG, metrics: ['ex', 'soft-f1'] } }, this.engine!, hooks),
    store);
  }

  async resume(store: WorkbenchStore, runId: string, onDone: (runId: string) => void): Promise<void> {
    if (!this.engine || this.running) return;
    await this.#drive(onDone, (hooks) => store.resumeGenerationRun(runId, this.engine!, hooks), store);
  }

  async #drive(
    onDone: (runId: string) => void,
    go: (hooks: Parameters<WorkbenchStore['startGenerationRun']>[2]) => ReturnType<WorkbenchStore['startGenerationRun']>,
    store: WorkbenchStore,
  ): Promise<void> {
    this.running = true;
    this.error = null;
    this.finished = null;
    this.progress = null;
    this.#controller = new AbortController();
    try {
      const r = await go({
        signal: this.#controller.signal,
        onStart: (run) => (this.runId = run.id),
        onProgress: (p) => (this.progress = p),
      });
      const samples = await store.samples(r.run.id);
      this.finished = {
        runId: r.run.id,
        outcome: r.outcome.kind,
        message: r.outcome.kind === 'paused' || r.outcome.kind === 'gpu-lost' ? r.outcome.message : null,
        ex: samples.length ? exWithInterval(samples) : null,
      };
      if (r.outcome.kind === 'done') onDone(r.run.id);
    } catch (err) {
      this.error = errorMessage(err);
    } finally {
      this.running = false;
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

let instance: GenerateState | null = null;

export function generateState(): GenerateState {
  instance ??= new GenerateState();
  return instance;
}

export function formatEta(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}
