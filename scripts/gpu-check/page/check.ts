/**
 * The GPU check's page, built for production beside the app and served from the same origin
 * by scripts/gpu-check/run.ts: the WebGPU adapter and its features and limits; for each GGUF
 * (the stories260K.gguf kept for tests, or those given with --gguf) a load with every layer
 * left to llama.cpp's GPU backend and one on the CPU: the device llama.cpp reports, the reason
 * for a fallback, greedy tokens/s and whether the two devices decode the same greedy text; for
 * each local MLC folder (--mlc) the file check, WebLLM's verdict and, when it can run, a load
 * and greedy tokens/s; WebLLM's verdict for each catalog model (no download); the machine
 * check's advice; and a generation run's EX on the demo dataset with the first GGUF.
 * The settings come from ./config.json; the report is left in `window.__gpuCheck`.
 */
import {
  createBrowserSqlPool,
  memoryDbSource,
  openBrowserSchemaSource,
  type BrowserSchemaSource,
} from '../../../src/adapters/browser/sql-worker-host.ts';
import { catalogNeeds, customNeeds, probeGpu } from '../../../src/adapters/engines/webgpu-capability.ts';
import { WEBLLM_CATALOG } from '../../../src/core/engine/webllm-catalog.ts';
import { customModelRecord, preflightCustomModel } from '../../../src/adapters/engines/webllm-custom.ts';
import { createWebLlmEngine } from '../../../src/adapters/engines/webllm-engine.ts';
import { createWllamaEngine } from '../../../src/adapters/engines/wllama-engine.ts';
import { GREEDY, type Engine } from '../../../src/core/engine/engine.ts';
import { recommendEngine } from '../../../src/core/engine/engine-recommendation.ts';
import { gpuVerdict, type GpuProbe } from '../../../src/core/engine/gpu-verdict.ts';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { loadDatabaseContext } from '../../../src/core/prompt/build-prompt.ts';
import { BIRD_MINIDEV_V1 } from '../../../src/core/prompt/templates.ts';
import { exWithInterval, remainingJobs, runGeneration } from '../../../src/core/run/generation.ts';
import { generationScorer } from '../../../src/core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG, type SampleRecord } from '../../../src/core/run/types.ts';

/** What scripts/gpu-check/run.ts serves as ./config.json. */
interface CheckConfig {
  /** GGUF files, served at `url`; `path` is the file on the machine, for the report. */
  gguf: Array<{ url: string; path: string; name: string }>;
  /** Local MLC folders: files under `modelUrl` (a .../resolve/main/ folder), the library at `libUrl`. */
  mlc: Array<{ modelUrl: string; libUrl: string | null; path: string; id: string }>;
  maxTokens: number;
  /** Questions of the demo run (from the first), or 0 to leave the run out (the bench). */
  demoQuestions: number;
}

declare global {
  interface Window {
    __gpuCheck?: { report: unknown } | { error: string };
  }
}

async function file(url: string, name: string): Promise<File> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`cannot read ${name} from ${url} (HTTP ${res.status})`);
  return new File([await res.blob()], name);
}

const PROMPT = { messages: [{ role: 'user' as const, content: 'Once upon a time' }] };

/** Loads `model` on `engine`, warms it up, then times one greedy generation of `maxTokens`. */
async function timeGreedy(engine: Engine, load: () => Promise<void>, maxTokens: number) {
  const t0 = performance.now();
  await load();
  const loadMs = Math.round(performance.now() - t0);
  // The first generation warms the engine up; the second is timed.
  await engine.generate(PROMPT, { ...GREEDY, maxTokens: 8 });
  const [c] = await engine.generate(PROMPT, { ...GREEDY, maxTokens });
  if (c!.finishReason === 'error') throw new Error(c!.error ?? 'the generation failed');
  const tokensPerSecond =
    c!.tokensOut && c!.latencyMs ? Math.round(((c!.tokensOut * 1000) / c!.latencyMs) * 10) / 10 : null;
  return { loadMs, tokens: c!.tokensOut, tokensPerSecond, text: c!.text, device: engine.device?.() ?? null };
}

async function measureGguf(f: File, gpuLayers: number | 'all', maxTokens: number) {
  const e = createWllamaEngine({ gpuLayers });
  e.addFile(f.name, f);
  try {
    const m = await timeGreedy(e, () => e.load({ id: f.name, source: `file:${f.name}` }), maxTokens);
    const info = e.loaded!;
    return { ok: true as const, gpuLayers, ...m, device: info.device, threads: info.threads };
  } catch (err) {
    return { ok: false as const, gpuLayers, error: (err as Error).message };
  } finally {
    await e.unload().catch(() => undefined);
  }
}

/** A local MLC folder: every file asked for, WebLLM's verdict, and a timed load when it can run. */
async function checkMlc(m: CheckConfig['mlc'][number], probe: GpuProbe, maxTokens: number) {
  if (!m.libUrl) {
    return {
      path: m.path,
      id: m.id,
      ok: false as const,
      problems: [`${m.path} holds no model library (.wasm): compile one with mlc_llm and put it in the folder`],
    };
  }
  const { record } = customModelRecord({ modelUrl: m.modelUrl, modelLibUrl: m.libUrl, id: m.id }, location.href);
  const preflight = await preflightCustomModel(record);
  const full = { ...record, contextWindow: preflight.contextWindow, quantization: preflight.quantization };
  const verdict = gpuVerdict(probe, customNeeds(full, preflight));
  const advice = recommendEngine(probe, { format: 'mlc', bytes: preflight.downloadBytes, webllm: verdict });
  const base = {
    path: m.path,
    id: m.id,
    quantization: preflight.quantization,
    bytes: preflight.downloadBytes,
    problems: preflight.problems,
    canRun: verdict.canRun,
    summary: verdict.summary,
    advice,
  };
  if (!preflight.ok || !verdict.canRun) return { ...base, ok: false as const };
  const e = createWebLlmEngine({ customModels: [full] });
  try {
    return {
      ...base,
      ok: true as const,
      run: await timeGreedy(e, () => e.load({ id: full.id, source: full.modelUrl }), maxTokens),
    };
  } catch (err) {
    return { ...base, ok: false as const, error: (err as Error).message };
  } finally {
    await e.unload().catch(() => undefined);
  }
}

async function demoRun(f: File, questionsWanted: number) {
  const text = async (name: string) => (await file(`../demo/${name}`, name)).text();
  const questions = parseQuestions(await text('questions.json'), 'questions.json');
  const gold = parseGoldSql(await text('gold.sql'), 'gold.sql');
  const dbBytes = new Uint8Array(
    await (await file('../demo/city_library/city_library.sqlite', 'city_library.sqlite')).arrayBuffer(),
  );
  const dbSource = memoryDbSource(new Map([['city_library', dbBytes]]));
  let schema: BrowserSchemaSource | undefined;
  const pool = createBrowserSqlPool(dbSource, 1);
  const e = createWllamaEngine({ gpuLayers: 'all' });
  e.addFile(f.name, f);
  try {
    await e.load({ id: f.name, source: `file:${f.name}` });
    schema = await openBrowserSchemaSource(dbSource, 64 * 1024 * 1024);
    const ctx = await loadDatabaseContext(schema.source, 'city_library', { sampleRows: 0, descriptions: false });
    const indices = questions.slice(0, questionsWanted).map((_, i) => i);
    const stored: SampleRecord[] = [];
    const t0 = performance.now();
    const outcome = await runGeneration(
      { engine: 'wllama', model: { id: f.name }, template: BIRD_MINIDEV_V1, params: { ...GREEDY, maxTokens: 48 } },
      { fence: 'last', rewardFormula: 'ex' },
      remainingJobs({ indices, questions, gold, n: 1 }, new Set()),
      {
        engine: e,
        database: async () => ctx,
        evaluate: generationScorer(DEFAULT_RUN_CONFIG, {
          executor: pool,
          questionOf: (i) => questions[i]?.question ?? null,
        }).evaluate,
        store: (s) => stored.push(...s),
      },
      { signal: new AbortController().signal, doneBefore: 0, total: indices.length },
    );
    const g = stored[0]?.generation;
    return {
      model: f.name,
      outcome: outcome.kind,
      questions: indices.length,
      samples: stored.length,
      ms: Math.round(performance.now() - t0),
      ...exWithInterval(stored),
      device: g?.device ?? null,
      deviceReason: g?.deviceReason ?? null,
    };
  } finally {
    schema?.dispose();
    await pool.dispose();
    await e.unload().catch(() => undefined);
  }
}

async function check(cfg: CheckConfig) {
  const started = new Date().toISOString();
  const probe = await probeGpu();
  const ggufs = [];
  for (const g of cfg.gguf) {
    const f = await file(g.url, g.name);
    const gpu = await measureGguf(f, 'all', cfg.maxTokens);
    const cpu = await measureGguf(f, 0, cfg.maxTokens);
    const agree = gpu.ok && cpu.ok ? gpu.text === cpu.text : null;
    ggufs.push({
      file: g.path,
      bytes: f.size,
      advice: recommendEngine(probe, { format: 'gguf', bytes: f.size }),
      gpuLayersAll: gpu,
      gpuLayers0: cpu,
      greedyAgreement:
        agree === null
          ? null
          : {
              same: agree,
              devices: [gpu.ok ? gpu.device.device : null, cpu.ok ? cpu.device.device : null],
              note:
                gpu.ok && gpu.device.device === 'cpu'
                  ? 'only the CPU backend ran: both loads decoded on the CPU'
                  : null,
            },
    });
  }
  const mlc = [];
  for (const m of cfg.mlc) mlc.push(await checkMlc(m, probe, cfg.maxTokens));
  const webllm = WEBLLM_CATALOG.map((entry) => {
    const v = gpuVerdict(probe, catalogNeeds(entry));
    return {
      id: entry.id,
      canRun: v.canRun,
      summary: v.summary,
      advice: recommendEngine(probe, { format: 'mlc', bytes: null, webllm: v }).label,
    };
  });
  const first = cfg.gguf[0];
  const generation =
    first && cfg.demoQuestions > 0
      ? await demoRun(await file(first.url, first.name), cfg.demoQuestions).catch((err: Error) => ({
          error: err.message,
        }))
      : null;
  // Tokens/s per engine and device that actually ran, first measurement of each.
  const tokensPerSecond: Array<{
    engine: string;
    model: string;
    device: string;
    gpuLayers?: number | 'all';
    tokensPerSecond: number;
  }> = [];
  for (const g of ggufs) {
    for (const m of [g.gpuLayersAll, g.gpuLayers0]) {
      if (m.ok && m.tokensPerSecond !== null)
        tokensPerSecond.push({
          engine: 'wllama',
          model: g.file,
          device: m.device.device,
          gpuLayers: m.gpuLayers,
          tokensPerSecond: m.tokensPerSecond,
        });
    }
  }
  for (const m of mlc) {
    if (m.ok && m.run.tokensPerSecond !== null)
      tokensPerSecond.push({
        engine: 'webllm',
        model: m.path,
        device: m.run.device?.device ?? 'webgpu',
        tokensPerSecond: m.run.tokensPerSecond,
      });
  }
  const bench: Record<string, number | string> = {};
  for (const t of tokensPerSecond)
    if (t.engine === 'wllama') bench[`gen_tokens_per_s_gguf_${t.device}`] ??= t.tokensPerSecond;
  if (bench.gen_tokens_per_s_gguf_webgpu === undefined) {
    const why = ggufs.find((g) => g.gpuLayersAll.ok)?.gpuLayersAll;
    bench.gen_tokens_per_s_gguf_webgpu_absent = why && why.ok ? (why.device.reason ?? 'unknown') : 'no GGUF loaded';
  }
  return {
    format: 'rlvr-workbench-gpu-check',
    version: 2,
    started,
    finished: new Date().toISOString(),
    userAgent: navigator.userAgent,
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
    hardwareConcurrency: navigator.hardwareConcurrency,
    webgpu: probe,
    gguf: ggufs,
    mlc,
    webllm,
    tokensPerSecond,
    generation,
    bench,
  };
}

void (async () => {
  try {
    const cfg = (await (await fetch('./config.json')).json()) as CheckConfig;
    window.__gpuCheck = { report: await check(cfg) };
  } catch (err) {
    window.__gpuCheck = { error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) };
  }
})();
