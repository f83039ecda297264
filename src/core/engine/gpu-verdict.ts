/**
 * Can this machine run this WebLLM model? Decided before anything is downloaded, from a
 * probe of the browser (WebGPU adapter, its features and limits, the storage quota) and what
 * the model needs. The verdict is a list of checks and one summary in plain words; when the
 * only obstacle is shader-f16, it names the q4f32 variant to pick instead.
 *
 * The limits are the ones web-llm 0.2.86 itself insists on when it opens the device
 * (detectGPUDevice): buffers of at least 256 MiB, storage bindings of at least 128 MiB,
 * 32 KiB of workgroup storage, 10 storage buffers per shader stage. GPU memory cannot be read
 * from a browser, so the model's need is stated, not checked.
 */
interface GpuAdapterInfo {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** A software adapter (SwiftShader): correct but far slower than a GPU. */
  isFallbackAdapter: boolean;
}

interface GpuLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
  maxComputeWorkgroupStorageSize: number;
  maxStorageBuffersPerShaderStage: number;
}

export interface GpuProbe {
  /** `navigator.gpu` exists. */
  webgpu: boolean;
  adapter: GpuAdapterInfo | null;
  features: string[];
  limits: GpuLimits | null;
  /** From navigator.storage.estimate(), or null when the browser does not say. */
  storage: { quotaBytes: number; usageBytes: number } | null;
}

export interface ModelNeeds {
  id: string;
  title: string;
  quantization: string;
  requiredFeatures: string[];
  /** GPU memory the model needs, in MB, when known. */
  vramMB: number | null;
  /** web-llm's buffer_size_required_bytes, when the model states one. */
  bufferSizeRequiredBytes: number | null;
  /** Bytes to download, when known; `downloadExact` says whether it was measured or estimated. */
  downloadBytes: number | null;
  downloadExact: boolean;
  /** The model is already in the browser's cache: nothing to download. */
  cached: boolean;
  /** The same model in a quantization without shader-f16, if there is one. */
  alternative: { id: string; title: string; quantization: string } | null;
}

type CheckId = 'webgpu' | 'adapter' | 'software' | 'limits' | 'buffer' | 'features' | 'memory' | 'storage';

interface CapabilityCheck {
  id: CheckId;
  status: 'pass' | 'warn' | 'fail';
  text: string;
}

export interface CapabilityVerdict {
  canRun: boolean;
  /** `vendor architecture (description)`, or null without an adapter. */
  adapter: string | null;
  checks: CapabilityCheck[];
  /** One or two sentences for the user. */
  summary: string;
  /** The variant to pick instead when this one cannot run for want of shader-f16. */
  alternative: { id: string; reason: string } | null;
}

const MiB = 1024 * 1024;
const WEBLLM_MIN_LIMITS: Array<[keyof GpuLimits, number, string]> = [
  ['maxBufferSize', 256 * MiB, 'buffers of 256 MiB'],
  ['maxStorageBufferBindingSize', 128 * MiB, 'storage bindings of 128 MiB'],
  ['maxComputeWorkgroupStorageSize', 32 * 1024, '32 KiB of workgroup storage'],
  ['maxStorageBuffersPerShaderStage', 10, '10 storage buffers per shader stage'],
];

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
  if (bytes >= MiB) return `${Math.round(bytes / MiB)} MB`;
  return `${Math.round(bytes / 1024)} KB`;
}

export function describeAdapter(a: GpuAdapterInfo): string {
  const name = [a.vendor, a.architecture].filter(Boolean).join(' ') || 'unknown GPU';
  return a.description ? `${name} (${a.description})` : name;
}

export function gpuVerdict(probe: GpuProbe, model: ModelNeeds): CapabilityVerdict {
  const checks: CapabilityCheck[] = [];
  const add = (id: CheckId, status: CapabilityCheck['status'], text: string) => checks.push({ id, status, text });
  const name = `${model.title} (${model.quantization})`;
  let alternative: CapabilityVerdict['alternative'] = null;
  const adapter = probe.adapter ? describeAdapter(probe.adapter) : null;

  if (!probe.webgpu) {
    add(
      'webgpu',
      'fail',
      'This browser has no WebGPU. Use a recent Chrome or Edge, or run GGUF models on the CPU engine.',
    );
  } else if (!probe.adapter) {
    add('webgpu', 'pass', 'The browser supports WebGPU.');
    add(
      'adapter',
      'fail',
      "WebGPU found no usable GPU (none, or blocked by the browser). Run GGUF models on the CPU engine, or check the browser's GPU settings (chrome://gpu).",
    );
  } else {
    add('webgpu', 'pass', 'The browser supports WebGPU.');
    add('adapter', 'pass', `GPU: ${adapter}.`);
    if (probe.adapter.isFallbackAdapter) {
      add(
        'software',
        'warn',
        'This is a software GPU that runs on the processor: models work but very slowly (seconds per token). Fine for trying the pipeline, not for a benchmark.',
      );
    }
    const limits = probe.limits;
    const short = limits ? WEBLLM_MIN_LIMITS.filter(([k, min]) => limits[k] < min) : [];
    if (!limits) add('limits', 'warn', 'The GPU limits could not be read.');
    else if (short.length > 0)
      add(
        'limits',
        'fail',
        `This GPU is too limited for WebLLM: it lacks ${short.map(([, , what]) => what).join(', ')}.`,
      );
    else
      add(
        'limits',
        'pass',
        `Buffer limits are enough (largest storage binding ${formatBytes(limits.maxStorageBufferBindingSize)}).`,
      );
    if (limits && model.bufferSizeRequiredBytes !== null) {
      if (limits.maxStorageBufferBindingSize < model.bufferSizeRequiredBytes) {
        add(
          'buffer',
          'fail',
          `The model needs GPU buffers of ${formatBytes(model.bufferSizeRequiredBytes)}; this GPU allows ${formatBytes(limits.maxStorageBufferBindingSize)}.`,
        );
      } else add('buffer', 'pass', `The model's largest buffer (${formatBytes(model.bufferSizeRequiredBytes)}) fits.`);
    }
    const missing = model.requiredFeatures.filter((f) => !probe.features.includes(f));
    if (missing.includes('shader-f16')) {
      const alt = model.alternative;
      const instead = alt
        ? ` Choose the ${alt.quantization} variant, ${alt.title} (${alt.id}), which does not need it.`
        : '';
      add(
        'features',
        'fail',
        `This GPU cannot run 16-bit float shaders (shader-f16), which ${model.quantization} models need.${instead}`,
      );
      if (alt) alternative = { id: alt.id, reason: 'no shader-f16 on this GPU' };
    }
    const others = missing.filter((f) => f !== 'shader-f16');
    if (others.length > 0)
      add('features', 'fail', `This GPU lacks the feature(s) the model needs: ${others.join(', ')}.`);
    if (missing.length === 0 && model.requiredFeatures.length > 0)
      add('features', 'pass', `The GPU has ${model.requiredFeatures.join(', ')}.`);
  }

  if (model.vramMB !== null) {
    const gb = formatBytes(model.vramMB * MiB);
    add(
      'memory',
      model.vramMB > 4096 ? 'warn' : 'pass',
      model.vramMB > 4096
        ? `The model needs about ${gb} of GPU memory, which browsers cannot check in advance; if loading stops with "device lost", choose a smaller model.`
        : `The model needs about ${gb} of GPU memory (browsers cannot check this in advance).`,
    );
  }

  if (model.cached) add('storage', 'pass', 'The model is already downloaded in this browser.');
  else if (model.downloadBytes === null) add('storage', 'warn', 'The download size is unknown.');
  else if (!probe.storage)
    add(
      'storage',
      'warn',
      `The download is ${model.downloadExact ? '' : 'about '}${formatBytes(model.downloadBytes)}; the browser does not say how much storage is free.`,
    );
  else {
    const free = Math.max(0, probe.storage.quotaBytes - probe.storage.usageBytes);
    const size = `${model.downloadExact ? '' : 'about '}${formatBytes(model.downloadBytes)}`;
    if (model.downloadBytes > free)
      add(
        'storage',
        'fail',
        `The download is ${size} but this site may only store ${formatBytes(free)} more. Free space on the disk, or delete cached models.`,
      );
    else if (model.downloadBytes > 0.8 * free)
      add('storage', 'warn', `The download is ${size}, close to the ${formatBytes(free)} this site may still store.`);
    else add('storage', 'pass', `The download is ${size}; ${formatBytes(free)} of storage is available.`);
  }

  const fails = checks.filter((c) => c.status === 'fail');
  const warns = checks.filter((c) => c.status === 'warn');
  const canRun = fails.length === 0;
  let summary: string;
  if (canRun) {
    summary = `${name} can run here${adapter ? ` on ${adapter}` : ''}.`;
    if (warns.length > 0) summary += ` ${warns.map((w) => w.text).join(' ')}`;
  } else {
    summary = `${name} cannot run here. ${fails.map((f) => f.text).join(' ')}`;
  }
  return { canRun, adapter, checks, summary, alternative };
}
