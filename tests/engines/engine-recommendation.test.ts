import { describe, expect, it } from 'vitest';
import { recommendEngine } from '../../src/core/engine/engine-recommendation.ts';
import type { CapabilityVerdict, GpuProbe } from '../../src/core/engine/gpu-verdict.ts';

const MiB = 1024 * 1024;
const limits = {
  maxBufferSize: 2048 * MiB,
  maxStorageBufferBindingSize: 1024 * MiB,
  maxComputeWorkgroupStorageSize: 32768,
  maxStorageBuffersPerShaderStage: 10,
};
/** This machine's headless Chromium: SwiftShader, no shader-f16 (features as probed by the wllama worker). */
const swiftshader: GpuProbe = {
  webgpu: true,
  adapter: { vendor: 'google', architecture: 'swiftshader', device: '', description: '', isFallbackAdapter: true },
  features: ['subgroups', 'timestamp-query', 'float32-filterable'],
  limits,
  storage: null,
};
const rtx: GpuProbe = {
  webgpu: true,
  adapter: { vendor: 'nvidia', architecture: 'ampere', device: '', description: 'RTX 3060', isFallbackAdapter: false },
  features: ['shader-f16', 'subgroups'],
  limits,
  storage: null,
};
const noF16: GpuProbe = { ...rtx, features: ['subgroups'] };
const verdict = (canRun: boolean): CapabilityVerdict => ({
  canRun,
  adapter: 'nvidia ampere',
  checks: [],
  summary: canRun ? 'can run' : 'needs shader-f16',
  alternative: null,
});

describe('engine recommendation for a model', () => {
  it('on a software adapter recommends GGUF on the CPU for a small model, saying why', () => {
    const r = recommendEngine(swiftshader, { format: 'gguf', bytes: 1_185_376 });
    expect(r.engine).toBe('gguf-cpu');
    expect(r.why[0]).toMatch(/software renderer \(google swiftshader\)/);
  });

  it('recommends GGUF on WebGPU on a GPU with shader-f16, and the CPU when it lacks it', () => {
    expect(recommendEngine(rtx, { format: 'gguf', bytes: 500 * MiB })).toMatchObject({
      engine: 'gguf-webgpu',
      label: 'GGUF on WebGPU (llama.cpp)',
    });
    const r = recommendEngine(noF16, { format: 'gguf', bytes: 500 * MiB });
    expect(r.engine).toBe('gguf-cpu');
    expect(r.why.join(' ')).toMatch(/lacks shader-f16/);
  });

  it('sends a model too big for a tab, or too slow on the CPU, to a server', () => {
    expect(recommendEngine(rtx, { format: 'gguf', bytes: 20 * 1024 * MiB }).why.join(' ')).toMatch(
      /more than a browser tab holds/,
    );
    expect(recommendEngine(rtx, { format: 'gguf', bytes: 20 * 1024 * MiB }).engine).toBe('server');
    expect(recommendEngine(swiftshader, { format: 'gguf', bytes: 3 * 1024 * MiB }).engine).toBe('server');
  });

  it("refuses WebGPU when the model's tensors exceed the storage binding limit", () => {
    const small = { ...rtx, limits: { ...limits, maxStorageBufferBindingSize: 128 * MiB } };
    const r = recommendEngine(small, { format: 'gguf', bytes: 3500 * MiB });
    expect(r.why.join(' ')).toMatch(/storage bindings \(128 MB\) are smaller/);
    expect(r.engine).toBe('server');
  });

  it("follows WebLLM's verdict for an MLC model", () => {
    expect(recommendEngine(rtx, { format: 'mlc', bytes: null, webllm: verdict(true) }).engine).toBe('mlc-webgpu');
    const r = recommendEngine(rtx, { format: 'mlc', bytes: null, webllm: verdict(false) });
    expect(r.engine).toBe('server');
    expect(r.why.join(' ')).toMatch(/WebLLM says it cannot run here: needs shader-f16/);
    expect(recommendEngine(swiftshader, { format: 'mlc', bytes: null, webllm: verdict(true) }).engine).toBe('server');
  });
});
