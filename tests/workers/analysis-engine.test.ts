/**
 * The analysis worker's computation (workers/analysis-engine.ts) against the main-thread core
 * functions on the same small runs: the RL statistics (pass@k, maj@k with its seeded tie-break,
 * best-of-n, GRPO) and the paired comparison with its bootstrap. The engine's store port is a
 * plain object here (the IndexedDB one runs in the browser test of the RL view at 100,000).
 */
import { describe, expect, it } from 'vitest';
import { createAnalysisEngine, type StoredRuns } from '../../workers/analysis-engine.ts';
import type { AnalysisProgress } from '../../src/adapters/store/records.ts';
import { compareRuns } from '../../src/core/rl/compare.ts';
import { mulberry32 } from '../../src/core/util/rng.ts';
import { computeRunStats } from '../../src/core/rl/run-stats.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { syntheticRunFile, syntheticSamples } from '../robustness/synthetic-run.ts';

function storeOf(files: RunFile[]): () => Promise<StoredRuns> {
  const byId = new Map(files.map((f) => [f.run.id, f]));
  const get = (id: string) => {
    const f = byId.get(id);
    if (!f) throw new Error(`run ${id} is not stored`);
    return f;
  };
  return async () => ({
    header: async (id) => get(id).run,
    samples: async (id, onStep, keep) => {
      const s = get(id).samples;
      onStep(s.length, s.length);
      return s.map(keep);
    },
    overlay: async () => undefined,
    close: () => undefined,
  });
}

const a = syntheticRunFile(syntheticSamples({ questions: 40, samples: 8, seed: 3 }), 'a');
const b = syntheticRunFile(syntheticSamples({ questions: 40, samples: 8, seed: 4 }), 'b');
const engine = createAnalysisEngine(storeOf([a, b]));

describe('analysis worker computation', () => {
  it.each([0, 7])(
    'gives the RL statistics of computeRunStats on the page (seed %i), prompts without their sample records',
    async (seed) => {
      const progress: AnalysisProgress[] = [];
      const out = await engine.runStats({ dbName: 'x', runId: a.run.id, seed }, (p) => void progress.push(p));
      expect(out.ok).toBe(true);
      if (!out.ok) return;
      const ref = computeRunStats(a.samples, { rng: mulberry32(seed) });
      expect(out.value.ks).toEqual(ref.ks);
      expect(out.value.overall).toEqual(ref.overall);
      expect(out.value.byDifficulty).toEqual(ref.byDifficulty);
      expect(out.value.missingDb).toBe(ref.missingDb);
      expect(out.value.prompts.map(({ marks, ...numbers }) => ({ ...numbers, marks }))).toEqual(
        ref.prompts.map(({ samples, ...numbers }) => ({
          ...numbers,
          marks: samples.map((s) => String(s.ex)).join(''),
        })),
      );
      expect(out.value.prompts.some((p) => 'samples' in p)).toBe(false);
      expect(progress.filter((p) => p.phase === 'reading').at(-1)).toEqual({
        phase: 'reading',
        runId: a.run.id,
        done: 320,
        total: 320,
      });
      expect(progress.filter((p) => p.phase === 'computing').at(-1)).toEqual({
        phase: 'computing',
        runId: a.run.id,
        done: 40,
        total: 40,
      });
    },
  );

  it('gives the comparison of compareRuns on the page, bootstrap included', async () => {
    const progress: AnalysisProgress[] = [];
    const out = await engine.compare(
      { dbName: 'x', runIdA: a.run.id, runIdB: b.run.id, resamples: 2000, seed: 0 },
      (p) => void progress.push(p),
    );
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.value).toEqual(compareRuns(a, b, { resamples: 2000, makeRng: () => mulberry32(0) }));
    const buckets = 1 + Object.keys(out.value.byDifficulty).length + Object.keys(out.value.byDb).length;
    expect(progress.filter((p) => p.phase === 'computing').map((p) => p.done)).toEqual(
      Array.from({ length: buckets }, (_, i) => i + 1),
    );
  });

  it('answers an unknown run and an empty one with error data naming the problem, not a thrown object', async () => {
    const missing = await engine.runStats({ dbName: 'x', runId: 'nope', seed: 0 });
    expect(missing).toEqual({ ok: false, error: { name: 'Error', message: 'run nope is not stored' } });
    const empty = createAnalysisEngine(storeOf([syntheticRunFile([], 'empty')]));
    const out = await empty.runStats({ dbName: 'x', runId: 'run-empty', seed: 0 });
    expect(out.ok).toBe(false);
    if (!out.ok)
      expect(out.error).toMatchObject({
        name: 'WorkbenchError',
        code: 'BAD_FORMAT',
        message: expect.stringContaining('no sample can be scored'),
      });
  });
});
