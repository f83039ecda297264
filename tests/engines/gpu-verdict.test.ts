import { describe, expect, it } from 'vitest';
import { catalogNeeds } from '../../src/adapters/engines/webgpu-capability.ts';
import { WEBLLM_CATALOG } from '../../src/core/engine/webllm-catalog.ts';
import { gpuVerdict, type GpuProbe } from '../../src/core/engine/gpu-verdict.ts';

const GiB = 1024 ** 3;
/** What headless Chromium with --enable-unsafe-webgpu reports here (BROWSER_LAB.md section 2). */
const swiftshader: GpuProbe = {
  webgpu: true,
  adapter: { vendor: 'google', architecture: 'swiftshader', device: '', description: '', isFallbackAdapter: true },
  features: ['bgra8unorm-storage', 'float32-filterable', 'subgroups', 'timestamp-query'],
  limits: {
    maxBufferSize: GiB,
    maxStorageBufferBindingSize: GiB,
    maxComputeWorkgroupStorageSize: 32768,
    maxStorageBuffersPerShaderStage: 10,
  },
  storage: { quotaBytes: 20 * GiB, usageBytes: 0 },
};
const realGpu: GpuProbe = {
  ...swiftshader,
  adapter: {
    vendor: 'nvidia',
    architecture: 'ampere',
    device: '',
    description: 'NVIDIA RTX 3060',
    isFallbackAdapter: false,
  },
  features: [...swiftshader.features, 'shader-f16'],
};
const needs = (id: string, extra = {}) =>
  catalogNeeds(
    WEBLLM_CATALOG.find((e) => e.id === id)!,
    extra,
  );

describe('GPU capability verdict', () => {
  it('refuses a q4f16 model on an adapter without shader-f16, says why, and offers the q4f32 variant', () => {
    const v = gpuVerdict(swiftshader, needs('Qwen2.5-Coder-1.5B-Instruct-q4f16_1-MLC'));
    expect(v.canRun).toBe(false);
    expect(v.adapter).toBe('google swiftshader');
    expect(v.alternative).toEqual({
      id: 'Qwen2.5-Coder-1.5B-Instruct-q4f32_1-MLC',
      reason: 'no shader-f16 on this GPU',
    });
    expect(v.summary).toBe(
      'Qwen2.5-Coder 1.5B Instruct (q4f16_1) cannot run here. This GPU cannot run 16-bit float shaders (shader-f16), which q4f16_1 models need. ' +
        'Choose the q4f32_1 variant, Qwen2.5-Coder 1.5B Instruct (Qwen2.5-Coder-1.5B-Instruct-q4f32_1-MLC), which does not need it.',
    );
  });

  it('accepts the q4f32 variant on the software adapter, warning that it is slow', () => {
    const v = gpuVerdict(swiftshader, needs('Qwen2.5-Coder-1.5B-Instruct-q4f32_1-MLC'));
    expect(v.canRun).toBe(true);
    expect(v.alternative).toBeNull();
    expect(v.summary).toMatch(
      /^Qwen2\.5-Coder 1\.5B Instruct \(q4f32_1\) can run here on google swiftshader\. This is a software GPU .*\(seconds per token\)/,
    );
    expect(v.checks.map((c) => [c.id, c.status])).toEqual([
      ['webgpu', 'pass'],
      ['adapter', 'pass'],
      ['software', 'warn'],
      ['limits', 'pass'],
      ['memory', 'pass'],
      ['storage', 'pass'],
    ]);
  });

  it('accepts a q4f16 model on a GPU with shader-f16', () => {
    const v = gpuVerdict(realGpu, needs('Qwen2.5-Coder-7B-Instruct-q4f16_1-MLC'));
    expect(v.canRun).toBe(true);
    expect(v.summary).toMatch(
      /^Qwen2\.5-Coder 7B Instruct \(q4f16_1\) can run here on nvidia ampere \(NVIDIA RTX 3060\)\. The model needs about 5\.0 GB of GPU memory/,
    );
  });

  it('says plainly when the browser has no WebGPU or no adapter', () => {
    expect(
      gpuVerdict({ ...swiftshader, webgpu: false, adapter: null }, needs('SmolLM2-360M-Instruct-q4f32_1-MLC')).summary,
    ).toBe(
      'SmolLM2 360M Instruct (q4f32_1) cannot run here. This browser has no WebGPU. Use a recent Chrome or Edge, or run GGUF models on the CPU engine.',
    );
    const none = gpuVerdict(
      { ...swiftshader, adapter: null, limits: null, features: [] },
      needs('SmolLM2-360M-Instruct-q4f32_1-MLC'),
    );
    expect(none.canRun).toBe(false);
    expect(none.summary).toContain('WebGPU found no usable GPU');
  });

  it('refuses a GPU whose limits are below what web-llm requires', () => {
    const small = {
      ...realGpu,
      limits: { ...realGpu.limits!, maxStorageBufferBindingSize: 64 * 1024 * 1024, maxStorageBuffersPerShaderStage: 8 },
    };
    const v = gpuVerdict(small, needs('SmolLM2-360M-Instruct-q4f32_1-MLC'));
    expect(v.canRun).toBe(false);
    expect(v.summary).toContain(
      'This GPU is too limited for WebLLM: it lacks storage bindings of 128 MiB, 10 storage buffers per shader stage.',
    );
  });

  it('checks a stated buffer requirement against the storage binding limit', () => {
    const n = { ...needs('SmolLM2-360M-Instruct-q4f32_1-MLC'), bufferSizeRequiredBytes: 2 * GiB };
    expect(gpuVerdict(swiftshader, n).summary).toContain(
      'The model needs GPU buffers of 2.0 GB; this GPU allows 1.0 GB.',
    );
  });

  it('refuses a download larger than the free storage, warns when close, and skips the check for a cached model', () => {
    const tight = { ...realGpu, storage: { quotaBytes: 2 * GiB, usageBytes: 1.9 * GiB } };
    const v = gpuVerdict(tight, needs('Qwen2.5-Coder-1.5B-Instruct-q4f16_1-MLC'));
    expect(v.canRun).toBe(false);
    expect(v.summary).toMatch(/The download is about 866 MB but this site may only store 102 MB more\./);
    const close = gpuVerdict(
      { ...realGpu, storage: { quotaBytes: GiB, usageBytes: 0 } },
      needs('Qwen2.5-Coder-1.5B-Instruct-q4f16_1-MLC'),
    );
    expect(close.checks.find((c) => c.id === 'storage')!.status).toBe('warn');
    const cached = gpuVerdict(tight, needs('Qwen2.5-Coder-1.5B-Instruct-q4f16_1-MLC', { cached: true }));
    expect(cached.canRun).toBe(true);
    expect(cached.checks.find((c) => c.id === 'storage')!.text).toBe(
      'The model is already downloaded in this browser.',
    );
  });

  it('uses an exact download size when it was measured', () => {
    const v = gpuVerdict(realGpu, needs('Qwen2.5-Coder-0.5B-Instruct-q4f16_1-MLC', { downloadBytes: 289_000_000 }));
    expect(v.checks.find((c) => c.id === 'storage')!.text).toMatch(/^The download is 276 MB;/);
  });

  it('warns that big models may exhaust GPU memory, which the browser cannot measure', () => {
    const v = gpuVerdict(realGpu, needs('Qwen2.5-Coder-7B-Instruct-q4f32_1-MLC'));
    expect(v.checks.find((c) => c.id === 'memory')).toMatchObject({ status: 'warn' });
    expect(v.canRun).toBe(true);
  });
});
