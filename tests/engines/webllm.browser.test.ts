/**
 * The GPU engine in headless Chromium with --enable-unsafe-webgpu: a software WebGPU adapter
 * (SwiftShader) without shader-f16. No model weights exist on this machine, so these tests
 * check everything up to the first byte of weights: the capability verdict, the refusal of a
 * q4f16 model before any download, a custom model with a missing file, web-llm's real worker
 * path failing clearly on a bad model library, and the offline import into web-llm's cache
 * (checked with web-llm's own hasModelInCache), listing and deleting.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { probeGpu, checkCatalogModel } from '../../src/adapters/engines/webgpu-capability.ts';
import {
  deleteCachedModel,
  importLocalModel,
  listCachedModels,
  type LocalFile,
} from '../../src/adapters/engines/webllm-cache.ts';
import { customModelRecord, type CustomModelRecord } from '../../src/adapters/engines/webllm-custom.ts';
import {
  createWebLlmEngine,
  deleteModel,
  isModelCached,
  type WebLlmEngine,
} from '../../src/adapters/engines/webllm-engine.ts';
import { rejectionOf } from '../helpers/errors.ts';

const engines: WebLlmEngine[] = [];
const engine = (...args: Parameters<typeof createWebLlmEngine>) => {
  const e = createWebLlmEngine(...args);
  engines.push(e);
  return e;
};
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.unload()));
});

// An absolute path: Vite rewrites `new URL('./x', import.meta.url)` as an asset import.
const FIXTURE = new URL('/tests/engines/fixtures/mlc-incomplete/', location.origin);

/** web-llm's record shape for a custom model, to ask web-llm itself about its cache. */
const appConfigOf = (r: CustomModelRecord) => ({
  model_list: [{ model: r.modelUrl, model_id: r.id, model_lib: r.modelLibUrl }],
});

describe('WebGPU capability in headless Chromium (SwiftShader)', () => {
  it('finds the software adapter, its limits, and no shader-f16', async () => {
    const probe = await probeGpu();
    expect(probe.webgpu).toBe(true);
    expect(probe.adapter).toMatchObject({ vendor: 'google', architecture: 'swiftshader', isFallbackAdapter: true });
    expect(probe.features).not.toContain('shader-f16');
    expect(probe.limits!.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(128 * 1024 * 1024);
    expect(probe.storage!.quotaBytes).toBeGreaterThan(0);
  });

  it('refuses a q4f16 model with the reason, and names the q4f32 variant', async () => {
    const v = await checkCatalogModel('Qwen2.5-Coder-1.5B-Instruct-q4f16_1-MLC');
    expect(v.canRun).toBe(false);
    expect(v.adapter).toBe('google swiftshader');
    expect(v.checks.find((c) => c.id === 'features')).toMatchObject({
      status: 'fail',
      text: expect.stringContaining('shader-f16'),
    });
    expect(v.alternative).toEqual({
      id: 'Qwen2.5-Coder-1.5B-Instruct-q4f32_1-MLC',
      reason: 'no shader-f16 on this GPU',
    });
    expect(v.summary).toContain('cannot run here. This GPU cannot run 16-bit float shaders (shader-f16)');
  });

  it('accepts the q4f32 variant, saying that the adapter is software and slow', async () => {
    const v = await checkCatalogModel('Qwen2.5-Coder-1.5B-Instruct-q4f32_1-MLC');
    expect(v.canRun).toBe(true);
    expect(v.summary).toMatch(
      /^Qwen2\.5-Coder 1\.5B Instruct \(q4f32_1\) can run here on google swiftshader\. This is a software GPU/,
    );
  });

  it('refuses to load a q4f16 model before downloading anything', async () => {
    let imported = false;
    const e = engine({
      importWebLlm: () => {
        imported = true;
        return import('@mlc-ai/web-llm');
      },
    });
    const err = await rejectionOf(e.load({ id: 'Qwen2.5-Coder-0.5B-Instruct-q4f16_1-MLC' }));
    expect(err).toMatchObject({ name: 'EngineError', code: 'UNSUPPORTED' });
    expect(err.message).toContain('This GPU cannot run 16-bit float shaders (shader-f16)');
    expect(imported).toBe(false);
    expect(e.lastVerdict!.canRun).toBe(false);
  });
});

describe('custom WebLLM checkpoints from a local URL', () => {
  const fixture = () =>
    customModelRecord(
      {
        modelUrl: new URL('resolve/main/', FIXTURE).pathname,
        modelLibUrl: new URL('model-lib.wasm', FIXTURE).pathname,
        id: 'mlc-incomplete',
      },
      location.href,
    );

  it('fails with a clear message naming the missing weight shard and its URL', async () => {
    const { record } = fixture();
    const e = engine();
    const ref = e.addCustomModel(record);
    const err = await rejectionOf(e.load(ref));
    expect(err.code).toBe('MODEL_MISSING');
    // A static server answers 404; Vite's dev server answers its HTML page, which is caught too.
    const shard = new URL('resolve/main/params_shard_0.bin', FIXTURE).href;
    expect([
      `mlc-incomplete: the model folder is incomplete: weight shard params_shard_0.bin is missing at ${shard} (HTTP 404).`,
      `mlc-incomplete: the model folder is incomplete: weight shard params_shard_0.bin is missing at ${shard} (a web page instead of the file).`,
    ]).toContain(err.message);
  });

  it("without the preflight, web-llm's own worker path fails on the bad model library with a clear error", async () => {
    const { record } = fixture();
    const e = engine({ preflight: false });
    const err = await rejectionOf(e.load(e.addCustomModel(record)));
    expect(err.code).toBe('MODEL_REJECTED');
    expect(err.message).toMatch(
      /^mlc-incomplete: The model library \(\.wasm\) could not be loaded: it is not a valid web-llm model library/,
    );
  });
});

describe("offline import into web-llm's cache", () => {
  const json = (v: unknown) => new Blob([JSON.stringify(v)], { type: 'application/json' });
  const folder = (): LocalFile[] => [
    {
      path: 'my-policy-q4f32_1-MLC/mlc-chat-config.json',
      file: json({ quantization: 'q4f32_1', context_window_size: 2048, tokenizer_files: ['tokenizer.json'] }),
    },
    {
      path: 'my-policy-q4f32_1-MLC/tensor-cache.json',
      file: json({
        records: [
          { dataPath: 'params_shard_0.bin', nbytes: 4096 },
          { dataPath: 'params_shard_1.bin', nbytes: 2048 },
        ],
      }),
    },
    { path: 'my-policy-q4f32_1-MLC/params_shard_0.bin', file: new Blob([new Uint8Array(4096)]) },
    { path: 'my-policy-q4f32_1-MLC/params_shard_1.bin', file: new Blob([new Uint8Array(2048)]) },
    { path: 'my-policy-q4f32_1-MLC/tokenizer.json', file: json({ model: {} }) },
    { path: 'my-policy-q4f32_1-MLC/qwen2-q4f32_1-webgpu.wasm', file: new Blob(['not wasm']) },
  ];

  it('writes the files where web-llm looks for them, so web-llm reports the model cached; lists and deletes it', async () => {
    const webllm = await import('@mlc-ai/web-llm');
    const progress: number[] = [];
    const record = await importLocalModel(folder(), { onProgress: (p) => progress.push(p.doneBytes) });
    expect(record).toEqual({
      id: 'my-policy-q4f32_1-MLC',
      modelUrl: 'https://local-import.invalid/my-policy-q4f32_1-MLC/resolve/main/',
      filesUrl: 'https://local-import.invalid/my-policy-q4f32_1-MLC/resolve/main/',
      modelLibUrl: 'https://local-import.invalid/my-policy-q4f32_1-MLC/lib/qwen2-q4f32_1-webgpu.wasm',
      contextWindow: 2048,
      quantization: 'q4f32_1',
    });
    expect(progress.at(-1)).toBeGreaterThan(6144);
    expect(await webllm.hasModelInCache(record.id, appConfigOf(record))).toBe(true);

    const listed = await listCachedModels([{ id: record.id, filesUrl: record.filesUrl }]);
    const mine = listed.find((m) => m.filesUrl === record.filesUrl)!;
    expect(mine).toMatchObject({ id: record.id, complete: true, imported: true, files: 4 });
    expect(mine.bytes).toBeGreaterThan(6144);

    expect(await deleteCachedModel(record.filesUrl, record.modelLibUrl)).toBe(6);
    expect(await webllm.hasModelInCache(record.id, appConfigOf(record))).toBe(false);
    expect((await listCachedModels()).find((m) => m.filesUrl === record.filesUrl)).toBeUndefined();
  });

  it("is seen and deleted by web-llm's own hasModelInCache / deleteModelAllInfoInCache", async () => {
    const record = await importLocalModel(folder(), { id: 'webllm-delete' });
    expect(await isModelCached(record.id, record)).toBe(true);
    await deleteModel(record.id, record);
    expect(await isModelCached(record.id, record)).toBe(false);
    expect((await listCachedModels()).find((m) => m.filesUrl === record.filesUrl)).toBeUndefined();
    expect(await (await caches.open('webllm/wasm')).match(record.modelLibUrl)).toBeUndefined();
    expect(await (await caches.open('webllm/config')).match(`${record.filesUrl}mlc-chat-config.json`)).toBeUndefined();
  });

  it('loads an imported model from the cache alone: web-llm reaches the model library without any network', async () => {
    const record = await importLocalModel(folder(), { id: 'offline-check' });
    const e = engine();
    const err = await rejectionOf(e.load(e.addCustomModel(record)));
    // The host local-import.invalid cannot be reached: getting as far as compiling the library
    // proves that the config and the library came from the cache.
    expect(err.code).toBe('MODEL_REJECTED');
    expect(err.message).toContain('The model library (.wasm) could not be loaded');
    await deleteCachedModel(record.filesUrl, record.modelLibUrl);
  });

  it('says what is missing from a folder that cannot be imported', async () => {
    const noShard = folder().filter((f) => !f.path.endsWith('params_shard_1.bin'));
    expect((await rejectionOf(importLocalModel(noShard))).message).toBe(
      'my-policy-q4f32_1-MLC/: the folder lacks 1 weight shard(s): params_shard_1.bin',
    );
    const old = folder().map((f) =>
      f.path.endsWith('tensor-cache.json') ? { ...f, path: f.path.replace('tensor-cache', 'ndarray-cache') } : f,
    );
    expect((await rejectionOf(importLocalModel(old))).message).toContain(
      'ndarray-cache.json, the name older MLC builds used',
    );
    const noLib = folder().filter((f) => !f.path.endsWith('.wasm'));
    expect((await rejectionOf(importLocalModel(noLib))).message).toContain(
      'no model library (.wasm) in the folder: choose it too',
    );
    expect((await rejectionOf(importLocalModel([{ path: 'x/readme.txt', file: new Blob(['x']) }]))).message).toContain(
      'no mlc-chat-config.json',
    );
  });
});
