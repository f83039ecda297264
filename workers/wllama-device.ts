/**
 * The GGUF worker's side of the device report (src/core/engine/llama-device.ts): what WebGPU
 * this worker sees before llama.cpp loads, and the few log lines kept as evidence.
 */
import type { WebGpuProbe } from '../src/core/engine/llama-device.ts';

export function evidenceLines(lines: readonly string[]): string[] {
  const layers = lines.filter((l) => l.includes('assigned to device'));
  const rest = lines.filter((l) => !l.includes('assigned to device'));
  return [...layers.slice(0, 2), ...(layers.length > 2 ? [layers.at(-1)!] : []), ...rest.slice(0, 3)].map((l) =>
    l.trim(),
  );
}

/** WebGPU as this worker sees it: the API, an adapter, its features and whether it is a software one. */
export async function probeWebGpu(): Promise<WebGpuProbe> {
  const gpu = (navigator as unknown as { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
  if (!gpu) return { api: false, adapter: false, description: null, features: [], software: false };
  try {
    const adapter = (await gpu.requestAdapter()) as {
      features: Set<string>;
      info?: Record<string, unknown>;
      isFallbackAdapter?: boolean;
    } | null;
    if (!adapter) return { api: true, adapter: false, description: null, features: [], software: false };
    const info = adapter.info ?? {};
    const description =
      ['vendor', 'architecture', 'device', 'description']
        .map((k) => info[k])
        .filter((v) => typeof v === 'string' && v)
        .join(' · ') || null;
    const software =
      adapter.isFallbackAdapter === true || info.isFallbackAdapter === true || /swiftshader/i.test(description ?? '');
    return { api: true, adapter: true, description, features: [...adapter.features].sort(), software };
  } catch {
    return { api: true, adapter: false, description: null, features: [], software: false };
  }
}
