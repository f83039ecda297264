import { afterEach, describe, expect, it } from 'vitest';
import { markUnsorted, sortBlocks } from '../../src/adapters/store/sample-blocks.ts';
import { SampleWriter } from '../../src/adapters/store/sample-writer.ts';
import { openWorkbenchDb } from '../../src/adapters/store/schema.ts';
import { DEFAULT_RUN_CONFIG, type RunHeader, type SampleRecord } from '../../src/core/run/types.ts';
import { testStore, type TestStore } from './store-helpers.ts';

let t: TestStore;
afterEach(() => t?.dispose());

const N = 10_000;
const sample = (index: number): SampleRecord => ({
  index,
  questionId: index,
  dbId: ['superhero', 'toxicology', 'student_club'][index % 3]!,
  difficulty: 'moderate',
  ex: (index % 2) as 0 | 1,
  softF1: 0.5,
  rves: null,
  timeRatio: null,
  status: index % 7 === 0 ? 'error' : 'ok',
  error: index % 7 === 0 ? 'prediction: no such column: T1.name' : null,
  mutatedDb: false,
  extraction: { rule: 'bird-separator', thinkStripped: false },
  predRowCount: 3,
  goldRowCount: 3,
  elapsedMs: 2.25,
  sample: 0,
  sql: `SELECT T1.name, COUNT(*) FROM superhero AS T1 JOIN hero_power AS T2 ON T1.id = T2.hero_id WHERE T1.id = ${index} GROUP BY T1.name`,
  goldSql: `SELECT T1.name FROM superhero AS T1 WHERE T1.id = ${index}`,
  format: 1,
  reward: index % 2,
});

/**
 * 10,000 samples through the SampleWriter, read back by page before and after the blocks are
 * sorted. Speeds are printed here for the log only: they are measured, with their targets, by
 * `npm run bench` (idb_write_samples_per_s, idb_reopen_run_ms), never asserted by a test.
 */
describe('sample storage at scale (10,000 samples)', () => {
  it('stores 10,000 samples arriving out of order, each once; pages read the right samples before and after sorting, and after a reload', async () => {
    t = testStore();
    const idb = await openWorkbenchDb(t.dbName);
    const runId = 'perf-run';
    const header: RunHeader = {
      id: runId,
      name: 'perf',
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
      status: 'done',
      source: { kind: 'replay', predictions: { name: 'p', sha256: '0', bytes: 0 } },
      dataset: { id: 'd', name: 'd', questions: { name: 'q', sha256: '0', bytes: 0 }, gold: null, databases: {} },
      subset: { description: 'all', indices: [] },
      config: DEFAULT_RUN_CONFIG,
      samplesPerQuestion: 1,
      executor: 'test',
    };
    await idb.put('runs', header);
    await markUnsorted(idb, runId);
    const writer = new SampleWriter(idb, runId, 0);
    // Samples arrive over time, as from the pool (out of order: grouped by database).
    const order = Array.from({ length: N }, (_, i) => i).sort((a, b) => (a % 3) - (b % 3) || a - b);
    const t0 = performance.now();
    for (let i = 0; i < N; i += 100) {
      for (const k of order.slice(i, i + 100)) writer.push(sample(k));
      await new Promise((r) => setTimeout(r, 0));
    }
    await writer.close();
    const seconds = (performance.now() - t0) / 1000;
    const rate = N / seconds;
    console.log(`stored ${N} samples in ${(seconds * 1000).toFixed(0)} ms: ${rate.toFixed(0)} samples/s`);
    // Unsorted (as after a tab closed mid-run), the first page is read whole and sorted.
    const u0 = performance.now();
    const unsortedFirst = await t.reopen().runs.samples(runId, { offset: 0, limit: 100 });
    const unsortedMs = performance.now() - u0;
    const s0 = performance.now();
    await sortBlocks(idb, runId);
    console.log(
      `first page unsorted: ${unsortedMs.toFixed(0)} ms; sorting the blocks when the run stops: ${(performance.now() - s0).toFixed(0)} ms`,
    );
    expect(unsortedFirst.map((s) => s.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    idb.close();

    const reloaded = t.reopen();
    const r0 = performance.now();
    const first = await reloaded.runs.samples(runId, { offset: 0, limit: 100 });
    const firstMs = performance.now() - r0;
    const p0 = performance.now();
    const later = await reloaded.runs.samples(runId, { offset: 9_900, limit: 100 });
    const laterMs = performance.now() - p0;
    console.log(`first page after reopen: ${firstMs.toFixed(0)} ms; page at offset 9,900: ${laterMs.toFixed(0)} ms`);
    expect(first.map((s) => s.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(later[99]!.index).toBe(N - 1);
    expect(await reloaded.runs.sampleCount(runId)).toBe(N);
    const all = await reloaded.runs.samples(runId);
    expect(all.map((s) => s.index)).toEqual(Array.from({ length: N }, (_, i) => i));
    expect(all[4_242]).toEqual(sample(4_242));
  });
});
