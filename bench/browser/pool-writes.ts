/**
 * A run's samples written to IndexedDB as a run writes them (run-execution.ts: markUnsorted, a
 * SampleWriter fed as items finish), shared by the write benchmark (idb-write.ts) and its test
 * (tests/store/performance.browser.test.ts).
 */
import { markUnsorted } from '../../src/adapters/store/sample-blocks.ts';
import { SampleWriter } from '../../src/adapters/store/sample-writer.ts';
import type { WorkbenchIdb } from '../../src/adapters/store/schema.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';

/**
 * Stores samples 0..n-1 of `runId` (`sample(k)`) as they arrive from the pool: out of order
 * (grouped by database, k % 3), 100 per task, blocks left unsorted. Resolves with the ms from
 * the first push to the writer's close (every block committed).
 */
export async function writeAsPool(
  idb: WorkbenchIdb,
  runId: string,
  n: number,
  sample: (k: number) => SampleRecord,
): Promise<number> {
  await markUnsorted(idb, runId);
  const writer = new SampleWriter(idb, runId, 0);
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (a % 3) - (b % 3) || a - b);
  const t0 = performance.now();
  for (let i = 0; i < n; i += 100) {
    for (const k of order.slice(i, i + 100)) writer.push(sample(k));
    await new Promise((r) => setTimeout(r, 0));
  }
  await writer.close();
  return performance.now() - t0;
}
