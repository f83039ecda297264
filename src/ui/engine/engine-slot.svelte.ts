/**
 * One engine of the app, chosen and loaded by the user: the CPU engine (a GGUF file or URL,
 * llama.cpp in WebAssembly), an OpenAI-compatible server, or WebLLM on the GPU. The Generate
 * screen's policy and the rubric judges are each one slot, so any engine can be the policy and
 * any engine the judge, and they may differ.
 *
 * The OpenAI-compatible base URL, model and key are kept in localStorage only (under the slot's
 * own keys): runs record the model name and URL, never the key.
 */
import { WEBLLM_CATALOG } from '../../core/engine/webllm-catalog.ts';
import type { CustomModelRecord, EngineFactory, WebLlmModels } from '../../app/engine-ports.ts';
import type { Engine, LoadProgress, ModelRef } from '../../core/engine/engine.ts';
import type { CapabilityVerdict } from '../../core/engine/gpu-verdict.ts';
import type { Recommendation } from '../../core/engine/engine-recommendation.ts';
import { errorMessage, WorkbenchError } from '../../core/errors.ts';
import { loadCustomModels } from './user-library.ts';

export type EngineChoice = 'wllama' | 'openai' | 'webllm';

export const ENGINE_CHOICES: readonly { value: EngineChoice; label: string }[] = [
  { value: 'wllama', label: 'GGUF (llama.cpp: WebGPU when the browser offers a usable GPU, else the CPU)' },
  { value: 'openai', label: 'OpenAI-compatible server' },
  { value: 'webllm', label: 'GPU (WebLLM)' },
];

const ls = (k: string): string => {
  try {
    return localStorage.getItem(k) ?? '';
  } catch {
    return '';
  }
};

/** The CPU engine's context setting: at least 256 tokens, at most 131072 (wllama's 4 GiB of WebAssembly memory holds the model and its cache). */
export const GGUF_CONTEXT_MIN = 256;
export const GGUF_CONTEXT_MAX = 131072;

/** The context field's value as the engine takes it; a bad value is refused, naming the field and the range. */
function checkedGgufContext(tokens: number | null): number | null {
  if (tokens === null) return null;
  if (!Number.isInteger(tokens) || tokens < GGUF_CONTEXT_MIN || tokens > GGUF_CONTEXT_MAX)
    throw new WorkbenchError(
      'BAD_OPTION',
      `Context (tokens) must be empty (the default: 4096, at most the model's training context) or an integer from ${GGUF_CONTEXT_MIN} to ${GGUF_CONTEXT_MAX}, got ${tokens}`,
    );
  return tokens;
}

/** Why the loaded context may read worse: it runs beyond the model's training context (null when it does not). */
export function contextBeyondTraining(engine: Engine | null): string | null {
  const ctx = engine?.contextWindow() ?? null;
  const train = engine?.trainingContext?.() ?? null;
  if (ctx === null || train === null || ctx <= train) return null;
  return `the context (${ctx} tokens) is beyond the model's training context (${train} tokens): llama.cpp allows it, but the model's quality may drop past token ${train}`;
}

/** One slot's own fields (the picked file, advice, verdict and the loaded engine are `$state.raw`, apart). */
interface EngineSlotFields {
  engineKind: EngineChoice;
  ggufUrl: string;
  /** The OpenAI-compatible server's base URL, model and key (kept in localStorage under the slot's keys). */
  baseUrl: string;
  openaiModel: string;
  apiKey: string;
  /** GGUF layers on the GPU: null for all (the default), a count, 0 for the CPU. */
  ggufGpuLayers: number | null;
  /** The CPU engine's context in tokens: null for the default (4096, a request using at most the training context). */
  ggufContext: number | null;
  /** Requests in flight and retries per request: a cluster behind the URL takes many more than one GPU. */
  openaiConcurrency: number;
  openaiRetries: number;
  webllmId: string;
  /** Why the machine check of the WebLLM model failed, if it did. */
  verdictError: string | null;
  loading: boolean;
  /** Why the last load failed; the slot then holds no engine. */
  loadError: string | null;
}

export class EngineSlot {
  #s = $state<EngineSlotFields>({
    engineKind: 'wllama',
    ggufUrl: '',
    baseUrl: '',
    openaiModel: '',
    apiKey: '',
    ggufGpuLayers: null,
    ggufContext: null,
    openaiConcurrency: 4,
    openaiRetries: 4,
    webllmId: this.defaultWebLlmId(),
    verdictError: null,
    loading: false,
    loadError: null,
  });
  #ggufFile = $state.raw<File | null>(null);
  #advice = $state.raw<Recommendation | null>(null);
  #customModels = $state.raw<CustomModelRecord[]>(loadCustomModels());
  #verdict = $state.raw<CapabilityVerdict | null>(null);

  #engine = $state.raw<Engine | null>(null);
  #model = $state.raw<ModelRef | null>(null);
  #loadProgress = $state.raw<LoadProgress | null>(null);
  #loadAbort: AbortController | null = null;

  /** `storageKey`: prefix of the localStorage keys of this slot's server settings; `engines` from the composition root. */
  constructor(
    protected readonly engines: EngineFactory,
    private readonly storageKey = 'wb.openai',
  ) {
    this.#s.baseUrl = ls(`${storageKey}.baseUrl`);
    this.#s.openaiModel = ls(`${storageKey}.model`);
    this.#s.apiKey = ls(`${storageKey}.apiKey`);
  }

  /** The slot's choice, settings and load state, read-only: the methods below change it. */
  get slot(): Readonly<EngineSlotFields> {
    return this.#s;
  }
  get ggufFile(): File | null {
    return this.#ggufFile;
  }
  /** The machine check's advice for the picked GGUF (engine-recommendation.ts). */
  get advice(): Recommendation | null {
    return this.#advice;
  }
  /** The researcher's own WebLLM checkpoints (user-library.ts). */
  get customModels(): CustomModelRecord[] {
    return this.#customModels;
  }
  /** The download cache, custom checkpoints by URL and model folders from disk (the engines' port). */
  get webllmModels(): WebLlmModels {
    return this.engines.webllmModels;
  }
  get verdict(): CapabilityVerdict | null {
    return this.#verdict;
  }
  get engine(): Engine | null {
    return this.#engine;
  }
  get model(): ModelRef | null {
    return this.#model;
  }
  get loadProgress(): LoadProgress | null {
    return this.#loadProgress;
  }

  chooseEngineKind(kind: EngineChoice): void {
    this.#s.engineKind = kind;
  }
  /** A picked GGUF file replaces the URL; the machine check then advises on it. */
  chooseGgufFile(file: File | null): void {
    this.#ggufFile = file;
    if (file) this.#s.ggufUrl = '';
    void this.adviseGguf();
  }
  setGgufUrl(url: string): void {
    this.#s.ggufUrl = url;
  }
  setGgufGpuLayers(layers: number | null): void {
    this.#s.ggufGpuLayers = layers;
  }
  setGgufContext(tokens: number | null): void {
    this.#s.ggufContext = tokens;
  }
  setBaseUrl(url: string): void {
    this.#s.baseUrl = url;
  }
  setOpenaiModel(model: string): void {
    this.#s.openaiModel = model;
  }
  setApiKey(key: string): void {
    this.#s.apiKey = key;
  }
  setOpenaiConcurrency(n: number): void {
    this.#s.openaiConcurrency = n;
  }
  setOpenaiRetries(n: number): void {
    this.#s.openaiRetries = n;
  }
  /** Another WebLLM model: the machine check's verdict was for the previous one. */
  chooseWebLlm(id: string): void {
    this.#s.webllmId = id;
    this.#verdict = null;
  }
  /** The researcher's own models after an add or a removal (user-library.ts saved them). */
  setCustomModels(models: CustomModelRecord[]): void {
    this.#customModels = models;
  }

  defaultWebLlmId(): string {
    return WEBLLM_CATALOG.find((e) => e.sqlTuned)?.id ?? WEBLLM_CATALOG[0]!.id;
  }

  /** Whether the slot may (re)load now; the Generate screen refuses while a run uses the engine. */
  protected canLoad(): boolean {
    return true;
  }

  /** The model as a run records it: the server's URL with an OpenAI-compatible model. */
  recordedModel(): ModelRef | null {
    if (!this.model) return null;
    return this.engine?.kind === 'openai' ? { id: this.model.id, source: this.#s.baseUrl.trim() } : this.model;
  }

  /** The model id the fields describe now (before loading), or null when none is chosen. */
  chosenModelId(): string | null {
    if (this.#s.engineKind === 'openai') return this.#s.openaiModel.trim() || null;
    if (this.#s.engineKind === 'webllm') return this.#s.webllmId;
    if (this.ggufFile) return this.ggufFile.name;
    const url = this.#s.ggufUrl.trim();
    return url ? url.split('/').pop() || url : null;
  }

  /** The loaded engine is the one the fields describe now (same kind, server, model or file). */
  loadedAsChosen(): boolean {
    const e = this.engine;
    const m = this.model;
    if (!e || !m || e.kind !== this.#s.engineKind) return false;
    if (this.#s.engineKind === 'openai')
      return m.id === this.#s.openaiModel.trim() && m.source === this.#s.baseUrl.trim();
    if (this.#s.engineKind === 'webllm') return m.id === this.#s.webllmId;
    return this.ggufFile
      ? m.id === this.ggufFile.name || m.source?.endsWith(this.ggufFile.name) === true
      : m.source === this.#s.ggufUrl.trim();
  }

  saveOpenAi(): void {
    try {
      localStorage.setItem(`${this.storageKey}.baseUrl`, this.#s.baseUrl);
      localStorage.setItem(`${this.storageKey}.model`, this.#s.openaiModel);
      localStorage.setItem(`${this.storageKey}.apiKey`, this.#s.apiKey);
    } catch {
      /* private mode: the values live for this page only */
    }
  }

  /** Recommends an engine for the picked GGUF file (or a GGUF URL of unknown size). */
  async adviseGguf(): Promise<void> {
    this.#advice = null;
    try {
      this.#advice = await this.engines.recommendGguf(this.ggufFile ? this.ggufFile.size : null);
    } catch {
      this.#advice = null;
    }
  }

  async checkWebLlm(): Promise<void> {
    this.#verdict = null;
    this.#s.verdictError = null;
    try {
      this.#verdict = await this.engines.checkWebLlm(this.#s.webllmId, this.customModels);
    } catch (err) {
      this.#s.verdictError = errorMessage(err);
    }
  }

  /** Loads the chosen engine; on failure `loadError` says why and the slot holds no engine. */
  async loadEngine(): Promise<void> {
    if (!this.canLoad()) return;
    this.#s.loadError = null;
    this.#s.loading = true;
    this.#loadProgress = null;
    this.#loadAbort = new AbortController();
    const old = this.engine;
    this.#engine = null;
    this.#model = null;
    await old?.unload().catch(() => undefined);
    try {
      let made: { engine: Engine; model: ModelRef };
      if (this.#s.engineKind === 'wllama') {
        const layers = this.#s.ggufGpuLayers;
        if (layers !== null && (!Number.isInteger(layers) || layers < 0))
          throw new WorkbenchError('BAD_OPTION', `GPU layers must be empty (all) or an integer >= 0, got ${layers}`);
        const gpuLayers = layers ?? 'all';
        const nCtx = checkedGgufContext(this.#s.ggufContext);
        if (this.ggufFile) made = await this.engines.gguf({ file: this.ggufFile }, { gpuLayers, nCtx });
        else if (this.#s.ggufUrl.trim()) made = await this.engines.gguf({ url: this.#s.ggufUrl }, { gpuLayers, nCtx });
        else throw new WorkbenchError('BAD_OPTION', 'pick a GGUF file or give its URL');
      } else if (this.#s.engineKind === 'openai') {
        if (!this.#s.baseUrl.trim() || !this.#s.openaiModel.trim())
          throw new WorkbenchError('BAD_OPTION', 'give the server base URL and the model name');
        this.saveOpenAi();
        const count = (v: number, name: string, min: number) => {
          if (!Number.isInteger(v) || v < min || v > 1024)
            throw new WorkbenchError('BAD_OPTION', `${name} must be an integer from ${min} to 1024, got ${v}`);
          return v;
        };
        made = await this.engines.openai({
          baseUrl: this.#s.baseUrl.trim(),
          model: this.#s.openaiModel.trim(),
          apiKey: this.#s.apiKey.trim() || null,
          concurrency: count(this.#s.openaiConcurrency, 'requests in flight', 1),
          maxRetries: count(this.#s.openaiRetries, 'retries', 0),
        });
      } else {
        made = await this.engines.webllm(this.#s.webllmId, this.customModels);
      }
      const { engine, model } = made;
      await engine.load(model, { signal: this.#loadAbort.signal, onProgress: (p) => (this.#loadProgress = p) });
      this.#engine = engine;
      this.#model = model;
    } catch (err) {
      this.#s.loadError = errorMessage(err);
    } finally {
      this.#s.loading = false;
      this.#loadAbort = null;
    }
  }

  /** The engine the fields describe, loaded now unless it already is; the error names `what` when it cannot load. */
  async ensureLoaded(what: string): Promise<{ engine: Engine; model: ModelRef }> {
    if (!this.loadedAsChosen()) await this.loadEngine();
    if (this.#s.loadError || !this.engine || !this.model)
      throw new WorkbenchError('FAILED', `the ${what} could not be loaded: ${this.#s.loadError ?? 'no engine'}`);
    return { engine: this.engine, model: this.model };
  }

  cancelLoad(): void {
    this.#loadAbort?.abort();
  }

  async unload(): Promise<void> {
    const e = this.engine;
    this.#engine = null;
    this.#model = null;
    await e?.unload().catch(() => undefined);
  }
}
