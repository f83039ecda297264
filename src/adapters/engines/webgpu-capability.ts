/**
 * The capability check run before any WebLLM download: probes the browser (WebGPU adapter as
 * web-llm requests it, features, limits, storage quota) and asks src/core/engine/gpu-verdict.ts
 * whether a catalog or custom model can run, in plain words. Never imports web-llm.
 */
import { gpuVerdict, type CapabilityVerdict, type GpuProbe, type ModelNeeds } from '../../core/engine/gpu-verdict.ts';
import { WEBLLM_CATALOG, type WebLlmCatalogEntry } from '../../core/engine/webllm-catalog.ts';
import type { CustomModelRecord, PreflightResult } from './webllm-custom.ts';
import { WorkbenchError } from '../../core/errors.ts';

type AdapterInfoLike = Partial<GPUAdapterInfo> & { isFallbackAdapter?: boolean };

/** What the browser offers, asked the way web-llm asks (`powerPreference: 'high-performance'`). */
/**
 * `requestAdapter`, asked again twice when it answers null: Chromium answers null while its GPU
 * process is still starting or was restarted, which happens on a busy machine (seen in the test
 * suite on 2 loaded cores); a machine with no adapter answers null three times, 1.5 s later.
 */
async function requestAdapterPatiently(gpu: GPU): Promise<GPUAdapter | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 750));
    const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null);
    if (adapter) return adapter;
  }
  return null;
}

export async function probeGpu(nav: Navigator = navigator): Promise<GpuProbe> {
  let storage: GpuProbe['storage'] = null;
  try {
    const e = await nav.storage?.estimate();
    if (e && typeof e.quota === 'number') storage = { quotaBytes: e.quota, usageBytes: e.usage ?? 0 };
  } catch {
    // storage estimate is optional
  }
  const gpu = (nav as Navigator & { gpu?: GPU }).gpu;
  if (!gpu) return { webgpu: false, adapter: null, features: [], limits: null, storage };
  const adapter = await requestAdapterPatiently(gpu);
  if (!adapter) return { webgpu: true, adapter: null, features: [], limits: null, storage };
  const legacy = adapter as GPUAdapter & {
    requestAdapterInfo?: () => Promise<AdapterInfoLike>;
    isFallbackAdapter?: boolean;
  };
  const info: AdapterInfoLike = legacy.info ?? (await legacy.requestAdapterInfo?.()) ?? {};
  return {
    webgpu: true,
    adapter: {
      vendor: info.vendor ?? '',
      architecture: info.architecture ?? '',
      device: info.device ?? '',
      description: info.description ?? '',
      isFallbackAdapter: info.isFallbackAdapter ?? legacy.isFallbackAdapter ?? false,
    },
    features: [...adapter.features].sort(),
    limits: {
      maxBufferSize: adapter.limits.maxBufferSize,
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize,
      maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage,
    },
    storage,
  };
}

/** Hugging Face folder of a prebuilt model (web-llm's `model` field for every catalog entry). */
export function catalogModelUrl(entry: WebLlmCatalogEntry): string {
  return `https://huggingface.co/mlc-ai/${entry.id}`;
}

/** Where web-llm caches a catalog model's files (the keys `listCachedModels` reports). */
export function catalogFilesUrl(entry: WebLlmCatalogEntry): string {
  return `${catalogModelUrl(entry)}/resolve/main/`;
}

export function catalogNeeds(
  entry: WebLlmCatalogEntry,
  extra: { cached?: boolean; downloadBytes?: number | null } = {},
): ModelNeeds {
  const alt = WEBLLM_CATALOG.find((e) => e.id === entry.alternative);
  const exact = typeof extra.downloadBytes === 'number';
  return {
    id: entry.id,
    title: entry.title,
    quantization: entry.quantization,
    requiredFeatures: entry.requiredFeatures,
    vramMB: entry.vramMB,
    bufferSizeRequiredBytes: null,
    downloadBytes: exact ? extra.downloadBytes! : entry.approxDownloadMB * 1024 * 1024,
    downloadExact: exact,
    cached: extra.cached ?? false,
    alternative:
      alt && alt.requiredFeatures.length < entry.requiredFeatures.length
        ? { id: alt.id, title: alt.title, quantization: alt.quantization }
        : null,
  };
}

/** Needs of a custom checkpoint: f16 quantizations need shader-f16; memory is unknown. */
export function customNeeds(record: CustomModelRecord, preflight: PreflightResult | null, cached = false): ModelNeeds {
  const quantization = preflight?.quantization ?? record.quantization ?? 'unknown quantization';
  return {
    id: record.id,
    title: record.id,
    quantization,
    requiredFeatures: /f16/.test(quantization) ? ['shader-f16'] : [],
    vramMB: null,
    bufferSizeRequiredBytes: null,
    downloadBytes: preflight?.downloadBytes ?? null,
    downloadExact: preflight?.downloadBytes != null,
    cached,
    alternative: null,
  };
}

/**
 * Exact download size of a model folder: the sum of tensor-cache.json's records (a few KB to
 * fetch). Null when it cannot be fetched (offline); the catalog's estimate is used then.
 */
export async function measureDownload(filesUrl: string, fetchFn: typeof fetch = fetch): Promise<number | null> {
  try {
    const res = await fetchFn(new URL('tensor-cache.json', filesUrl).href);
    if (!res.ok) return null;
    const json = (await res.json()) as { records?: Array<{ nbytes?: number }> };
    const total = (json.records ?? []).reduce((n, r) => n + (typeof r.nbytes === 'number' ? r.nbytes : 0), 0);
    return total > 0 ? total : null;
  } catch {
    return null;
  }
}

export interface CatalogCheckOptions {
  probe?: GpuProbe;
  /** Is the model already in web-llm's cache (see webllm-cache.ts)? */
  cached?: boolean;
  /** Fetch tensor-cache.json for the exact download size (default false: use the estimate). */
  measure?: boolean;
}

/** The verdict for a catalog model id. */
export async function checkCatalogModel(id: string, options: CatalogCheckOptions = {}): Promise<CapabilityVerdict> {
  const entry = WEBLLM_CATALOG.find((e) => e.id === id);
  if (!entry)
    throw new WorkbenchError(
      'NOT_FOUND',
      `${id} is not in the WebLLM catalog: choose a model of webllm-catalog.ts or add it as a custom model`,
    );
  const probe = options.probe ?? (await probeGpu());
  const downloadBytes = options.measure && !options.cached ? await measureDownload(catalogFilesUrl(entry)) : null;
  return gpuVerdict(probe, catalogNeeds(entry, { cached: options.cached, downloadBytes }));
}
