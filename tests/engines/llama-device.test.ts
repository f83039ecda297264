import { describe, expect, it } from 'vitest';
import {
  deviceReport,
  isDeviceLogLine,
  parseLlamaDeviceLog,
  type WebGpuProbe,
} from '../../src/core/engine/llama-device.ts';

/**
 * Captured from wllama 3.13 loading stories260K.gguf with n_gpu_layers left to it, in this
 * machine's headless Chromium (SwiftShader adapter): tests/engines/wllama-device.browser.test.ts.
 */
const CPU_LOG = [
  'load_tensors: layer   0 assigned to device CPU, is_swa = 0',
  'load_tensors: layer   1 assigned to device CPU, is_swa = 0',
  'load_tensors: layer   2 assigned to device CPU, is_swa = 0',
  'load_tensors: layer   3 assigned to device CPU, is_swa = 0',
  'load_tensors: layer   4 assigned to device CPU, is_swa = 0',
  'load_tensors: layer   5 assigned to device CPU, is_swa = 0',
  'llama_context: backend_ptrs.size() = 1',
];

/**
 * A WebGPU load as llama.cpp prints it, from its format strings (no GPU here to capture one):
 * "load_tensors: layer %3d assigned to device %s, is_swa = %d" with the WebGPU device's name
 * GGML_WEBGPU_NAME = "WebGPU" (ggml-webgpu.h), "%s: backend_ptrs.size() = %zu" in the
 * llama_context constructor, and ggml_webgpu's "adapter_info: vendor_id: %u | vendor: %s |
 * architecture: %s | device_id: %u | name: %s | device_desc: %s".
 */
const WEBGPU_LOG = [
  'ggml_webgpu: adapter_info: vendor_id: 4318 | vendor: nvidia | architecture: ampere | device_id: 8838 | name: NVIDIA GeForce RTX 3060 | device_desc: D3D12 backend',
  ...[0, 1, 2, 3, 4, 5].map(
    (i) => `load_tensors: layer ${String(i).padStart(3)} assigned to device WebGPU, is_swa = 0`,
  ),
  'load_tensors: offloaded 6/6 layers to GPU',
  'llama_context: backend_ptrs.size() = 2',
];

const swiftshader: WebGpuProbe = {
  api: true,
  adapter: true,
  description: 'google · swiftshader',
  features: ['subgroups', 'timestamp-query'],
  software: true,
};
const rtx: WebGpuProbe = {
  api: true,
  adapter: true,
  description: 'nvidia · ampere',
  features: ['shader-f16', 'subgroups'],
  software: false,
};

describe('llama.cpp device log', () => {
  it('reads a CPU load (real lines from this machine): every layer on CPU, one backend, the missing shader-f16 as the reason', () => {
    const log = parseLlamaDeviceLog(['llama_model_loader: - kv   0: general.architecture str = llama', ...CPU_LOG]);
    expect(log).toEqual({ layers: { CPU: 6 }, backends: 1, webgpuAdapter: null });
    const r = deviceReport(log, swiftshader, Number.MAX_SAFE_INTEGER);
    expect(r).toMatchObject({ device: 'cpu', gpuLayers: 0, totalLayers: 6 });
    expect(r.reason).toBe(
      "the WebGPU adapter (google · swiftshader), a software renderer, lacks shader-f16, which llama.cpp's WebGPU backend requires: llama.cpp registered only its CPU backend (backend_ptrs.size() = 1)",
    );
  });

  it('reads a WebGPU load: every layer on WebGPU, two backends, the adapter line, no reason', () => {
    const log = parseLlamaDeviceLog(WEBGPU_LOG);
    expect(log.layers).toEqual({ WebGPU: 6 });
    expect(log.backends).toBe(2);
    expect(log.webgpuAdapter).toMatch(/^vendor_id: 4318 \| vendor: nvidia .* name: NVIDIA GeForce RTX 3060/);
    expect(deviceReport(log, rtx, Number.MAX_SAFE_INTEGER)).toMatchObject({
      device: 'webgpu',
      gpuLayers: 6,
      totalLayers: 6,
      reason: null,
    });
  });

  it('does not trust "offloaded N/M layers to GPU": with only CPU layers it is still the CPU', () => {
    const r = deviceReport(parseLlamaDeviceLog(['load_tensors: offloaded 6/6 layers to GPU', ...CPU_LOG]), rtx, 99);
    expect(r.device).toBe('cpu');
    expect(r.reason).toMatch(
      /did not use the WebGPU adapter \(nvidia · ampere\) \(backend_ptrs\.size\(\) = 1\); out of GPU memory/,
    );
  });

  it('says why in each fallback: layers set to 0, no WebGPU API, no adapter, part of the layers', () => {
    const log = parseLlamaDeviceLog(CPU_LOG);
    expect(deviceReport(log, rtx, 0).reason).toBe('GPU layers set to 0: the CPU was asked for');
    expect(deviceReport(log, { ...rtx, api: false, adapter: false }, 99).reason).toMatch(
      /no WebGPU \(navigator\.gpu is missing\)/,
    );
    expect(deviceReport(log, { ...rtx, adapter: false }, 99).reason).toMatch(/gave no adapter/);
    const mixed = parseLlamaDeviceLog([...CPU_LOG.slice(0, 2), ...WEBGPU_LOG.slice(3, 7)]);
    expect(deviceReport(mixed, rtx, 4)).toMatchObject({
      device: 'cpu',
      gpuLayers: 4,
      totalLayers: 6,
      reason: '4 of 6 layers on the GPU (4 asked); the rest ran on the CPU',
    });
  });

  it('keeps only the device lines of the debug log', () => {
    expect([...CPU_LOG, ...WEBGPU_LOG].filter(isDeviceLogLine)).toHaveLength(CPU_LOG.length + WEBGPU_LOG.length - 1);
    expect(isDeviceLogLine('llama_model_loader: loaded meta data with 19 key-value pairs')).toBe(false);
  });
});
