/**
 * A generation run end to end in headless Chromium with the REAL stories260K.gguf on the CPU
 * engine (wllama): the embedded demo dataset (public/demo, city_library) imported into a
 * fresh IndexedDB store, 3 questions x 2 samples. The model writes stories, never SQL: the run
 * completes, extraction records rule `none`, every sample scores 0, and every sample is
 * stored with its prompt, completion, token counts, seed, engine and model. The run is paused
 * after its first question, the store reopened (what a reloaded page sees), resumed with no
 * duplicate keys, and read back from a third store instance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWllamaEngine, type WllamaEngine } from '../../src/adapters/engines/wllama-engine.ts';
import { PAUSE, exWithInterval, type GenerationProgress } from '../../src/core/run/generation.ts';
import { DEFAULT_RUN_CONFIG } from '../../src/core/run/types.ts';
import { toCsv } from '../../src/core/runfile/export.ts';
import { BIRD_MINIDEV_V1 } from '../../src/core/prompt/templates.ts';
import type { DatasetRecord } from '../../src/app/store-ports.ts';
import { testStore, type TestStore } from '../store/store-helpers.ts';
import { sharedFile } from './shared-files.ts';

let t: TestStore;
let ds: DatasetRecord;
let engine: WllamaEngine;

async function demoFile(path: string): Promise<{ path: string; file: Blob }> {
  const res = await fetch(`/demo/${path}`);
  if (!res.ok) throw new Error(`public/demo/${path}: HTTP ${res.status}`);
  return { path, file: new File([await res.blob()], path.split('/').pop()!) };
}

beforeAll(async () => {
  t = testStore();
  const files = await Promise.all(['questions.json', 'gold.sql', 'city_library/city_library.sqlite'].map(demoFile));
  ds = await t.store.datasets.import({
    kind: 'bird',
    name: 'demo',
    files,
    questionsPath: 'questions.json',
    goldPath: 'gold.sql',
  });
  engine = createWllamaEngine({ threads: 1 });
  engine.addFile('stories260K.gguf', await sharedFile('models/stories260K.gguf'));
  await engine.load({ id: 'stories260K.gguf', source: 'file:stories260K.gguf' });
});
afterAll(async () => {
  await engine?.unload();
  await t?.dispose();
});

describe('generation run with the real GGUF model on the CPU engine', () => {
  it('generates, scores and stores each sample; pauses; resumes after a reopen without duplicates', async () => {
    const t0 = performance.now();
    const spec = {
      engine: 'wllama',
      model: { id: 'stories260K.gguf', source: 'file:stories260K.gguf' },
      template: BIRD_MINIDEV_V1,
      sampleRows: 2,
      params: { n: 2, temperature: 0.8, topP: 0.95, maxTokens: 24, seed: 7, stop: [], logprobs: false },
    };
    const req = {
      name: 'stories on demo',
      datasetId: ds.id,
      subset: { description: 'first 3 questions', indices: [0, 1, 2] },
      spec,
      config: { ...DEFAULT_RUN_CONFIG, metrics: ['ex' as const] },
    };
    const pause = new AbortController();
    const progress: GenerationProgress[] = [];
    const first = await t.store.service.startGeneration(req, engine, {
      signal: pause.signal,
      onProgress: (p) => {
        progress.push(p);
        if (p.done >= 2) pause.abort(PAUSE);
      },
    });
    expect(first.outcome.kind).toBe('paused');
    expect(first.run.status).toBe('running');
    expect(first.run.source).toEqual({
      kind: 'generation',
      engine: 'wllama',
      model: 'stories260K.gguf',
      template: 'bird-minidev-v1',
    });
    expect(first.run.samplesPerQuestion).toBe(2);
    expect(progress.some((p) => p.phase === 'generate')).toBe(true);
    const afterPause = await t.store.runs.sampleCount(first.run.id);
    expect(afterPause).toBeGreaterThanOrEqual(2);
    expect(afterPause).toBeLessThan(6);

    // What a reloaded page sees: a new store on the same database, the run listed as unfinished.
    const reloaded = t.reopen();
    expect((await reloaded.runs.get(first.run.id))?.status).toBe('running');
    await expect(reloaded.service.resume(first.run.id)).rejects.toThrow(
      /generation run: resume it from the Generate page/,
    );
    const plan = await reloaded.runs.generationPlan(first.run.id);
    expect(plan?.spec.params.n).toBe(2);
    const resumed = await reloaded.service.resumeGeneration(first.run.id, engine, {
      onProgress: (p) => progress.push(p),
    });
    expect(resumed.outcome.kind).toBe('done');
    expect(resumed.run.status).toBe('done');
    expect(progress.at(-1)).toMatchObject({ done: 6, total: 6 });

    const third = t.reopen();
    expect((await third.runs.list()).map((r) => [r.id, r.status])).toEqual([[first.run.id, 'done']]);
    const samples = await third.runs.samples(first.run.id);
    expect(samples.map((s) => [s.index, s.sample])).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
      [2, 0],
      [2, 1],
    ]);
    for (const s of samples) {
      expect(s.extraction.rule).toBe('none');
      expect(s.sql).toBe('');
      expect([s.ex, s.format, s.reward, s.status]).toEqual([0, 0, 0, 'ok']);
      expect(s.completion!.length).toBeGreaterThan(0);
      const g = s.generation!;
      expect(g.prompt).toHaveLength(1);
      expect(g.prompt[0]!.content).toContain(`-- ${ds.questions[s.index]!.question}\n`);
      expect(g.prompt[0]!.content).toContain('CREATE TABLE');
      expect(g).toMatchObject({
        templateId: 'bird-minidev-v1',
        engine: 'wllama',
        model: 'stories260K.gguf',
        seed: 7 + s.sample,
      });
      expect(g.fit).toMatchObject({ counter: 'engine', fits: true, limit: 2048 - 24 });
      expect(g.tokensIn).toBeGreaterThan(50);
      expect(g.tokensOut).toBeGreaterThan(0);
      expect(g.latencyMs).toBeGreaterThan(0);
      expect(g.finishReason).toMatch(/stop|length/);
    }
    expect(exWithInterval(samples)).toMatchObject({ ex: 0, n: 3, correct: 0, low: 0 });
    expect(exWithInterval(samples).high).toBeGreaterThan(0.4);

    // The run file keeps the generation records (and no API key: the spec holds none).
    const file = await third.runs.export(first.run.id);
    expect(file.samples[0]!.generation?.prompt[0]!.content).toBe(samples[0]!.generation!.prompt[0]!.content);
    // The device llama.cpp reported is the run's, in its header and on every sample, and in the CSV.
    const device = engine.device()!;
    expect(device.device).toBe('cpu'); // only llama.cpp's CPU backend registers on this machine (SwiftShader, no shader-f16)
    expect(device.reason).toMatch(/WebGPU|adapter|shader-f16/);
    expect(first.run.device).toEqual({ device: 'cpu', reason: device.reason });
    expect(file.run.device).toEqual({ device: 'cpu', reason: device.reason });
    for (const s of file.samples)
      expect([s.generation?.device, s.generation?.deviceReason]).toEqual(['cpu', device.reason]);
    const csv = toCsv(file.samples).split('\r\n');
    expect(csv[0]).toMatch(
      /,gen_device,gen_device_reason,gen_device_detail,ex_corrected,soft_f1_corrected,gold_sql_corrected,version_check_sqlite,version_check_ex,version_check_soft_f1,version_check_differs,version_check_planner$/,
    );
    for (const line of csv.slice(1, 7)) expect(line).toContain(',cpu,');
    console.log(
      `generation run: ${Math.round(performance.now() - t0)} ms for 6 samples (paused once, resumed after a reopen)`,
    );
    // Real inference on a shared 2-core machine: 11-24 s alone, over 60 s when other suites run.
  }, 240_000);
});
