/**
 * The engines' port: what the screens (and a rubric run) ask of the engines a host can load,
 * and of the WebLLM models of the researcher's own. The browser implements it in
 * adapters/engines/engine-factory.ts; the composition root (src/ui/main.ts) hands it over.
 */
import type { Engine, ModelRef } from '../core/engine/engine.ts';
import type { Recommendation } from '../core/engine/engine-recommendation.ts';
import type { CapabilityVerdict } from '../core/engine/gpu-verdict.ts';

/** A researcher's own MLC checkpoint as the app stores it: plain data, safe to store with a run. */
export interface CustomModelRecord {
  id: string;
  /** Absolute model URL as web-llm will receive it. */
  modelUrl: string;
  /** Where web-llm will actually fetch the files (with `resolve/main/` added when missing). */
  filesUrl: string;
  modelLibUrl: string;
  /** From mlc-chat-config.json, once known. */
  contextWindow: number | null;
  quantization: string | null;
}

export interface CustomModelInput {
  /** The model folder (absolute, or relative to the page). */
  modelUrl: string;
  /** The compiled model library (.wasm), absolute or relative. */
  modelLibUrl: string;
  /** Id to register it under; default: the folder's name. */
  id?: string;
}

/** What asking for a custom checkpoint's files found, before anything big is downloaded. */
export interface PreflightResult {
  ok: boolean;
  /** One sentence per problem, each naming the file and its URL. */
  problems: string[];
  /** Sum of shards, tokenizer and library sizes, when every file answered. */
  downloadBytes: number | null;
  contextWindow: number | null;
  quantization: string | null;
  tokenizerFiles: string[];
}

/** A model in web-llm's download cache. */
export interface CachedModel {
  /** The files URL (ending in `/resolve/<revision>/`). */
  filesUrl: string;
  /** The id of a known model with that URL, else null. */
  id: string | null;
  /** Bytes held in webllm/model for it (weights and tokenizer). */
  bytes: number;
  files: number;
  /** tensor-cache.json and every shard it lists are present. */
  complete: boolean;
  /** Imported from disk (`WebLlmModels.importLocal`). */
  imported: boolean;
}

/** A file of a model folder picked from disk. */
export interface LocalFile {
  /** Path relative to the picked folder, e.g. `Qwen-q4f32_1-MLC/params_shard_0.bin`. */
  path: string;
  file: Blob;
}

/** How far importing a model folder from disk has come. */
export interface ModelImportProgress {
  file: string;
  doneBytes: number;
  totalBytes: number;
}

/** The WebLLM models of the researcher's own: custom checkpoints by URL, folders from disk, the download cache. */
export interface WebLlmModels {
  /** The record of a custom checkpoint (URLs made absolute against `pageUrl`), with notes on what was changed. */
  customRecord(input: CustomModelInput, pageUrl: string): Promise<{ record: CustomModelRecord; notes: string[] }>;
  /** Asks for every file of a custom checkpoint, so a missing one is named before any download. */
  preflight(record: CustomModelRecord): Promise<PreflightResult>;
  /** Models in web-llm's cache, with their sizes, named when the catalog or `customModels` know them. */
  listCached(customModels: readonly CustomModelRecord[]): Promise<CachedModel[]>;
  /** Deletes a cached model's files (and its library); resolves with the number of entries deleted. */
  deleteCached(filesUrl: string, modelLibUrl?: string): Promise<number>;
  /** Imports an MLC model folder from disk into web-llm's cache (no network); the record to load it with. */
  importLocal(
    files: readonly LocalFile[],
    options?: { onProgress?: (p: ModelImportProgress) => void },
  ): Promise<CustomModelRecord>;
}

export interface EngineFactory {
  /**
   * llama.cpp in WebAssembly on a GGUF file the user picked, or a GGUF URL; layers on WebGPU: all
   * by default, a count, 0 for the CPU; `nCtx`: the context to allocate (null: 4096, a request
   * using at most the model's training context).
   */
  gguf(
    model: { file: File } | { url: string },
    options?: { gpuLayers?: number | 'all'; nCtx?: number | null },
  ): Promise<{ engine: Engine; model: ModelRef }>;
  /** An OpenAI-compatible server (vLLM, llama.cpp, Ollama); the key is never recorded. */
  openai(options: {
    baseUrl: string;
    model: string;
    apiKey: string | null;
    concurrency?: number;
    maxRetries?: number;
  }): Promise<{ engine: Engine; model: ModelRef }>;
  /** WebLLM on the GPU, with the researcher's own MLC checkpoints beside the catalog. */
  webllm(id: string, customModels: readonly CustomModelRecord[]): Promise<{ engine: Engine; model: ModelRef }>;
  /** Whether this machine's GPU can run a WebLLM model (catalog or custom). */
  checkWebLlm(id: string, customModels: readonly CustomModelRecord[]): Promise<CapabilityVerdict>;
  /** The machine check's advice for a GGUF of this size: GGUF on WebGPU, on the CPU, or a server, and why. */
  recommendGguf(bytes: number | null): Promise<Recommendation>;
  /** The WebLLM models of the researcher's own and the download cache. */
  readonly webllmModels: WebLlmModels;
}
