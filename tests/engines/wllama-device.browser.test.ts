/**
 * The GGUF engine's device in headless Chromium with the real stories260K.gguf: with the GPU
 * layers left to the engine (all), llama.cpp is asked for WebGPU; on this machine's SwiftShader
 * adapter (no shader-f16) it registers only its CPU backend, and the engine must say so, read
 * from llama.cpp's own log, with the reason. Greedy tokens are the same as a CPU-only load.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWllamaEngine, type WllamaEngine } from '../../src/adapters/engines/wllama-engine.ts';
import { GREEDY, type Prompt } from '../../src/core/engine/engine.ts';
import {
  createBrowserSqlPool,
  memoryDbSource,
  openBrowserSchemaSource,
  type BrowserSchemaSource,
} from '../../src/adapters/browser/sql-worker-host.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { loadDatabaseContext } from '../../src/core/prompt/build-prompt.ts';
import { BIRD_MINIDEV_V1 } from '../../src/core/prompt/templates.ts';
import { remainingJobs, runGeneration } from '../../src/core/run/generation.ts';
import { toRunFile } from '../../src/core/runfile/export.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { DEFAULT_RUN_CONFIG, type RunHeader, type SampleRecord } from '../../src/core/run/types.ts';
import { sharedFile } from './shared-files.ts';

let stories: File;
const engines: WllamaEngine[] = [];
const prompt: Prompt = { messages: [{ role: 'user', content: 'Once upon a time' }] };

function engine(gpuLayers: number | 'all'): WllamaEngine {
  const e = createWllamaEngine({ threads: 1, gpuLayers });
  e.addFile('stories260K.gguf', stories);
  engines.push(e);
  return e;
}

/** One engine loaded with all layers asked for the GPU, shared by the tests (loaded on first use). */
let allLayers: Promise<WllamaEngine> | null = null;
function loadedAllLayers(): Promise<WllamaEngine> {
  allLayers ??= (async () => {
    const e = createWllamaEngine({ threads: 1, gpuLayers: 'all' });
    e.addFile('stories260K.gguf', stories);
    await e.load({ id: 'stories260K.gguf', source: 'file:stories260K.gguf' });
    return e;
  })();
  return allLayers;
}

beforeAll(async () => {
  stories = await sharedFile('models/stories260K.gguf');
});
afterAll(async () => {
  await (await allLayers)?.unload();
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.unload()));
});

describe('GGUF engine device (wllama, real stories260K.gguf)', () => {
  it('asked for all layers on the GPU, reports the CPU that llama.cpp actually used, and why', async () => {
    const e = await loadedAllLayers();
    const d = e.loaded!.device;
    console.log('device report', JSON.stringify({ device: d, webgpu: e.loaded!.webgpu }));
    expect(d.device).toBe('cpu');
    expect(d.totalLayers).toBeGreaterThan(0);
    expect(d.gpuLayers).toBe(0);
    expect(d.backends).toBe(1);
    expect(d.reason).toMatch(/WebGPU|adapter|navigator\.gpu/);
    expect(d.evidence.some((l) => /assigned to device CPU/.test(l))).toBe(true);
    expect(d.evidence.some((l) => /backend_ptrs\.size\(\) = 1/.test(l))).toBe(true);
  }, 120_000);

  it('with 0 GPU layers says the CPU was asked for, and decodes the same greedy tokens', async () => {
    const auto = await loadedAllLayers();
    const [a] = await auto.generate(prompt, { ...GREEDY, maxTokens: 40 });
    const cpu = engine(0);
    await cpu.load({ id: 'stories260K.gguf', source: 'file:stories260K.gguf' });
    expect(cpu.loaded!.device).toMatchObject({ device: 'cpu', reason: 'GPU layers set to 0: the CPU was asked for' });
    const [b] = await cpu.generate(prompt, { ...GREEDY, maxTokens: 40 });
    expect(a!.text.length).toBeGreaterThan(0);
    expect(b!.text).toBe(a!.text);
    console.log(
      'tokens/s',
      JSON.stringify({ all: (a!.tokensOut! * 1000) / a!.latencyMs, cpu: (b!.tokensOut! * 1000) / b!.latencyMs }),
    );
  }, 120_000);

  it('records the device and the reason on every sample of a generation run, and in the exported run file', async () => {
    const questions = parseQuestions(
      await (await sharedFile('bird/minidev/mini_dev_sqlite.json')).text(),
      'mini_dev_sqlite.json',
    );
    const index = questions.findIndex((x) => x.dbId === 'superhero');
    const dbSource = memoryDbSource(
      new Map([
        [
          'superhero',
          new Uint8Array(await (await sharedFile('bird/databases/superhero/superhero.sqlite')).arrayBuffer()),
        ],
      ]),
    );
    let schema: BrowserSchemaSource | undefined;
    const pool = createBrowserSqlPool(dbSource, 1);
    try {
      const e = await loadedAllLayers();
      schema = await openBrowserSchemaSource(dbSource, 64 * 1024 * 1024);
      const ctx = await loadDatabaseContext(schema.source, 'superhero', { sampleRows: 0, descriptions: false });
      const stored: SampleRecord[] = [];
      const out = await runGeneration(
        {
          engine: 'wllama',
          model: { id: 'stories260K.gguf' },
          template: BIRD_MINIDEV_V1,
          params: { ...GREEDY, n: 2, temperature: 0.8, seed: 1, maxTokens: 16 },
        },
        { fence: 'last', rewardFormula: 'ex' },
        remainingJobs(
          { indices: [index], questions, gold: questions.map((q) => ({ sql: q.goldSql })), n: 2 },
          new Set(),
        ),
        {
          engine: e,
          database: async () => ctx,
          evaluate: (items, signal) => pool.evaluate(items, DEFAULT_EVAL_OPTIONS, { signal }),
          store: (x) => stored.push(...x),
        },
        { signal: new AbortController().signal, doneBefore: 0, total: 2 },
      );
      expect(out).toEqual({ kind: 'done' });
      expect(stored).toHaveLength(2);
      for (const s of stored) {
        expect(s.generation!.device).toBe('cpu');
        expect(s.generation!.deviceReason).toMatch(/lacks shader-f16/);
      }
      const header = {
        id: 'r',
        name: 'r',
        createdAt: '',
        updatedAt: '',
        status: 'done',
        source: { kind: 'generation', engine: 'wllama', model: 'stories260K.gguf', template: 'bird-minidev-v1' },
        dataset: { id: 'd', name: 'd', questions: { name: 'q', sha256: 'x', bytes: 1 }, gold: null, databases: {} },
        subset: { description: '', indices: [index] },
        config: DEFAULT_RUN_CONFIG,
        samplesPerQuestion: 2,
        executor: 'sql.js',
      } satisfies RunHeader;
      const back = parseRunFile(JSON.stringify(toRunFile(header, stored)), 'run.json');
      expect(back.samples.map((s) => s.generation!.device)).toEqual(['cpu', 'cpu']);
    } finally {
      schema?.dispose();
      await pool.dispose();
    }
  }, 120_000);
});
