/**
 * One engine of the app, chosen and loaded by the user: the CPU engine (a GGUF file or URL,
 * llama.cpp in WebAssembly), an OpenAI-compatible server, or WebLLM on the GPU. The Generate
 * screen's policy and the rubric judges are each one slot, so any engine can be the policy and
 * any engine the judge, and they may differ.
 *
 * The OpenAI-compatible base URL, model and key are kept in localStorage only (under the slot's
 * own keys): runs record the model name and URL, never the key.
 */
import { WEBLLM_CATALOG } from '../../adapters/engines/webllm-catalog.ts';
import type { EngineFactory } from '../../adapters/engines/engine-factory.ts';
import type { CustomModelRecord } from '../../adapters/engines/webllm-custom.ts';
import type { Engine, LoadProgress, ModelRef } from '../../core/engine/engine.ts';
import type { CapabilityVerdict } from '../../core/engine/gpu-verdict.ts';
import type { Recommendation } from '../../core/engine/engine-recommendation.ts';
import { errorMessage, WorkbenchError } from '../../core/errors.ts';
import { loadCustomModels } from '../generate/user-library.ts';

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

export class EngineSlot {
  #engineKind = $state<EngineChoice>('wllama');
  #ggufFile = $state.raw<File | null>(null);
  #ggufUrl = $state('');
  #baseUrl = $state('');
  #openaiModel = $state('');
  #apiKey = $state('');
  #advice = $state.raw<Recommendation | null>(null);
  #ggufGpuLayers = $state<number | null>(null);
  #openaiConcurrency = $state(4);
  #openaiRetries = $state(4);
  #webllmId = $state(this.defaultWebLlmId());
  #customModels = $state.raw<CustomModelRecord[]>(loadCustomModels());
  #verdict = $state.raw<CapabilityVerdict | null>(null);
  #verdictError = $state<string | null>(null);

  #engine = $state.raw<Engine | null>(null);
  #model = $state.raw<ModelRef | null>(null);
  #loading = $state(false);
  #loadProgress = $state.raw<LoadProgress | null>(null);
  #loadError = $state<string | null>(null);
  #loadAbort: AbortController | null = null;

  /** `storageKey`: prefix of the localStorage keys of this slot's server settings; `engines` from the composition root. */
  constructor(
    protected readonly engines: EngineFactory,
    private readonly storageKey = 'wb.openai',
  ) {
    this.#baseUrl = ls(`${storageKey}.baseUrl`);
    this.#openaiModel = ls(`${storageKey}.model`);
    this.#apiKey = ls(`${storageKey}.apiKey`);
  }

  get engineKind(): EngineChoice {
    return this.#engineKind;
  }
  get ggufFile(): File | null {
    return this.#ggufFile;
  }
  get ggufUrl(): string {
    return this.#ggufUrl;
  }
  get baseUrl(): string {
    return this.#baseUrl;
  }
  get openaiModel(): string {
    return this.#openaiModel;
  }
  get apiKey(): string {
    return this.#apiKey;
  }
  /** The machine check's advice for the picked GGUF (engine-recommendation.ts). */
  get advice(): Recommendation | null {
    return this.#advice;
  }
  /** GGUF layers on the GPU: null for all (the default), a count, 0 for the CPU. */
  get ggufGpuLayers(): number | null {
    return this.#ggufGpuLayers;
  }
  /** Requests in flight and retries per request: a cluster behind the URL takes many more than one GPU. */
  get openaiConcurrency(): number {
    return this.#openaiConcurrency;
  }
  get openaiRetries(): number {
    return this.#openaiRetries;
  }
  get webllmId(): string {
    return this.#webllmId;
  }
  /** The researcher's own WebLLM checkpoints (user-library.ts). */
  get customModels(): CustomModelRecord[] {
    return this.#customModels;
  }
  get verdict(): CapabilityVerdict | null {
    return this.#verdict;
  }
  get verdictError(): string | null {
    return this.#verdictError;
  }
  get engine(): Engine | null {
    return this.#engine;
  }
  get model(): ModelRef | null {
    return this.#model;
  }
  get loading(): boolean {
    return this.#loading;
  }
  get loadProgress(): LoadProgress | null {
    return this.#loadProgress;
  }
  get loadError(): string | null {
    return this.#loadError;
  }

  chooseEngineKind(kind: EngineChoice): void {
    this.#engineKind = kind;
  }
  /** A picked GGUF file replaces the URL; the machine check then advises on it. */
  chooseGgufFile(file: File | null): void {
    this.#ggufFile = file;
    if (file) this.#ggufUrl = '';
    void this.adviseGguf();
  }
  setGgufUrl(url: string): void {
    this.#ggufUrl = url;
  }
  setGgufGpuLayers(layers: number | null): void {
    this.#ggufGpuLayers = layers;
  }
  setBaseUrl(url: string): void {
    this.#baseUrl = url;
  }
  setOpenaiModel(model: string): void {
    this.#openaiModel = model;
  }
  setApiKey(key: string): void {
    this.#apiKey = key;
  }
  setOpenaiConcurrency(n: number): void {
    this.#openaiConcurrency = n;
  }
  setOpenaiRetries(n: number): void {
    this.#openaiRetries = n;
  }
  /** Another WebLLM model: the machine check's verdict was for the previous one. */
  chooseWebLlm(id: string): void {
    this.#webllmId = id;
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
    return this.engine?.kind === 'openai' ? { id: this.model.id, source: this.baseUrl.trim() } : this.model;
  }

  /** The model id the fields describe now (before loading), or null when none is chosen. */
  chosenModelId(): string | null {
    if (this.engineKind === 'openai') return this.openaiModel.trim() || null;
    if (this.engineKind === 'webllm') return this.webllmId;
    if (this.ggufFile) return this.ggufFile.name;
    const url = this.ggufUrl.trim();
    return url ? url.split('/').pop() || url : null;
  }

  /** The loaded engine is the one the fields describe now (same kind, server, model or file). */
  loadedAsChosen(): boolean {
    const e = this.engine;
    const m = this.model;
    if (!e || !m || e.kind !== this.engineKind) return false;
    if (this.engineKind === 'openai') return m.id === this.openaiModel.trim() && m.source === this.baseUrl.trim();
    if (this.engineKind === 'webllm') return m.id === this.webllmId;
    return this.ggufFile
      ? m.id === this.ggufFile.name || m.source?.endsWith(this.ggufFile.name) === true
      : m.source === this.ggufUrl.trim();
  }

  saveOpenAi(): void {
    try {
      localStorage.setItem(`${this.storageKey}.baseUrl`, this.baseUrl);
      localStorage.setItem(`${this.storageKey}.model`, this.openaiModel);
      localStorage.setItem(`${this.storageKey}.apiKey`, this.apiKey);
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
    this.#verdictError = null;
    try {
      this.#verdict = await this.engines.checkWebLlm(this.webllmId, this.customModels);
    } catch (err) {
      this.#verdictError = errorMessage(err);
    }
  }

  /** Loads the chosen engine; on failure `loadError` says why and the slot holds no engine. */
  async loadEngine(): Promise<void> {
    if (!this.canLoad()) return;
    this.#loadError = null;
    this.#loading = true;
    this.#loadProgress = null;
    this.#loadAbort = new AbortController();
    const old = this.engine;
    this.#engine = null;
    this.#model = null;
    await old?.unload().catch(() => undefined);
    try {
      let made: { engine: Engine; model: ModelRef };
      if (this.engineKind === 'wllama') {
        const layers = this.ggufGpuLayers;
        if (layers !== null && (!Number.isInteger(layers) || layers < 0))
          throw new WorkbenchError('BAD_OPTION', `GPU layers must be empty (all) or an integer >= 0, got ${layers}`);
        const gpuLayers = layers ?? 'all';
        if (this.ggufFile) made = await this.engines.gguf({ file: this.ggufFile }, { gpuLayers });
        else if (this.ggufUrl.trim()) made = await this.engines.gguf({ url: this.ggufUrl }, { gpuLayers });
        else throw new WorkbenchError('BAD_OPTION', 'pick a GGUF file or give its URL');
      } else if (this.engineKind === 'openai') {
        if (!this.baseUrl.trim() || !this.openaiModel.trim())
          throw new WorkbenchError('BAD_OPTION', 'give the server base URL and the model name');
        this.saveOpenAi();
        const count = (v: number, name: string, min: number) => {
          if (!Number.isInteger(v) || v < min || v > 1024)
            throw new WorkbenchError('BAD_OPTION', `${name} must be an integer from ${min} to 1024, got ${v}`);
          return v;
        };
        made = await this.engines.openai({
          baseUrl: this.baseUrl.trim(),
          model: this.openaiModel.trim(),
          apiKey: this.apiKey.trim() || null,
          concurrency: count(this.openaiConcurrency, 'requests in flight', 1),
          maxRetries: count(this.openaiRetries, 'retries', 0),
        });
      } else {
        made = await this.engines.webllm(this.webllmId, this.customModels);
      }
      const { engine, model } = made;
      await engine.load(model, { signal: this.#loadAbort.signal, onProgress: (p) => (this.#loadProgress = p) });
      this.#engine = engine;
      this.#model = model;
    } catch (err) {
      this.#loadError = errorMessage(err);
    } finally {
      this.#loading = false;
      this.#loadAbort = null;
    }
  }

  /** The engine the fields describe, loaded now unless it already is; the error names `what` when it cannot load. */
  async ensureLoaded(what: string): Promise<{ engine: Engine; model: ModelRef }> {
    if (!this.loadedAsChosen()) await this.loadEngine();
    if (this.loadError || !this.engine || !this.model)
      throw new WorkbenchError('FAILED', `the ${what} could not be loaded: ${this.loadError ?? 'no engine'}`);
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
