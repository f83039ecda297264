/**
 * The WebLLM engine's own logic (sampling loop, streaming, seeds, abort, error mapping, the
 * capability gate) over a scripted stand-in for web-llm, since no GPU model can run here. The
 * real web-llm worker path is exercised in webllm.browser.test.ts up to the model library.
 */
import { describe, expect, it } from 'vitest';
import { createWebLlmEngine } from '../../src/adapters/engines/webllm-engine.ts';
import { GREEDY, type Prompt } from '../../src/core/engine/engine.ts';
import type { GpuProbe } from '../../src/core/engine/gpu-verdict.ts';
import { engineContract } from './contract.ts';

const GiB = 1024 ** 3;
const gpu = (features: string[]): GpuProbe => ({
  webgpu: true,
  adapter: { vendor: 'test', architecture: 'gpu', device: '', description: '', isFallbackAdapter: false },
  features,
  limits: {
    maxBufferSize: GiB,
    maxStorageBufferBindingSize: GiB,
    maxComputeWorkgroupStorageSize: 32768,
    maxStorageBuffersPerShaderStage: 10,
  },
  storage: { quotaBytes: 100 * GiB, usageBytes: 0 },
});

interface Script {
  /** Error thrown by create() for the k-th request, if any. */
  failAt?: Map<number, Error>;
  /** Delay between chunks, in ms. */
  delayMs?: number;
}

/** A web-llm module whose engine streams "SELECT <seed>;" in three chunks. */
function fakeWebLlm(script: Script = {}) {
  const requests: Array<Record<string, unknown>> = [];
  const calls = { interrupts: 0, unloads: 0, imports: 0, progress: 0 };
  let interrupted = false;
  const engine = {
    chat: {
      completions: {
        async create(req: Record<string, unknown>) {
          requests.push(req);
          const fail = script.failAt?.get(requests.length - 1);
          if (fail) throw fail;
          interrupted = false;
          const text = `\`\`\`sql\nSELECT ${String(req.seed ?? 'x')};\n\`\`\``;
          const pieces = [text.slice(0, 6), text.slice(6, 14), text.slice(14)];
          return (async function* () {
            for (const p of pieces) {
              if (script.delayMs) await new Promise((r) => setTimeout(r, script.delayMs));
              if (interrupted) {
                yield { choices: [{ delta: {}, finish_reason: 'abort', logprobs: null }] };
                return;
              }
              yield {
                choices: [
                  {
                    delta: { content: p },
                    finish_reason: null,
                    logprobs: req.logprobs ? { content: [{ logprob: -0.2 }] } : null,
                  },
                ],
              };
            }
            yield { choices: [{ delta: {}, finish_reason: 'stop', logprobs: null }] };
            yield { choices: [], usage: { prompt_tokens: 30, completion_tokens: 9 } };
          })();
        },
      },
    },
    async interruptGenerate() {
      calls.interrupts++;
      interrupted = true;
    },
    async unload() {
      calls.unloads++;
    },
  };
  const module = {
    prebuiltAppConfig: {
      model_list: [
        {
          model: 'https://huggingface.co/mlc-ai/Qwen2.5-Coder-0.5B-Instruct-q4f32_1-MLC',
          model_id: 'Qwen2.5-Coder-0.5B-Instruct-q4f32_1-MLC',
          model_lib: 'lib.wasm',
          overrides: { context_window_size: 4096 },
        },
        {
          model: 'https://huggingface.co/mlc-ai/Qwen2.5-Coder-0.5B-Instruct-q4f16_1-MLC',
          model_id: 'Qwen2.5-Coder-0.5B-Instruct-q4f16_1-MLC',
          model_lib: 'lib16.wasm',
        },
      ],
    },
    async CreateWebWorkerMLCEngine(
      _w: unknown,
      _id: string,
      cfg: { appConfig: { model_list: Array<Record<string, unknown>> }; initProgressCallback: (r: unknown) => void },
    ) {
      cfg.initProgressCallback({ progress: 0.5, timeElapsed: 1, text: 'Fetching param cache[1/2]' });
      calls.progress++;
      lastAppConfig = cfg.appConfig;
      return engine;
    },
  };
  let lastAppConfig: { model_list: Array<Record<string, unknown>> } | null = null;
  const make = (features = ['shader-f16']) =>
    createWebLlmEngine({
      probe: async () => gpu(features),
      spawn: () => ({ terminate() {} }) as unknown as Worker,
      importWebLlm: async () => {
        calls.imports++;
        return module as unknown as typeof import('@mlc-ai/web-llm');
      },
    });
  return { make, requests, calls, appConfig: () => lastAppConfig };
}

const prompt: Prompt = {
  messages: [
    { role: 'system', content: 'SQL only.' },
    { role: 'user', content: 'How many?' },
  ],
  questionId: 3,
};
const Q32 = { id: 'Qwen2.5-Coder-0.5B-Instruct-q4f32_1-MLC' };
const Q16 = { id: 'Qwen2.5-Coder-0.5B-Instruct-q4f16_1-MLC' };

engineContract('WebLLM engine over a scripted web-llm (no GPU on this machine)', () => ({
  create: () => fakeWebLlm().make(),
  model: Q32,
  prompt,
  expectedRules: ['fenced-sql-last'],
}));

describe('WebLLM engine logic', () => {
  it('streams each sample with seed + i, usage and mean logprob, and sends the sampling parameters', async () => {
    const f = fakeWebLlm();
    const e = f.make();
    const progress: string[] = [];
    await e.load(Q32, { onProgress: (p) => progress.push(p.text) });
    expect(progress).toEqual(['checking this GPU', 'Fetching param cache[1/2]']);
    expect(e.contextWindow()).toBe(4096);
    const pieces: Array<[number, string]> = [];
    const out = await e.generate(
      prompt,
      { ...GREEDY, n: 2, seed: 7, temperature: 0.5, topP: 0.9, maxTokens: 99, stop: [';'], logprobs: true },
      { onToken: (i, t) => pieces.push([i, t]) },
    );
    expect(out.map((c) => [c.text, c.seed, c.tokensIn, c.tokensOut, c.finishReason])).toEqual([
      ['```sql\nSELECT 7', 7, 30, 9, 'stop'],
      ['```sql\nSELECT 8', 8, 30, 9, 'stop'],
    ]);
    for (const c of out) expect(c.meanLogprob).toBeCloseTo(-0.2, 10);
    expect(
      pieces
        .filter(([i]) => i === 1)
        .map(([, t]) => t)
        .join(''),
    ).toBe('```sql\nSELECT 8;\n```');
    expect(f.requests[0]).toMatchObject({
      temperature: 0.5,
      top_p: 0.9,
      max_tokens: 99,
      stop: [';'],
      seed: 7,
      stream: true,
      logprobs: true,
      messages: prompt.messages,
    });
  });

  it('reports WebGPU on the adapter its capability check saw while a model is loaded, and no device before or after', async () => {
    const e = fakeWebLlm().make();
    expect(e.device()).toBeNull();
    await e.load(Q32);
    expect(e.device()).toEqual({ device: 'webgpu', reason: null, detail: 'test gpu' });
    await e.unload();
    expect(e.device()).toBeNull();
  });

  it('names a software adapter (SwiftShader) as such in its device', async () => {
    const e = createWebLlmEngine({
      probe: async () => ({
        ...gpu([]),
        adapter: {
          vendor: 'google',
          architecture: 'swiftshader',
          device: '',
          description: 'SwiftShader Device (Subzero)',
          isFallbackAdapter: true,
        },
      }),
      spawn: () => ({ terminate() {} }) as unknown as Worker,
      importWebLlm: async () =>
        ({
          prebuiltAppConfig: { model_list: [{ model: 'm', model_id: Q32.id, model_lib: 'lib.wasm' }] },
          CreateWebWorkerMLCEngine: async () => ({ unload: async () => {} }),
        }) as unknown as typeof import('@mlc-ai/web-llm'),
    });
    await e.load(Q32);
    expect(e.device()).toEqual({
      device: 'webgpu',
      reason: null,
      detail: 'google swiftshader (SwiftShader Device (Subzero)), a software (fallback) adapter',
    });
  });

  it('makes shader-f16 explicit in the record of a q4f16 model, which web-llm itself omits', async () => {
    const f = fakeWebLlm();
    await f.make(['shader-f16']).load(Q16);
    expect(f.appConfig()!.model_list[0]!.required_features).toEqual(['shader-f16']);
  });

  it('refuses a q4f16 model on a GPU without shader-f16 before importing web-llm', async () => {
    const f = fakeWebLlm();
    await expect(f.make([]).load(Q16)).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining('Choose the q4f32_1 variant'),
    });
    expect(f.calls.imports).toBe(0);
  });

  it('rejects with GPU_LOST when the device is lost mid-run, and needs a new load after it', async () => {
    const f = fakeWebLlm({
      failAt: new Map([[1, new Error('Device was lost. This can happen due to insufficient memory')]]),
    });
    const e = f.make();
    await e.load(Q32);
    await expect(e.generate(prompt, { ...GREEDY, n: 3 })).rejects.toMatchObject({
      code: 'GPU_LOST',
      message: expect.stringContaining('reload the page and resume the run'),
    });
    await expect(e.generate(prompt, GREEDY)).rejects.toMatchObject({ code: 'NOT_LOADED' });
  });

  it('reads a "model not loaded" from web-llm after a successful load as a lost GPU', async () => {
    const notLoaded = Object.assign(new Error('Model not loaded before trying to complete ChatCompletionRequest.'), {
      name: 'ModelNotLoadedError',
    });
    const e = fakeWebLlm({ failAt: new Map([[0, notLoaded]]) }).make();
    await e.load(Q32);
    await expect(e.generate(prompt, GREEDY)).rejects.toMatchObject({ code: 'GPU_LOST' });
  });

  it('turns other failures into error samples and goes on', async () => {
    const e = fakeWebLlm({ failAt: new Map([[0, new Error('prompt too long for the context window')]]) }).make();
    await e.load(Q32);
    const out = await e.generate(prompt, { ...GREEDY, n: 2, seed: 1 });
    expect(out[0]).toMatchObject({
      finishReason: 'error',
      error: 'question 3: prompt too long for the context window',
      seed: 1,
    });
    expect(out[1]).toMatchObject({ finishReason: 'stop', seed: 2 });
  });

  it('interrupts through the signal and marks the rest aborted', async () => {
    const f = fakeWebLlm({ delayMs: 30 });
    const e = f.make();
    await e.load(Q32);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 40);
    const out = await e.generate(prompt, { ...GREEDY, n: 3 }, { signal: controller.signal });
    expect(out.map((c) => c.finishReason)).toEqual(['abort', 'abort', 'abort']);
    expect(f.calls.interrupts).toBe(1);
  });
});
