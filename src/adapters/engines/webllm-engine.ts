/**
 * The GPU engine: MLC models on WebGPU with @mlc-ai/web-llm, running in workers/llm.worker.ts.
 * web-llm is imported dynamically, so the main bundle carries none of its 6 MB until the
 * engine is used.
 *
 * Before anything is downloaded, `load` runs the capability check (webgpu-capability.ts) and,
 * for a custom checkpoint served from a URL, asks for every file (webllm-custom.ts): a model
 * that cannot run, or a missing file, fails at once with a sentence naming the reason.
 *
 * Samples are generated one at a time (web-llm cannot stream n > 1), sample i with seed + i.
 * A lost GPU device or an out-of-memory error rejects with GPU_LOST, so the run layer can
 * pause, keep what was generated, and resume after a reload; other failures of one sample
 * become error samples. web-llm exposes no tokenizer call: prompt fitting uses the chars/4
 * estimate for this engine.
 */
import type { AppConfig, ChatCompletionChunk, MLCEngineInterface, ModelRecord } from '@mlc-ai/web-llm';
import type { AbortSignalLike } from '../../core/eval/executor.ts';
import type {
  Completion,
  Engine,
  EngineCapabilities,
  EngineDevice,
  LoadProgress,
  ModelRef,
  Prompt,
  SamplingParams,
  GenerateHooks,
} from '../../core/engine/engine.ts';
import { abortPromise, throwIfAborted } from '../../core/engine/abort.ts';
import { EngineError } from '../../core/engine/engine-error.ts';
import type { CapabilityVerdict, GpuProbe } from '../../core/engine/gpu-verdict.ts';
import { describeAdapter, gpuVerdict } from '../../core/engine/gpu-verdict.ts';
import {
  applyStop,
  errorCompletion,
  generateOneByOne,
  meanLogprob,
  validateSampling,
} from '../../core/engine/sampling.ts';
import { catalogNeeds, customNeeds, probeGpu } from './webgpu-capability.ts';
import { WEBLLM_CATALOG } from '../../core/engine/webllm-catalog.ts';
import { IMPORT_HOST, deleteCachedModel } from './webllm-cache.ts';
import { preflightCustomModel, webllmFilesUrl, type CustomModelRecord, type PreflightResult } from './webllm-custom.ts';
import { GPU_LOST_ADVICE, mapWebLlmError } from './webllm-errors.ts';

export interface WebLlmEngineOptions {
  /** Custom checkpoints (from a URL or imported from disk) the engine can load, by id. */
  customModels?: CustomModelRecord[];
  /** Creates the worker; default: workers/llm.worker.ts as a module worker. */
  spawn?: () => Worker;
  /** Ask for every file of a custom URL model before loading (default true). */
  preflight?: boolean;
  /** Probe used by the capability check (tests); default: the browser's. */
  probe?: () => Promise<GpuProbe>;
  /** Loads web-llm (tests); default: the dynamic import. */
  importWebLlm?: () => Promise<typeof import('@mlc-ai/web-llm')>;
}

export class WebLlmEngine implements Engine {
  readonly kind = 'webllm';
  readonly capabilities: EngineCapabilities = { streaming: true, nativeN: false, logprobs: true, tokenize: false };
  private worker: Worker | null = null;
  private engine: MLCEngineInterface | null = null;
  private window: number | null = null;
  private interrupted = false;
  private readonly custom = new Map<string, CustomModelRecord>();
  /** The verdict of the last load, for the UI. */
  lastVerdict: CapabilityVerdict | null = null;
  /** The adapter the last check saw (navigator.gpu), for device(). */
  private lastProbe: GpuProbe | null = null;

  constructor(private readonly options: WebLlmEngineOptions = {}) {
    for (const c of options.customModels ?? []) this.custom.set(c.id, c);
  }

  addCustomModel(record: CustomModelRecord): ModelRef {
    this.custom.set(record.id, record);
    return { id: record.id, source: record.modelUrl };
  }

  /** web-llm's record for an id: a catalog entry (shader-f16 made explicit) or a custom model. */
  private async record(id: string, webllm: typeof import('@mlc-ai/web-llm')): Promise<ModelRecord> {
    const custom = this.custom.get(id);
    if (custom) {
      const r: ModelRecord = { model: custom.modelUrl, model_id: custom.id, model_lib: custom.modelLibUrl };
      if (custom.contextWindow) r.overrides = { context_window_size: custom.contextWindow };
      if (custom.quantization && /f16/.test(custom.quantization)) r.required_features = ['shader-f16'];
      return r;
    }
    const prebuilt = webllm.prebuiltAppConfig.model_list.find((m) => m.model_id === id);
    if (!prebuilt)
      throw new EngineError(
        'MODEL_MISSING',
        `"${id}" is neither a WebLLM prebuilt model nor a custom model added to the engine`,
      );
    const entry = WEBLLM_CATALOG.find((e) => e.id === id);
    const features = new Set([...(prebuilt.required_features ?? []), ...(entry?.requiredFeatures ?? [])]);
    return { ...prebuilt, required_features: [...features] };
  }

  /** The capability verdict for a model, without downloading anything. */
  async check(id: string, cached = false): Promise<CapabilityVerdict> {
    const probe = await (this.options.probe ?? probeGpu)();
    this.lastProbe = probe;
    const entry = WEBLLM_CATALOG.find((e) => e.id === id);
    const custom = this.custom.get(id);
    if (entry) return gpuVerdict(probe, catalogNeeds(entry, { cached }));
    if (custom) return gpuVerdict(probe, customNeeds(custom, null, cached));
    return gpuVerdict(probe, {
      id,
      title: id,
      quantization: /q\d+f16/.test(id) ? 'f16' : 'unknown',
      requiredFeatures: /q\d+f16/.test(id) ? ['shader-f16'] : [],
      vramMB: null,
      bufferSizeRequiredBytes: null,
      downloadBytes: null,
      downloadExact: false,
      cached,
      alternative: null,
    });
  }

  async load(
    model: ModelRef,
    hooks: { signal?: AbortSignalLike; onProgress?: (p: LoadProgress) => void } = {},
  ): Promise<void> {
    await this.unload();
    throwIfAborted(hooks.signal, 'loading');
    const id = model.id;
    const custom = this.custom.get(id);

    hooks.onProgress?.({ fraction: 0, text: 'checking this GPU' });
    const verdict = await this.check(id);
    this.lastVerdict = verdict;
    if (!verdict.canRun) throw new EngineError('UNSUPPORTED', verdict.summary, id);

    let preflight: PreflightResult | null = null;
    if (custom && !custom.modelUrl.startsWith(IMPORT_HOST) && this.options.preflight !== false) {
      hooks.onProgress?.({ fraction: 0, text: 'checking the model files' });
      preflight = await preflightCustomModel(custom);
      if (!preflight.ok)
        throw new EngineError('MODEL_MISSING', `the model folder is incomplete: ${preflight.problems.join(' ')}`, id);
    }

    const webllm = await (this.options.importWebLlm ?? (() => import('@mlc-ai/web-llm')))();
    const record = await this.record(id, webllm);
    const appConfig: AppConfig = { model_list: [record], cacheBackend: 'cache' };
    const worker =
      this.options.spawn?.() ??
      new Worker(new URL('../../../workers/llm.worker.ts', import.meta.url), { type: 'module', name: 'webllm' });
    this.worker = worker;
    const aborted = abortPromise(hooks.signal, 'loading');
    try {
      this.engine = await Promise.race([
        webllm.CreateWebWorkerMLCEngine(worker, id, {
          appConfig,
          initProgressCallback: (r) =>
            hooks.onProgress?.({ fraction: Number.isFinite(r.progress) ? r.progress : null, text: r.text }),
        }),
        aborted.promise,
      ]);
    } catch (err) {
      this.terminate();
      throw mapWebLlmError(err, id);
    } finally {
      aborted.dispose();
    }
    const entry = WEBLLM_CATALOG.find((e) => e.id === id);
    this.window =
      custom?.contextWindow ??
      preflight?.contextWindow ??
      entry?.contextWindow ??
      record.overrides?.context_window_size ??
      null;
  }

  contextWindow(): number | null {
    return this.window;
  }

  /**
   * web-llm runs only on WebGPU (it has no CPU path): while a model is loaded, the device is
   * WebGPU on the adapter navigator.gpu gave the load's capability check.
   */
  device(): EngineDevice | null {
    if (!this.engine) return null;
    const adapter = this.lastProbe?.adapter;
    if (!adapter) return { device: 'webgpu', reason: null };
    return {
      device: 'webgpu',
      reason: null,
      detail: `${describeAdapter(adapter)}${adapter.isFallbackAdapter ? ', a software (fallback) adapter' : ''}`,
    };
  }

  async generate(prompt: Prompt, params: SamplingParams, hooks: GenerateHooks = {}): Promise<Completion[]> {
    validateSampling(params);
    const engine = this.engine;
    if (!engine) throw new EngineError('NOT_LOADED', 'no model is loaded: call load() first');
    this.interrupted = false;
    const self = { interrupt: () => this.interrupt(), stopped: () => this.interrupted };
    return generateOneByOne(params, hooks.signal, self, async (i, seed): Promise<Completion> => {
      const t0 = performance.now();
      let text = '';
      let finish: string | null = null;
      let tokensIn: number | null = null;
      let tokensOut: number | null = null;
      const logprobs: number[] = [];
      try {
        const chunks = await engine.chat.completions.create({
          // No tool role here (capabilities.toolRole): a tool message would be a user turn.
          messages: prompt.messages.map((m) => ({ role: m.role === 'tool' ? 'user' : m.role, content: m.content })),
          temperature: params.temperature,
          top_p: params.topP,
          max_tokens: params.maxTokens,
          ...(params.stop.length > 0 ? { stop: params.stop } : {}),
          ...(seed === null ? {} : { seed }),
          ...(params.logprobs ? { logprobs: true, top_logprobs: 0 } : {}),
          stream: true,
          stream_options: { include_usage: true },
        });
        for await (const chunk of chunks as AsyncIterable<ChatCompletionChunk>) {
          const choice = chunk.choices[0];
          const piece = choice?.delta.content ?? '';
          if (piece) {
            text += piece;
            hooks.onToken?.(i, piece);
          }
          for (const lp of choice?.logprobs?.content ?? []) logprobs.push(lp.logprob);
          if (choice?.finish_reason) finish = choice.finish_reason;
          if (chunk.usage) {
            tokensIn = chunk.usage.prompt_tokens;
            tokensOut = chunk.usage.completion_tokens;
          }
        }
      } catch (err) {
        // web-llm unloads the model itself when the device is lost; this engine never does
        // so behind the run's back, so "not loaded" here means the GPU went away.
        const dropped = /ModelNotLoadedError|Model not loaded/i.test(
          `${(err as Error).name} ${(err as Error).message}`,
        );
        const e = dropped
          ? new EngineError(
              'GPU_LOST',
              `${GPU_LOST_ADVICE} (web-llm dropped the model: ${(err as Error).message.slice(0, 80)})`,
            )
          : mapWebLlmError(err, prompt.questionId === undefined ? undefined : `question ${prompt.questionId}`);
        if (e.code === 'GPU_LOST') {
          this.engine = null;
          throw e;
        }
        return errorCompletion(e.message, seed, performance.now() - t0);
      }
      const wasAborted = finish === 'abort' || this.interrupted || hooks.signal?.aborted === true;
      return {
        text: applyStop(text, params.stop).text,
        finishReason: wasAborted ? 'abort' : finish === 'length' ? 'length' : 'stop',
        tokensIn,
        tokensOut,
        latencyMs: performance.now() - t0,
        seed,
        meanLogprob: meanLogprob(logprobs),
      };
    });
  }

  async interrupt(): Promise<void> {
    this.interrupted = true;
    await this.engine?.interruptGenerate();
  }

  async unload(): Promise<void> {
    const engine = this.engine;
    this.engine = null;
    this.window = null;
    if (engine) await engine.unload().catch(() => undefined);
    this.terminate();
  }

  private terminate(): void {
    this.worker?.terminate();
    this.worker = null;
    this.engine = null;
  }
}

export function createWebLlmEngine(options: WebLlmEngineOptions = {}): WebLlmEngine {
  return new WebLlmEngine(options);
}

/** web-llm's record of a catalog or custom model, for its cache functions. */
async function appConfigFor(
  id: string,
  custom?: CustomModelRecord,
): Promise<{ webllm: typeof import('@mlc-ai/web-llm'); appConfig: AppConfig }> {
  const webllm = await import('@mlc-ai/web-llm');
  const record = custom
    ? { model: custom.modelUrl, model_id: custom.id, model_lib: custom.modelLibUrl }
    : webllm.prebuiltAppConfig.model_list.find((m) => m.model_id === id);
  if (!record) throw new EngineError('MODEL_MISSING', `"${id}" is not a WebLLM prebuilt model; pass its custom record`);
  return { webllm, appConfig: { model_list: [record], cacheBackend: 'cache' } };
}

/** Whether web-llm holds the model's weights (its own hasModelInCache). */
export async function isModelCached(id: string, custom?: CustomModelRecord): Promise<boolean> {
  const { webllm, appConfig } = await appConfigFor(id, custom);
  return webllm.hasModelInCache(id, appConfig);
}

/**
 * Deletes weights, tokenizer, config and library of a model: web-llm's
 * deleteModelAllInfoInCache, then whatever it leaves behind (it keeps tensor-cache.json).
 */
export async function deleteModel(id: string, custom?: CustomModelRecord): Promise<void> {
  const { webllm, appConfig } = await appConfigFor(id, custom);
  await webllm.deleteModelAllInfoInCache(id, appConfig);
  const record = appConfig.model_list[0]!;
  await deleteCachedModel(webllmFilesUrl(record.model), record.model_lib);
}
