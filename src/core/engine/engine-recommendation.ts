/**
 * The machine check's advice: which engine to run a chosen model on here (MLC on WebGPU, GGUF
 * on WebGPU, GGUF on the CPU, or a server), from the WebGPU probe (adapter, features, limits)
 * and the model's format and size, with the reasons in plain words.
 *
 * The thresholds are stated, not measured per machine: llama.cpp's WebGPU backend needs
 * `shader-f16` (ggml-webgpu.cpp asks its device for it) and storage bindings large enough for
 * a weight tensor (a tensor is at most about a tenth of a GGUF, the embedding or output matrix);
 * a browser tab holds at most about 4 GiB of wasm memory for the CPU engine, and beyond ~2 GiB
 * of weights CPU decoding in the browser is too slow for a benchmark; WebLLM's own verdict
 * (gpu-verdict.ts) decides for MLC folders.
 */
import { describeAdapter, formatBytes, type CapabilityVerdict, type GpuProbe } from './gpu-verdict.ts';
import { WEBGPU_REQUIRED_FEATURE } from './llama-device.ts';

type EngineAdvice = 'mlc-webgpu' | 'gguf-webgpu' | 'gguf-cpu' | 'server';

const ADVICE_LABEL: Record<EngineAdvice, string> = {
  'mlc-webgpu': 'MLC on WebGPU (WebLLM)',
  'gguf-webgpu': 'GGUF on WebGPU (llama.cpp)',
  'gguf-cpu': 'GGUF on the CPU (llama.cpp)',
  server: 'an OpenAI-compatible server (vLLM, SGLang, llama.cpp) or batch files for a cluster',
};

interface ModelChoice {
  format: 'gguf' | 'mlc';
  /** Weights in bytes, when known. */
  bytes: number | null;
  /** For an MLC model: WebLLM's verdict for this machine. */
  webllm?: CapabilityVerdict | null;
}

export interface Recommendation {
  engine: EngineAdvice;
  label: string;
  /** Why, one sentence per reason, in the order they were decided. */
  why: string[];
}

const GiB = 1024 ** 3;
const CPU_COMFORT_BYTES = 2 * GiB;
const BROWSER_MEMORY_BYTES = 4 * GiB;

export function recommendEngine(probe: GpuProbe, model: ModelChoice): Recommendation {
  const why: string[] = [];
  const done = (engine: EngineAdvice): Recommendation => ({ engine, label: ADVICE_LABEL[engine], why });
  const size = model.bytes === null ? 'of unknown size' : `of ${formatBytes(model.bytes)}`;
  const adapter = probe.adapter;
  const gpu = adapter ? describeAdapter(adapter) : null;
  const gpuUsable = !!adapter && !adapter.isFallbackAdapter;
  if (!probe.webgpu) why.push('This browser has no WebGPU.');
  else if (!adapter) why.push('WebGPU gave no adapter (no GPU, or the browser blocks it).');
  else if (adapter.isFallbackAdapter)
    why.push(`The only WebGPU adapter is a software renderer (${gpu}): it runs on the processor.`);

  if (model.format === 'mlc') {
    if (model.webllm?.canRun && gpuUsable) {
      why.push(`WebLLM says the model can run on ${gpu}.`);
      return done('mlc-webgpu');
    }
    if (model.webllm && !model.webllm.canRun) why.push(`WebLLM says it cannot run here: ${model.webllm.summary}`);
    why.push('An MLC model runs only on WebGPU; convert the checkpoint to GGUF for the CPU engine, or serve it.');
    return done('server');
  }

  const tooBig = model.bytes !== null && model.bytes > BROWSER_MEMORY_BYTES;
  if (tooBig) {
    why.push(`The model is ${size}, more than a browser tab holds (about ${formatBytes(BROWSER_MEMORY_BYTES)}).`);
    return done('server');
  }
  if (gpuUsable) {
    const f16 = probe.features.includes(WEBGPU_REQUIRED_FEATURE);
    const binding = probe.limits?.maxStorageBufferBindingSize ?? null;
    const largestTensor = model.bytes === null ? null : model.bytes / 10;
    if (!f16) why.push(`${gpu} lacks ${WEBGPU_REQUIRED_FEATURE}, which llama.cpp's WebGPU backend requires.`);
    else if (binding !== null && largestTensor !== null && largestTensor > binding) {
      why.push(
        `Its storage bindings (${formatBytes(binding)}) are smaller than the model's largest tensors (about ${formatBytes(largestTensor)}).`,
      );
    } else {
      why.push(
        `${gpu} has ${WEBGPU_REQUIRED_FEATURE}${binding !== null ? ` and storage bindings of ${formatBytes(binding)}` : ''}: llama.cpp can put every layer on it.`,
      );
      return done('gguf-webgpu');
    }
  }
  if (model.bytes !== null && model.bytes > CPU_COMFORT_BYTES) {
    why.push(
      `On the CPU a model ${size} decodes at a few tokens per second at best: a server is faster for a benchmark.`,
    );
    return done('server');
  }
  why.push(
    `The CPU engine runs a model ${size}; the GPU layers setting can stay empty (llama.cpp falls back by itself).`,
  );
  return done('gguf-cpu');
}
