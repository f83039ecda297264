/**
 * The contract of the CPU engine's worker (workers/wllama.worker.ts), spoken through comlink.
 * Plain data only. Failures come back as `{ ok: false, error: { code, message } }` rather than
 * as thrown errors, because comlink keeps only the name and message of a thrown error and the
 * run layer needs the code.
 */
import type { Result } from '../src/core/result.ts';
import type { LoadProgress } from '../src/core/engine/engine.ts';
import type { EngineErrorData } from '../src/core/engine/engine-error.ts';
import type { DeviceReport, WebGpuProbe } from '../src/core/engine/llama-device.ts';

export type WorkerReply<T> = Result<T, EngineErrorData>;

/** A GGUF from a file picker (one Blob, or the shards of a split model in order) or a URL. */
export type GgufSource = { kind: 'blob'; name: string; blobs: Blob[] } | { kind: 'url'; url: string };

export interface WllamaLoadRequest {
  source: GgufSource;
  /** Absolute URL of wllama.wasm, served from our own bundle. */
  wasmUrl: string;
  /**
   * Context to allocate, in tokens; null: 4096, of which a request may use at most the model's
   * training context. A number is allocated as given and a request may use all of it, also
   * beyond the training context (llama.cpp allows it; quality may drop there).
   */
  nCtx: number | null;
  nThreads: number;
  /** Layers to put on the GPU: 'all' (default: llama.cpp offloads what its GPU backend takes) or a count; 0 is the CPU. */
  gpuLayers: number | 'all';
}

export interface WllamaModelInfo {
  /** `general.name` from the GGUF, else the file name. */
  name: string;
  ggufVersion: number;
  nVocab: number;
  /** Context allocated (llama.cpp's n_ctx). */
  nCtx: number;
  /** The model's training context, as its GGUF declares it. */
  nCtxTrain: number;
  /** Tokens one request may use (prompt and reply): n_ctx, or the training context when that is smaller and no context was asked for. */
  contextWindow: number;
  /** The GGUF carries `tokenizer.chat_template`; otherwise prompts use the plain template. */
  hasChatTemplate: boolean;
  architecture: string | null;
  /** Threads actually used (1 when the page is not cross-origin isolated). */
  threads: number;
  multithread: boolean;
  sizeBytes: number;
  loadMs: number;
  /** The device that ran the layers, read from llama.cpp's log, and why the CPU when it did. */
  device: Omit<DeviceReport, 'log'> & { backends: number | null; webgpuAdapter: string | null; evidence: string[] };
  /** What the worker saw of WebGPU before loading. */
  webgpu: WebGpuProbe;
}

export interface WllamaGenerateRequest {
  /** Chat messages when the model has a chat template, else the already rendered text. */
  input:
    | { kind: 'chat'; messages: { role: 'system' | 'user' | 'assistant'; content: string }[] }
    | { kind: 'text'; prompt: string };
  maxTokens: number;
  temperature: number;
  topP: number;
  seed: number | null;
  stop: string[];
  logprobs: boolean;
}

export interface WllamaGenerateResult {
  text: string;
  finishReason: 'stop' | 'length' | 'abort';
  tokensIn: number | null;
  tokensOut: number | null;
  meanLogprob: number | null;
  /** Milliseconds from request to last token. */
  ms: number;
}

export interface WllamaWorkerApi {
  load(req: WllamaLoadRequest, onProgress?: (p: LoadProgress) => void): Promise<WorkerReply<WllamaModelInfo>>;
  /** One sample. `onText` receives each new piece of text as it is generated. */
  generate(req: WllamaGenerateRequest, onText?: (piece: string) => void): Promise<WorkerReply<WllamaGenerateResult>>;
  /** Tokens of `text` as the model's tokenizer counts them (prompt evaluation, no generation). */
  countTokens(text: string): Promise<WorkerReply<number>>;
  /** Stops the generation in progress (it resolves with finishReason 'abort'). */
  cancel(): Promise<void>;
  unload(): Promise<void>;
}
