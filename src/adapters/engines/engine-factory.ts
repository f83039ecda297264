/**
 * The engines the browser can load, as one factory the composition root (src/ui/main.ts)
 * hands to the screens: each engine's module (and its worker, its wasm or web-llm) is imported
 * only when that engine is first created, so the main bundle stays small.
 */
import type { Engine, ModelRef } from '../../core/engine/engine.ts';
import type { CapabilityVerdict } from '../../core/engine/gpu-verdict.ts';
import { recommendEngine, type Recommendation } from '../../core/engine/engine-recommendation.ts';
import type { CustomModelRecord } from './webllm-custom.ts';

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
}

export function createBrowserEngineFactory(): EngineFactory {
  return {
    async gguf(source, options = {}) {
      const { createWllamaEngine } = await import('./wllama-engine.ts');
      const engine = createWllamaEngine({ gpuLayers: options.gpuLayers ?? 'all', nCtx: options.nCtx ?? null });
      if ('file' in source) return { engine, model: engine.addFile(source.file.name, source.file) };
      const url = source.url.trim();
      return { engine, model: { id: url.split('/').pop() || url, source: url } };
    },
    async openai({ baseUrl, model, apiKey, concurrency, maxRetries }) {
      const { createOpenAiEngine } = await import('./openai-engine.ts');
      return {
        engine: createOpenAiEngine({ baseUrl, model, apiKey, concurrency, maxRetries }),
        model: { id: model, source: baseUrl },
      };
    },
    async webllm(id, customModels) {
      const { createWebLlmEngine } = await import('./webllm-engine.ts');
      return { engine: createWebLlmEngine({ customModels: [...customModels] }), model: { id } };
    },
    async checkWebLlm(id, customModels) {
      if (customModels.some((c) => c.id === id)) {
        const { createWebLlmEngine } = await import('./webllm-engine.ts');
        return createWebLlmEngine({ customModels: [...customModels] }).check(id);
      }
      const { checkCatalogModel } = await import('./webgpu-capability.ts');
      return checkCatalogModel(id);
    },
    async recommendGguf(bytes) {
      const { probeGpu } = await import('./webgpu-capability.ts');
      return recommendEngine(await probeGpu(), { format: 'gguf', bytes });
    },
  };
}
