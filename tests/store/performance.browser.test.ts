import { afterEach, describe, expect, it } from 'vitest';
import { sortBlocks } from '../../src/adapters/store/sample-blocks.ts';
import { openWorkbenchDb } from '../../src/adapters/store/schema.ts';
import { writeAsPool } from '../../bench/browser/pool-writes.ts';
import { runHeader, storedRunSample as sample } from '../helpers/run-records.ts';
import { testStore, type TestStore } from './store-helpers.ts';

let t: TestStore;
afterEach(() => t?.dispose());

const N = 10_000;
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
    await idb.put('runs', runHeader({ id: runId, name: 'perf', executor: 'test' }));
    // Samples arrive over time, as from the pool (out of order: grouped by database).
    const seconds = (await writeAsPool(idb, runId, N, sample)) / 1000;
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
