/**
 * The GGUF engine's device in headless Chromium with the real stories260K.gguf: with the GPU
 * layers left to the engine (all), llama.cpp is asked for WebGPU; on this machine's SwiftShader
 * adapter (no shader-f16) it registers only its CPU backend, and the engine must say so, read
 * from llama.cpp's own log, with the reason. Greedy tokens are the same as a CPU-only load.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWllamaEngine, type WllamaEngine } from '../../src/adapters/engines/wllama-engine.ts';
import { GREEDY, type Prompt } from '../../src/core/engine/engine.ts';
import { sharedFile } from './shared-files.ts';

let stories: File;
const engines: WllamaEngine[] = [];
const prompt: Prompt = { messages: [{ role: 'user', content: 'Once upon a time' }] };

function engine(gpuLayers: number | 'all'): WllamaEngine {
  const e = createWllamaEngine({ threads: 1, gpuLayers });
  e.addFile('stories260K.gguf', stories);
  engines.push(e);
  return e;
}

beforeAll(async () => {
  stories = await sharedFile('models/stories260K.gguf');
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.unload()));
});

describe('GGUF engine device (wllama, real stories260K.gguf)', () => {
  it('asked for all layers on the GPU, reports the CPU that llama.cpp actually used, and why', async () => {
    const e = engine('all');
    await e.load({ id: 'stories260K.gguf', source: 'file:stories260K.gguf' });
    const d = e.loaded!.device;
    console.log('device report', JSON.stringify({ device: d, webgpu: e.loaded!.webgpu }));
    expect(d.device).toBe('cpu');
    expect(d.totalLayers).toBeGreaterThan(0);
    expect(d.gpuLayers).toBe(0);
    expect(d.backends).toBe(1);
    expect(d.reason).toMatch(/WebGPU|adapter|navigator\.gpu/);
    expect(d.evidence.some((l) => /assigned to device CPU/.test(l))).toBe(true);
    expect(d.evidence.some((l) => /backend_ptrs\.size\(\) = 1/.test(l))).toBe(true);
  }, 120_000);

  it('with 0 GPU layers says the CPU was asked for, and decodes the same greedy tokens', async () => {
    const auto = engine('all');
    await auto.load({ id: 'stories260K.gguf', source: 'file:stories260K.gguf' });
    const [a] = await auto.generate(prompt, { ...GREEDY, maxTokens: 40 });
    const cpu = engine(0);
    await cpu.load({ id: 'stories260K.gguf', source: 'file:stories260K.gguf' });
    expect(cpu.loaded!.device).toMatchObject({ device: 'cpu', reason: 'GPU layers set to 0: the CPU was asked for' });
    const [b] = await cpu.generate(prompt, { ...GREEDY, maxTokens: 40 });
    expect(a!.text.length).toBeGreaterThan(0);
    expect(b!.text).toBe(a!.text);
    console.log('tokens/s', JSON.stringify({ all: (a!.tokensOut! * 1000) / a!.latencyMs, cpu: (b!.tokensOut! * 1000) / b!.latencyMs }));
  }, 120_000);
});
