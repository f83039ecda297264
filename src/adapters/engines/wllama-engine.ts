/**
 * The CPU engine: GGUF models run by llama.cpp compiled to WebAssembly (@wllama/wllama) in
 * workers/wllama.worker.ts. A model comes from a URL or from a file the user picked; the GGUF
 * header is checked before llama.cpp sees the file and the vocabulary after, and both failures
 * are MODEL_REJECTED with a sentence saying what to do.
 *
 * Models without a chat template get the plain template (src/core/engine/plain-template.ts).
 * Samples are generated one at a time; sample i uses seed + i.
 */
import { wrap, proxy, type Remote } from 'comlink';
import wllamaWasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
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
import { EngineError, engineError } from '../../core/engine/engine-error.ts';
import { PLAIN_TEMPLATE_STOP, renderPlainChat } from '../../core/engine/plain-template.ts';
import { abortPromise, throwIfAborted } from '../../core/engine/abort.ts';
import { applyStop, errorCompletion, generateOneByOne, validateSampling } from '../../core/engine/sampling.ts';
import { chooseThreads, type ThreadChoice } from '../../core/engine/threads.ts';
import type { GgufSource, WllamaModelInfo, WllamaWorkerApi, WorkerReply } from '../../../workers/wllama.api.ts';

export interface WllamaEngineOptions {
  /** Threads for llama.cpp: a number, or 'auto' (default) for `chooseThreads`. */
  threads?: number | 'auto';
  /**
   * Context to allocate, in tokens, all of it usable by one request (also beyond the model's
   * training context: llama.cpp allows it, quality may drop there); default (null): 4096, a
   * request using at most the training context.
   */
  nCtx?: number | null;
  /** Layers on the GPU (WebGPU): 'all' (default), a count, or 0 for the CPU; llama.cpp falls back to the CPU by itself. */
  gpuLayers?: number | 'all';
  /** URL of wllama.wasm; default: the copy bundled with the app (never a CDN). */
  wasmUrl?: string;
  /** Creates the worker; default: workers/wllama.worker.ts as a module worker. */
  spawn?: () => Worker;
}

/** Prefix of `ModelRef.source` for a file the user picked (see `WllamaEngine.addFile`). */
export const FILE_SOURCE = 'file:';

export class WllamaEngine implements Engine {
  readonly kind = 'wllama';
  readonly capabilities: EngineCapabilities = { streaming: true, nativeN: false, logprobs: true, tokenize: true };
  private worker: Worker | null = null;
  private api: Remote<WllamaWorkerApi> | null = null;
  private died: Promise<never> | null = null;
  private model: WllamaModelInfo | null = null;
  private threadChoice: ThreadChoice | null = null;
  private readonly files = new Map<string, Blob[]>();
  private interrupted = false;

  constructor(private readonly options: WllamaEngineOptions = {}) {}

  /**
   * Registers a picked file (or the shards of a split model, in order) and returns the
   * ModelRef that loads it. Files do not survive a page reload: the user picks them again.
   */
  addFile(name: string, blobs: Blob | Blob[]): ModelRef {
    this.files.set(name, Array.isArray(blobs) ? blobs : [blobs]);
    return { id: name, source: `${FILE_SOURCE}${name}` };
  }

  /** The device llama.cpp put the layers on (from its log) and why the CPU, for runs and the panel. */
  device(): EngineDevice | null {
    return this.model ? { device: this.model.device.device, reason: this.model.device.reason } : null;
  }

  /** What was loaded, with the thread count and why, for the run record and the UI. */
  get loaded(): (WllamaModelInfo & { threadReason: string }) | null {
    return this.model && { ...this.model, threadReason: this.threadChoice?.reason ?? '' };
  }

  private ensureWorker(): Remote<WllamaWorkerApi> {
    if (this.api) return this.api;
    const worker =
      this.options.spawn?.() ??
      new Worker(new URL('../../../workers/wllama.worker.ts', import.meta.url), { type: 'module', name: 'wllama' });
    this.worker = worker;
    this.api = wrap<WllamaWorkerApi>(worker);
    this.died = new Promise<never>((_, reject) => {
      worker.addEventListener('error', (e) => {
        reject(new EngineError('INTERNAL', `the CPU engine's worker failed: ${e.message || 'it could not start'}`));
      });
    });
    this.died.catch(() => undefined);
    return this.api;
  }

  private async call<T>(fn: (api: Remote<WllamaWorkerApi>) => Promise<WorkerReply<T>>): Promise<T> {
    const api = this.ensureWorker();
    const r = await Promise.race([fn(api), this.died!]);
    if (!r.ok) throw engineError(r.error);
    return r.value;
  }

  private source(model: ModelRef): GgufSource {
    const src = model.source ?? model.id;
    if (src.startsWith(FILE_SOURCE)) {
      const name = src.slice(FILE_SOURCE.length);
      const blobs = this.files.get(name);
      if (!blobs) {
        throw new EngineError(
          'MODEL_MISSING',
          'this file is no longer open (files picked before a reload cannot be reopened): pick it again',
          name,
        );
      }
      return { kind: 'blob', name, blobs };
    }
    return { kind: 'url', url: new URL(src, globalThis.location?.href).href };
  }

  async load(
    model: ModelRef,
    hooks: { signal?: AbortSignalLike; onProgress?: (p: LoadProgress) => void } = {},
  ): Promise<void> {
    throwIfAborted(hooks.signal, 'loading');
    const source = this.source(model);
    const size = source.kind === 'blob' ? source.blobs.reduce((n, b) => n + b.size, 0) : 0;
    const requested = this.options.threads ?? 'auto';
    this.threadChoice =
      requested === 'auto'
        ? chooseThreads(
            {
              hardwareConcurrency: navigator.hardwareConcurrency,
              crossOriginIsolated: globalThis.crossOriginIsolated === true,
            },
            size,
          )
        : { threads: requested, reason: 'set by the user' };
    this.model = null;
    const onProgress = hooks.onProgress;
    const load = this.call((api) =>
      api.load(
        {
          source,
          wasmUrl: new URL(this.options.wasmUrl ?? wllamaWasmUrl, globalThis.location?.href).href,
          nCtx: this.options.nCtx ?? null,
          nThreads: this.threadChoice!.threads,
          gpuLayers: this.options.gpuLayers ?? 'all',
        },
        onProgress ? proxy(onProgress) : undefined,
      ),
    );
    const aborted = abortPromise(hooks.signal, 'loading');
    try {
      this.model = await Promise.race([load, aborted.promise]);
    } catch (err) {
      // A cancelled load leaves llama.cpp half-initialised: drop the worker.
      if ((err as EngineError).code === 'ABORTED') this.terminate();
      throw err;
    } finally {
      aborted.dispose();
    }
  }

  contextWindow(): number | null {
    return this.model ? this.model.contextWindow : null;
  }

  trainingContext(): number | null {
    return this.model?.nCtxTrain || null;
  }

  async countTokens(text: string): Promise<number> {
    return this.call((api) => api.countTokens(text));
  }

  async generate(prompt: Prompt, params: SamplingParams, hooks: GenerateHooks = {}): Promise<Completion[]> {
    validateSampling(params);
    const model = this.model;
    if (!model) throw new EngineError('NOT_LOADED', 'no model is loaded: call load() first');
    this.interrupted = false;
    const input = model.hasChatTemplate
      ? {
          kind: 'chat' as const,
          // No tool role here (capabilities.toolRole): a tool message would be a user turn.
          messages: prompt.messages.map((m) => ({
            role: m.role === 'tool' ? ('user' as const) : m.role,
            content: m.content,
          })),
        }
      : { kind: 'text' as const, prompt: renderPlainChat(prompt.messages) };
    const stop = model.hasChatTemplate ? params.stop : [...params.stop, ...PLAIN_TEMPLATE_STOP];
    const self = { interrupt: () => this.interrupt(), stopped: () => this.interrupted };
    return generateOneByOne(params, hooks.signal, self, async (i, seed): Promise<Completion> => {
      const onText = hooks.onToken ? proxy((piece: string) => hooks.onToken!(i, piece)) : undefined;
      const t0 = performance.now();
      try {
        const r = await this.call((api) =>
          api.generate(
            {
              input,
              maxTokens: params.maxTokens,
              temperature: params.temperature,
              topP: params.topP,
              seed,
              stop,
              logprobs: params.logprobs,
            },
            onText,
          ),
        );
        // llama.cpp already stops at `stop`; cutting again keeps every engine identical.
        const cut = applyStop(r.text, stop);
        return {
          text: cut.text,
          finishReason: r.finishReason,
          tokensIn: r.tokensIn,
          tokensOut: r.tokensOut,
          latencyMs: r.ms,
          seed,
          meanLogprob: r.meanLogprob,
        };
      } catch (err) {
        if ((err as EngineError).code === 'NOT_LOADED') throw err;
        return errorCompletion((err as Error).message, seed, performance.now() - t0);
      }
    });
  }

  async interrupt(): Promise<void> {
    this.interrupted = true;
    await this.api?.cancel();
  }

  async unload(): Promise<void> {
    this.model = null;
    if (this.api) await Promise.race([this.api.unload(), this.died!]).catch(() => undefined);
    this.terminate();
  }

  private terminate(): void {
    this.worker?.terminate();
    this.worker = null;
    this.api = null;
    this.died = null;
    this.model = null;
  }
}

export function createWllamaEngine(options: WllamaEngineOptions = {}): WllamaEngine {
  return new WllamaEngine(options);
}
