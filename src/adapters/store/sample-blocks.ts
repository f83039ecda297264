/**
 * Reading and sorting a run's sample blocks (see SampleBlock in schema.ts): a sorted run is
 * paged by reading only the blocks a page covers; an unsorted one (running, or interrupted) is
 * read whole, de-duplicated by (index, sample) and sorted.
 */
import { sampleKey as keyOf } from '../../core/eval/constants.ts';
import type { SampleRecord } from '../../core/run/types.ts';
import { BLOCK_SIZE, blockRange, type WorkbenchIdb } from './schema.ts';

function sortUnique(blocks: readonly { samples: SampleRecord[] }[]): SampleRecord[] {
  const byKey = new Map<string, SampleRecord>();
  for (const b of blocks) for (const s of b.samples) byKey.set(keyOf(s), s);
  return [...byKey.values()].sort((a, b) => a.index - b.index || a.sample - b.sample);
}

/** Blocks per read of a sorted run: 2,000 samples, each read a task of ~8 ms for the page (50 blocks were 15–60 ms at 500,000 samples, with the garbage collector; 100,000 in one read took 350 ms). */
const STEP_BLOCKS = 20;

/**
 * A sorted run's samples, read STEP_BLOCKS blocks per request in one transaction (each
 * request's result arrives in its own task); they are in order and unique by construction
 * (sortBlocks, a validated run file), so nothing is re-sorted. Null when the run is not sorted.
 */
async function sortedSamples<T>(
  idb: WorkbenchIdb,
  runId: string,
  keep: (s: SampleRecord) => T,
  onStep?: (done: number, total: number) => void,
): Promise<T[] | null> {
  const tx = idb.transaction(['sampleMeta', 'sampleBlocks']);
  const meta = await tx.objectStore('sampleMeta').get(runId);
  if (!meta?.sorted) return null;
  const blocks = tx.objectStore('sampleBlocks');
  const count = Math.ceil(meta.count / meta.blockSize);
  const out: T[] = [];
  for (let first = 0; first < count; first += STEP_BLOCKS) {
    for (const b of await blocks.getAll(blockRange(runId, first, first + STEP_BLOCKS - 1))) {
      for (const rec of b.samples) out.push(keep(rec));
    }
    onStep?.(out.length, meta.count);
  }
  if (count === 0) onStep?.(0, 0);
  return out;
}

/** Every sample of a run in (index, sample) order, each key once. */
export async function allSamples(idb: WorkbenchIdb, runId: string): Promise<SampleRecord[]> {
  return (await sortedSamples(idb, runId, (s) => s)) ?? sortUnique(await idb.getAll('sampleBlocks', blockRange(runId)));
}

/**
 * Every sample of a run like `allSamples`, reporting (samples read, samples in the run) as it
 * reads: the analysis worker's progress. `keep` maps each sample as it is read, so that a caller
 * that needs a few fields of each never holds every record whole.
 */
export async function allSamplesInSteps<T>(
  idb: WorkbenchIdb,
  runId: string,
  onStep: (done: number, total: number) => void,
  keep: (s: SampleRecord) => T,
): Promise<T[]> {
  const sorted = await sortedSamples(idb, runId, keep, onStep);
  if (sorted) return sorted;
  const all = sortUnique(await idb.getAll('sampleBlocks', blockRange(runId))).map(keep);
  onStep(all.length, all.length);
  return all;
}

/**
 * The samples of one question (gold `index`) in sample order. A sorted run is searched by block
 * (its blocks are in (index, sample) order): about log2(blocks) reads to find the first block
 * that holds the question, then only its blocks; an unsorted run is read whole and filtered.
 */
export async function questionSamples(idb: WorkbenchIdb, runId: string, index: number): Promise<SampleRecord[]> {
  return (await questionSamplesAt(idb, runId, index)).samples;
}

/**
 * `questionSamples` with the position of the question's first sample in the run's (index,
 * sample) order: where its samples' entries are in arrays kept in that order (a series step's
 * trainer scores).
 */
export async function questionSamplesAt(
  idb: WorkbenchIdb,
  runId: string,
  index: number,
): Promise<{ offset: number; samples: SampleRecord[] }> {
  const tx = idb.transaction(['sampleMeta', 'sampleBlocks']);
  const meta = await tx.objectStore('sampleMeta').get(runId);
  if (!meta?.sorted) {
    const all = await allSamples(idb, runId);
    const offset = all.findIndex((s) => s.index === index);
    return { offset: Math.max(0, offset), samples: all.filter((s) => s.index === index) };
  }
  const blocks = tx.objectStore('sampleBlocks');
  const count = Math.ceil(meta.count / meta.blockSize);
  // The first block whose last sample is at or after the question.
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const last = (await blocks.get([runId, mid]))?.samples.at(-1);
    if (last && last.index < index) lo = mid + 1;
    else hi = mid;
  }
  const out: SampleRecord[] = [];
  let offset = -1;
  for (let b = lo; b < count; b++) {
    const block = (await blocks.get([runId, b]))?.samples ?? [];
    block.forEach((s, k) => {
      if (s.index !== index) return;
      if (offset < 0) offset = b * meta.blockSize + k;
      out.push(s);
    });
    if ((block.at(-1)?.index ?? Infinity) > index) break;
  }
  return { offset: Math.max(0, offset), samples: out };
}

export async function samplePage(
  idb: WorkbenchIdb,
  runId: string,
  offset: number,
  limit: number,
): Promise<SampleRecord[]> {
  const meta = await idb.get('sampleMeta', runId);
  if (!meta?.sorted) return (await allSamples(idb, runId)).slice(offset, offset + limit);
  if (limit <= 0 || offset >= meta.count) return [];
  const first = Math.floor(offset / meta.blockSize);
  const last = Math.floor((Math.min(meta.count, offset + limit) - 1) / meta.blockSize);
  const blocks = await idb.getAll('sampleBlocks', blockRange(runId, first, last));
  return blocks
    .flatMap((b) => b.samples)
    .slice(offset - first * meta.blockSize, offset - first * meta.blockSize + limit);
}

export async function countSamples(idb: WorkbenchIdb, runId: string): Promise<number> {
  const meta = await idb.get('sampleMeta', runId);
  return meta?.sorted ? meta.count : (await allSamples(idb, runId)).length;
}

/** Keys `index/sample` of the samples stored for a run. */
export async function storedKeys(idb: WorkbenchIdb, runId: string): Promise<Set<string>> {
  return new Set((await allSamples(idb, runId)).map(keyOf));
}

/** Number for the next appended block (after every block of the run). */
export async function nextBlock(idb: WorkbenchIdb, runId: string): Promise<number> {
  const cursor = await idb.transaction('sampleBlocks').store.openKeyCursor(blockRange(runId), 'prev');
  return cursor ? cursor.key[1] + 1 : 0;
}

/**
 * Rewrites a run's blocks in (index, sample) order, BLOCK_SIZE each, in one transaction: it
 * either all happens or nothing changes. Call only while holding the run's lock.
 */
export async function sortBlocks(idb: WorkbenchIdb, runId: string): Promise<void> {
  const meta = await idb.get('sampleMeta', runId);
  if (meta?.sorted) return;
  const samples = await allSamples(idb, runId);
  const tx = idb.transaction(['sampleBlocks', 'sampleMeta'], 'readwrite');
  const blocks = tx.objectStore('sampleBlocks');
  void blocks.delete(blockRange(runId));
  for (let b = 0; b * BLOCK_SIZE < samples.length; b++) {
    void blocks.put({ runId, block: b, samples: samples.slice(b * BLOCK_SIZE, (b + 1) * BLOCK_SIZE) });
  }
  void tx.objectStore('sampleMeta').put({ runId, sorted: true, count: samples.length, blockSize: BLOCK_SIZE });
  await tx.done;
}

/** Marks a run as being appended to (its blocks are no longer in order). */
export async function markUnsorted(idb: WorkbenchIdb, runId: string): Promise<void> {
  const meta = await idb.get('sampleMeta', runId);
  await idb.put('sampleMeta', { runId, sorted: false, count: meta?.count ?? 0, blockSize: BLOCK_SIZE });
}
