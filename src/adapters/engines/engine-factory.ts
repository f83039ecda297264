/**
 * The engines the browser can load, as one factory the composition root (src/ui/main.ts)
 * hands to the screens: each engine's module (and its worker, its wasm or web-llm) is imported
 * only when that engine is first created, so the main bundle stays small.
 */
import type { EngineFactory } from '../../app/engine-ports.ts';
import { recommendEngine } from '../../core/engine/engine-recommendation.ts';
import { WEBLLM_CATALOG } from '../../core/engine/webllm-catalog.ts';
import { WorkbenchError } from '../../core/errors.ts';

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
    webllmModels: {
      async customRecord(input, pageUrl) {
        const { customModelRecord } = await import('./webllm-custom.ts');
        return customModelRecord(input, pageUrl);
      },
      async preflight(record) {
        const { preflightCustomModel } = await import('./webllm-custom.ts');
        return preflightCustomModel(record);
      },
      async listCached(customModels) {
        if (typeof caches === 'undefined')
          throw new WorkbenchError(
            'UNSUPPORTED',
            'this page has no Cache API (it needs a secure context: https or localhost)',
          );
        const [{ listCachedModels }, { catalogFilesUrl }] = await Promise.all([
          import('./webllm-cache.ts'),
          import('./webgpu-capability.ts'),
        ]);
        return listCachedModels([
          ...customModels.map((m) => ({ id: m.id, filesUrl: m.filesUrl })),
          ...WEBLLM_CATALOG.map((e) => ({ id: e.id, filesUrl: catalogFilesUrl(e) })),
        ]);
      },
      async deleteCached(filesUrl, modelLibUrl) {
        const { deleteCachedModel } = await import('./webllm-cache.ts');
        return deleteCachedModel(filesUrl, modelLibUrl);
      },
      async importLocal(files, options) {
        const { importLocalModel } = await import('./webllm-cache.ts');
        return importLocalModel(files, options);
      },
    },
  };
}
