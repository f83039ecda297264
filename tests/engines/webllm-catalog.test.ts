import { prebuiltAppConfig } from '@mlc-ai/web-llm';
import { describe, expect, it } from 'vitest';
import { WEBLLM_CATALOG } from '../../src/core/engine/webllm-catalog.ts';
import { catalogModelUrl } from '../../src/adapters/engines/webgpu-capability.ts';

describe('WebLLM catalog', () => {
  it('offers Qwen2.5-Coder-Instruct 0.5B, 1.5B, 3B and 7B in q4f16 and q4f32, and general instruct models', () => {
    for (const size of ['0.5B', '1.5B', '3B', '7B']) {
      for (const q of ['q4f16_1', 'q4f32_1'])
        expect(WEBLLM_CATALOG.map((e) => e.id)).toContain(`Qwen2.5-Coder-${size}-Instruct-${q}-MLC`);
    }
    // The prebuilt Qwen3.5 libraries web-llm 0.2.86 ships, in the two sizes a browser GPU holds.
    for (const size of ['0.8B', '2B']) {
      for (const q of ['q4f16_1', 'q4f32_1'])
        expect(WEBLLM_CATALOG.map((e) => e.id)).toContain(`Qwen3.5-${size}-${q}-MLC`);
    }
    expect(WEBLLM_CATALOG.filter((e) => !e.sqlTuned).length).toBeGreaterThanOrEqual(6);
    expect(new Set(WEBLLM_CATALOG.map((e) => e.id)).size).toBe(WEBLLM_CATALOG.length);
  });

  it.each(WEBLLM_CATALOG.map((e) => [e.id, e] as const))("%s matches web-llm 0.2.86's prebuilt record", (id, entry) => {
    const record = prebuiltAppConfig.model_list.find((m) => m.model_id === id);
    expect(record).toBeDefined();
    expect(entry.vramMB).toBe(record!.vram_required_MB);
    expect(entry.contextWindow).toBe(record!.overrides?.context_window_size);
    expect(entry.lowResource).toBe(record!.low_resource_required);
    expect(entry.webllmRequiredFeatures).toEqual(record!.required_features ?? []);
    expect(catalogModelUrl(entry)).toBe(record!.model);
    expect(id).toContain(entry.quantization);
  });

  it('marks every q4f16 model as needing shader-f16 and pairs it with its q4f32 variant', () => {
    for (const e of WEBLLM_CATALOG) {
      expect(e.requiredFeatures).toEqual(e.quantization === 'q4f16_1' ? ['shader-f16'] : []);
      const alt = WEBLLM_CATALOG.find((x) => x.id === e.alternative)!;
      expect(alt.alternative).toBe(e.id);
      expect(alt.title).toBe(e.title);
      expect(alt.quantization).not.toBe(e.quantization);
    }
  });
});
