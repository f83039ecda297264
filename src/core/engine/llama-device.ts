/**
 * Which device ran a GGUF model, read from llama.cpp's own log rather than assumed from the
 * settings. llama.cpp says it only in lines like these (format strings of llama.cpp's
 * src/llama-model.cpp, src/llama-context.cpp and ggml/src/ggml-webgpu/ggml-webgpu.cpp):
 *
 *   load_tensors: layer   0 assigned to device CPU, is_swa = 0          (LLAMA_LOG_DEBUG)
 *   load_tensors: layer   0 assigned to device WebGPU, is_swa = 0
 *   llama_context: backend_ptrs.size() = 1                              (LLAMA_LOG_DEBUG)
 *   ggml_webgpu: adapter_info: vendor_id: 4203 | vendor: apple | architecture: metal-3 | ...
 *
 * `offloaded N/M layers to GPU` is not used: it repeats the requested count even when no GPU
 * backend registered. The per-layer lines are the authority; the backend count and the adapter
 * line confirm them.
 */

type LlamaDevice = 'webgpu' | 'cpu';

interface LlamaDeviceLog {
  /** Layers per device name as llama.cpp assigned them (`CPU`, `WebGPU`). */
  layers: Record<string, number>;
  /** `backend_ptrs.size()`: 1 is the CPU backend alone. */
  backends: number | null;
  /** ggml_webgpu's adapter line: vendor, architecture and description, when the backend started. */
  webgpuAdapter: string | null;
}

const LAYER = /assigned to device (\S+?),/;
const BACKENDS = /backend_ptrs\.size\(\) = (\d+)/;
const ADAPTER = /ggml_webgpu: adapter_info: (.*)$/;

/** True for the lines `parseLlamaDeviceLog` reads: the worker keeps only these. */
export function isDeviceLogLine(line: string): boolean {
  return LAYER.test(line) || BACKENDS.test(line) || ADAPTER.test(line);
}

export function parseLlamaDeviceLog(lines: readonly string[]): LlamaDeviceLog {
  const out: LlamaDeviceLog = { layers: {}, backends: null, webgpuAdapter: null };
  for (const line of lines) {
    const layer = LAYER.exec(line);
    if (layer) out.layers[layer[1]!] = (out.layers[layer[1]!] ?? 0) + 1;
    const backends = BACKENDS.exec(line);
    if (backends) out.backends = Number(backends[1]);
    const adapter = ADAPTER.exec(line);
    if (adapter) out.webgpuAdapter = adapter[1]!.trim();
  }
  return out;
}

/** What the page saw of WebGPU before loading (navigator.gpu in the engine's worker). */
export interface WebGpuProbe {
  /** navigator.gpu exists. */
  api: boolean;
  /** requestAdapter() returned an adapter. */
  adapter: boolean;
  /** Adapter description (vendor, architecture, device), when there is one. */
  description: string | null;
  features: string[];
  /** GPUAdapterInfo.isFallbackAdapter, or a SwiftShader description. */
  software: boolean;
}

export interface DeviceReport {
  /** The device the model's layers ran on; `cpu` when any layer stayed on the CPU. */
  device: LlamaDevice;
  /** Layers on the GPU / in all, from the log; null when the log said nothing. */
  gpuLayers: number | null;
  totalLayers: number | null;
  /** Why the CPU ran it (null when the GPU did): no adapter, a missing feature, layers set to 0... */
  reason: string | null;
  log: LlamaDeviceLog;
}

/** llama.cpp's WebGPU backend asks its device for this feature (ggml-webgpu.cpp). */
export const WEBGPU_REQUIRED_FEATURE = 'shader-f16';

/**
 * The device that ran and, on the CPU, why: from the log, the page's WebGPU probe and the
 * layer count asked for (`requestedGpuLayers` 0 = CPU asked).
 */
export function deviceReport(log: LlamaDeviceLog, probe: WebGpuProbe | null, requestedGpuLayers: number): DeviceReport {
  const total = Object.values(log.layers).reduce((a, b) => a + b, 0);
  const gpu = Object.entries(log.layers)
    .filter(([d]) => d !== 'CPU')
    .reduce((a, [, n]) => a + n, 0);
  const totalLayers = total > 0 ? total : null;
  const gpuLayers = total > 0 ? gpu : null;
  const onGpu = total > 0 ? gpu === total : log.backends !== null && log.backends > 1;
  const report = (reason: string | null): DeviceReport => ({
    device: onGpu && reason === null ? 'webgpu' : 'cpu',
    gpuLayers,
    totalLayers,
    reason,
    log,
  });
  if (onGpu) return report(null);
  if (gpu > 0)
    return report(`${gpu} of ${total} layers on the GPU (${requestedGpuLayers} asked); the rest ran on the CPU`);
  if (requestedGpuLayers === 0) return report('GPU layers set to 0: the CPU was asked for');
  if (!probe || !probe.api) return report('this browser offers no WebGPU (navigator.gpu is missing)');
  if (!probe.adapter) return report('the browser has WebGPU but gave no adapter (GPU blocklisted or disabled)');
  const name = probe.description ? ` (${probe.description})` : '';
  if (!probe.features.includes(WEBGPU_REQUIRED_FEATURE)) {
    return report(
      `the WebGPU adapter${name}${probe.software ? ', a software renderer,' : ''} lacks ${WEBGPU_REQUIRED_FEATURE}, which llama.cpp's WebGPU backend requires: llama.cpp registered only its CPU backend${log.backends !== null ? ` (backend_ptrs.size() = ${log.backends})` : ''}`,
    );
  }
  return report(
    `llama.cpp did not use the WebGPU adapter${name}${log.backends !== null ? ` (backend_ptrs.size() = ${log.backends})` : ''}; out of GPU memory or an unsupported model type`,
  );
}
