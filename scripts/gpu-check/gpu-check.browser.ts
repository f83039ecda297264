/**
 * The GPU check's page (run by scripts/gpu-check.ts in Chromium with a GPU machine's flags):
 * the WebGPU adapter and its features and limits; for each GGUF (the shipped-for-tests
 * stories260K.gguf and any given with --gguf), a load with every layer left to llama.cpp's GPU
 * backend and one on the CPU: the device llama.cpp reports, the reason for a fallback, greedy
 * tokens/s and whether the two devices decode the same greedy text; WebLLM's verdict for each
 * catalog model (no download); the machine check's advice; and a generation run's EX on the
 * demo dataset with the first GGUF. The result goes to stdout as one `GPU_CHECK_JSON` line.
 */
import { transfer } from 'comlink';
import sqlWasmUrl from 'sql.js/dist/sql-wasm-browser.wasm?url';
import { inject, it } from 'vitest';
import { createBrowserSqlPool, memoryDbSource, spawnBrowserSqlWorker } from '../../src/adapters/browser/sql-worker-host.ts';
import { createSqlWorkerSchemaSource } from '../../src/adapters/engines/sql-worker-schema-source.ts';
import { catalogNeeds, probeGpu } from '../../src/adapters/engines/webgpu-capability.ts';
import { WEBLLM_CATALOG } from '../../src/adapters/engines/webllm-catalog.ts';
import { createWllamaEngine } from '../../src/adapters/engines/wllama-engine.ts';
import { GREEDY } from '../../src/core/engine/engine.ts';
import { recommendEngine } from '../../src/core/engine/engine-recommendation.ts';
import { gpuVerdict } from '../../src/core/engine/gpu-verdict.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { loadDatabaseContext } from '../../src/core/prompt/build-prompt.ts';
import { BIRD_MINIDEV_V1 } from '../../src/core/prompt/templates.ts';
import { exWithInterval, remainingJobs, runGeneration } from '../../src/core/run/generation.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute paths of the GGUF files to check. */
    ggufFiles: string[];
    /** Absolute path of public/demo. */
    demoDir: string;
    maxTokens: number;
    /** Leave out the demo generation run (the bench measures tokens/s only). */
    skipDemo: boolean;
  }
}

const fsUrl = (abs: string) => `/@fs${abs}`;
async function file(abs: string): Promise<File> {
  const res = await fetch(fsUrl(abs));
  if (!res.ok) throw new Error(`cannot read ${abs} (HTTP ${res.status})`);
  return new File([await res.blob()], abs.split('/').pop()!);
}

const PROMPT = { messages: [{ role: 'user' as const, content: 'Once upon a time' }] };

async function measure(f: File, gpuLayers: number | 'all', maxTokens: number) {
  const e = createWllamaEngine({ gpuLayers });
  e.addFile(f.name, f);
  const t0 = performance.now();
  try {
    await e.load({ id: f.name, source: `file:${f.name}` });
    const loadMs = performance.now() - t0;
    // The first generation warms llama.cpp up; the second is timed.
    await e.generate(PROMPT, { ...GREEDY, maxTokens: 8 });
    const [c] = await e.generate(PROMPT, { ...GREEDY, maxTokens });
    const info = e.loaded!;
    return {
      ok: true as const, gpuLayers, loadMs: Math.round(loadMs), device: info.device, threads: info.threads,
      tokens: c!.tokensOut, tokensPerSecond: c!.tokensOut && c!.latencyMs ? Math.round((c!.tokensOut * 1000 / c!.latencyMs) * 10) / 10 : null,
      text: c!.text,
    };
  } catch (err) {
    return { ok: false as const, gpuLayers, error: (err as Error).message };
  } finally {
    await e.unload().catch(() => undefined);
  }
}

async function demoRun(f: File, demoDir: string) {
  const text = async (name: string) => (await file(`${demoDir}/${name}`)).text();
  const questions = parseQuestions(await text('questions.json'), 'questions.json');
  const gold = parseGoldSql(await text('gold.sql'), 'gold.sql');
  const dbBytes = new Uint8Array(await (await file(`${demoDir}/city_library/city_library.sqlite`)).arrayBuffer());
  const dbSource = memoryDbSource(new Map([['city_library', dbBytes]]));
  const schemaWorker = spawnBrowserSqlWorker();
  const pool = createBrowserSqlPool(dbSource, 1);
  const e = createWllamaEngine({ gpuLayers: 'all' });
  e.addFile(f.name, f);
  try {
    await e.load({ id: f.name, source: `file:${f.name}` });
    await schemaWorker.api.init({ cacheBytes: 64 * 1024 * 1024, wasmUrl: sqlWasmUrl });
    const source = createSqlWorkerSchemaSource({ api: schemaWorker.api, dbSource, transferBytes: (b) => transfer(b, [b.buffer]) });
    const ctx = await loadDatabaseContext(source, 'city_library', { sampleRows: 0, descriptions: false });
    const indices = questions.map((_, i) => i);
    const stored: SampleRecord[] = [];
    const t0 = performance.now();
    const outcome = await runGeneration(
      { engine: 'wllama', model: { id: f.name }, template: BIRD_MINIDEV_V1, params: { ...GREEDY, maxTokens: 48 } },
      { fence: 'last', rewardFormula: 'ex' },
      remainingJobs({ indices, questions, gold, n: 1 }, new Set()),
      { engine: e, database: async () => ctx, evaluate: (items, signal) => pool.evaluate(items, DEFAULT_EVAL_OPTIONS, { signal }), store: (s) => stored.push(...s) },
      { signal: new AbortController().signal, doneBefore: 0, total: indices.length },
    );
    return { model: f.name, outcome: outcome.kind, questions: indices.length, ms: Math.round(performance.now() - t0), ...exWithInterval(stored), device: stored[0]?.generation?.device ?? null };
  } finally {
    schemaWorker.terminate();
    await pool.dispose();
    await e.unload().catch(() => undefined);
  }
}

it('gpu check', async () => {
  const started = new Date().toISOString();
  const probe = await probeGpu();
  const ggufs = [];
  for (const path of inject('ggufFiles')) {
    const f = await file(path);
    const gpu = await measure(f, 'all', inject('maxTokens'));
    const cpu = await measure(f, 0, inject('maxTokens'));
    const agree = gpu.ok && cpu.ok ? gpu.text === cpu.text : null;
    ggufs.push({
      file: path, bytes: f.size, advice: recommendEngine(probe, { format: 'gguf', bytes: f.size }),
      gpuLayersAll: gpu, gpuLayers0: cpu,
      greedyAgreement: agree === null ? null : {
        same: agree,
        devices: [gpu.ok ? gpu.device.device : null, cpu.ok ? cpu.device.device : null],
        note: gpu.ok && gpu.device.device === 'cpu' ? 'only the CPU backend ran: both loads decoded on the CPU' : null,
      },
    });
  }
  const webllm = WEBLLM_CATALOG.map((entry) => {
    const v = gpuVerdict(probe, catalogNeeds(entry));
    return { id: entry.id, canRun: v.canRun, summary: v.summary, advice: recommendEngine(probe, { format: 'mlc', bytes: null, webllm: v }).label };
  });
  const first = inject('ggufFiles')[0];
  const generation = first && !inject('skipDemo') ? await demoRun(await file(first), inject('demoDir')).catch((err: Error) => ({ error: err.message })) : null;
  const bench: Record<string, number | string> = {};
  for (const g of ggufs) {
    for (const m of [g.gpuLayersAll, g.gpuLayers0]) {
      if (!m.ok || m.tokensPerSecond === null) continue;
      const key = `gen_tokens_per_s_gguf_${m.device.device}`;
      bench[key] ??= m.tokensPerSecond;
    }
  }
  if (bench.gen_tokens_per_s_gguf_webgpu === undefined) {
    const why = ggufs.find((g) => g.gpuLayersAll.ok)?.gpuLayersAll;
    bench.gen_tokens_per_s_gguf_webgpu_absent = why && why.ok ? (why.device.reason ?? 'unknown') : 'no GGUF loaded';
  }
  const report = {
    format: 'rlvr-workbench-gpu-check', version: 1, started, finished: new Date().toISOString(),
    userAgent: navigator.userAgent, crossOriginIsolated: globalThis.crossOriginIsolated === true, hardwareConcurrency: navigator.hardwareConcurrency,
    webgpu: probe, gguf: ggufs, webllm, generation, bench,
  };
  console.log(`GPU_CHECK_JSON ${JSON.stringify(report)}`);
}, 540_000);
