/**
 * The RL and Compare views' plumbing around the analysis worker: progress shown while it
 * computes, cancel (the signal the worker client terminates the worker on), a newer computation
 * superseding an older one, and the page-side computation for stores without a worker. The
 * worker is a test double here (an `analysis` port that waits for the signal); the real worker
 * runs in tests/browser/rl-scale.test.ts and its computation in tests/workers/analysis-engine.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { AnalysisHooks, AnalysisPort, WorkbenchStore } from '../../../src/app/store-ports.ts';
import { compareRuns } from '../../../src/core/rl/compare.ts';
import { mulberry32 } from '../../../src/core/util/rng.ts';
import { computeRunStats } from '../../../src/core/rl/run-stats.ts';
import { toStatsView } from '../../../src/core/rl/stats-view.ts';
import type { RunFile } from '../../../src/core/run/types.ts';
import type { GoldOverlayRecord } from '../../../src/core/run/overlay-record.ts';
import { CompareView } from '../../../src/ui/rl/compare-view.svelte.ts';
import { RlView } from '../../../src/ui/rl/rl-view.svelte.ts';
import { syntheticRunFile, syntheticSamples } from '../../robustness/synthetic-run.ts';

const a = syntheticRunFile(syntheticSamples({ questions: 12, samples: 4, seed: 5 }), 'a');
const b = syntheticRunFile(syntheticSamples({ questions: 12, samples: 4, seed: 6 }), 'b');

const until = async (cond: () => boolean): Promise<void> => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
};

/** Rejects with an AbortError when the signal fires, as the worker client does. */
const aborted = (hooks: AnalysisHooks) =>
  new Promise<never>((_, reject) =>
    hooks.signal?.addEventListener('abort', () => reject(new DOMException('analysis cancelled', 'AbortError')), {
      once: true,
    }),
  );

/** A worker double: each call reports progress, then waits until `finish()` or the signal. */
function heldAnalysis() {
  const calls: { seed: number; signal: AbortSignal; finish: () => void }[] = [];
  const port: AnalysisPort = {
    runStats(runId, seed, hooks = {}) {
      hooks.onProgress?.({ phase: 'reading', runId, done: 10, total: 48 });
      return new Promise((resolve, reject) => {
        calls.push({
          seed,
          signal: hooks.signal!,
          finish: () => resolve(toStatsView(computeRunStats(a.samples, { rng: mulberry32(seed) }))),
        });
        aborted(hooks).catch(reject);
      });
    },
    compare(_idA, idB, options, hooks = {}) {
      hooks.onProgress?.({ phase: 'computing', runId: idB, done: 1, total: 5 });
      return new Promise((resolve, reject) => {
        calls.push({
          seed: options.seed,
          signal: hooks.signal!,
          finish: () =>
            resolve(compareRuns(a, b, { resamples: options.resamples, makeRng: () => mulberry32(options.seed) })),
        });
        aborted(hooks).catch(reject);
      });
    },
  };
  return { port, calls };
}

function storeOf(files: RunFile[], analysis?: AnalysisPort): WorkbenchStore {
  const byId = new Map(files.map((f) => [f.run.id, f]));
  return {
    runs: {
      get: async (id: string) => byId.get(id)?.run,
      samples: async (id: string) => byId.get(id)!.samples,
      export: async (id: string) => byId.get(id)!,
    },
    datasets: { get: async () => undefined },
    ...(analysis ? { analysis } : {}),
  } as unknown as WorkbenchStore;
}

describe('RL view with the analysis worker (test double)', () => {
  it('shows progress, stops on cancel, and computes again on request', async () => {
    const { port, calls } = heldAnalysis();
    const view = new RlView(a.run.id, storeOf([a], port));
    void view.load();
    await until(() => calls.length === 1);
    expect(view.state.computing).toBe(true);
    expect(view.progress).toEqual({ phase: 'reading', runId: a.run.id, done: 10, total: 48 });
    view.cancel();
    await until(() => !view.state.computing);
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(view.state.cancelled).toBe(true);
    expect(view.stats).toBeNull();
    expect(view.error).toBeNull();

    void view.recompute();
    await until(() => calls.length === 2);
    expect(view.state.cancelled).toBe(false);
    calls[1]!.finish();
    await until(() => !view.state.computing);
    expect(view.stats).toEqual(toStatsView(computeRunStats(a.samples, { rng: mulberry32(0) })));
  });

  it('a new seed aborts the computation under way; only the newer result is shown', async () => {
    const { port, calls } = heldAnalysis();
    const view = new RlView(a.run.id, storeOf([a], port));
    void view.load();
    await until(() => calls.length === 1);
    view.setSeed(3);
    await until(() => calls.length === 2);
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(view.state.cancelled).toBe(false);
    calls[1]!.finish();
    await until(() => !view.state.computing);
    expect(calls[1]!.seed).toBe(3);
    expect(view.stats).toEqual(toStatsView(computeRunStats(a.samples, { rng: mulberry32(3) })));
  });

  it('computes on the page with a store that has no worker, and says why a run cannot be shown', async () => {
    const view = new RlView(a.run.id, storeOf([a]));
    await view.load();
    expect(view.stats).toEqual(toStatsView(computeRunStats(a.samples, { rng: mulberry32(0) })));
    const empty = new RlView('run-empty', storeOf([syntheticRunFile([], 'empty')]));
    await empty.load();
    expect(empty.error).toContain('no sample can be scored');
  });

  it('offers the corrected gold only with an overlay stored, and scores against it when chosen', async () => {
    // An overlay whose corrected gold flips every scored sample of the first 4 questions.
    const overlay: GoldOverlayRecord = {
      ...{ runId: a.run.id, name: 'fix.json', text: '[]', attachedAt: 'now', covered: 4, goldsChanged: 0 },
      official: { count: 12, ex: null, softF1: null },
      corrected: { count: 12, ex: null, softF1: null },
      items: a.samples
        .filter((s) => s.index < 4 && s.status !== 'missing-db')
        .map((s) => ({
          ...{
            index: s.index,
            sample: s.sample,
            questionId: s.questionId,
            goldSql: 'SELECT 2',
            ex: (1 - s.ex) as 0 | 1,
          },
          ...{ softF1: null, status: s.status, error: null, goldRowCount: 1, goldColumns: ['x'], goldRows: [[2]] },
        })),
    };
    const flipped = a.samples.map((s) =>
      s.index < 4 && s.status !== 'missing-db' ? { ...s, ex: (1 - s.ex) as 0 | 1, softF1: null, reward: 1 - s.ex } : s,
    );
    const plain = new RlView(a.run.id, storeOf([a]));
    await plain.load();
    expect(plain.state.overlayName).toBeNull();
    const store = { ...storeOf([a]), service: { goldOverlay: async () => overlay } } as unknown as WorkbenchStore;
    const view = new RlView(a.run.id, store);
    await view.load();
    expect(view.state.overlayName).toBe('fix.json');
    view.setGold('corrected');
    await until(() => !view.state.computing && view.state.gold === 'corrected');
    const want = toStatsView(computeRunStats(flipped, { rng: mulberry32(0) }));
    expect(view.stats!.overall).toEqual(want.overall);
    expect(view.stats!.overall).not.toEqual(toStatsView(computeRunStats(a.samples, { rng: mulberry32(0) })).overall);
  });
});

describe('Compare view with the analysis worker (test double)', () => {
  it('shows progress, stops on cancel, and compares again on request', async () => {
    const { port, calls } = heldAnalysis();
    const view = new CompareView(storeOf([a, b], port));
    void view.setRunIds([a.run.id, b.run.id]);
    await until(() => calls.length === 1);
    expect(view.ready).toBe(false);
    expect(view.progress).toEqual({ phase: 'computing', runId: b.run.id, done: 1, total: 5 });
    view.cancel();
    await until(() => !view.state.computing);
    expect(view.state.cancelled).toBe(true);
    expect(view.pairs).toEqual([]);

    void view.recompute();
    await until(() => calls.length === 2);
    calls[1]!.finish();
    await until(() => view.ready);
    expect(view.pairs).toHaveLength(1);
    expect(view.pairs[0]!.result).toEqual(compareRuns(a, b, { resamples: 10_000, makeRng: () => mulberry32(0) }));
    expect(view.pairs[0]!.a.run.id).toBe(a.run.id);
  });
});
