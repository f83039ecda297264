/**
 * Storing a run file (validated first) as a run: header and samples in BLOCK_SIZE blocks in
 * (index, sample) order, in one transaction. Shared by the run repository (text on the page)
 * and the import worker (the file read, parsed and written off the main thread: at 100,000
 * samples the JSON alone is ~70 MB).
 */
import { parseRunFile } from '../../core/runfile/run-file.ts';
import type { RunHeader } from '../../core/run/types.ts';
import { scoreOf } from '../../core/run/score-run.ts';
import { StoreError } from '../../app/store-errors.ts';
import { BLOCK_SIZE, type WorkbenchIdb } from './schema.ts';

export async function storeRunFile(idb: WorkbenchIdb, text: string, fileName: string): Promise<RunHeader> {
  // Each key once (checkUniqueSamples); a run file's samples come sorted, an `eval --out` report's are sorted here.
  const file = parseRunFile(text, fileName);
  const inOrder = file.samples.every(
    (s, i, a) => i === 0 || a[i - 1]!.index < s.index || (a[i - 1]!.index === s.index && a[i - 1]!.sample < s.sample),
  );
  if (!inOrder) file.samples.sort((a, b) => a.index - b.index || a.sample - b.sample);
  const existing = await idb.get('runs', file.run.id);
  if (existing) throw new StoreError('ALREADY_EXISTS', `${fileName}: this run is already stored as "${existing.name}"`);
  const all = file.samples;
  const header: RunHeader = file.run.status === 'running' ? { ...file.run, status: 'cancelled' } : file.run;
  // A run file from the CLI or an older export has no score: the run lists compute it from the samples.
  const run: RunHeader =
    header.score || all.length === 0 ? header : { ...header, score: scoreOf(all, header.config.metrics) };
  const tx = idb.transaction(['runs', 'sampleBlocks', 'sampleMeta'], 'readwrite');
  void tx.objectStore('runs').put(run);
  for (let b = 0; b * BLOCK_SIZE < all.length; b++) {
    void tx
      .objectStore('sampleBlocks')
      .put({ runId: run.id, block: b, samples: all.slice(b * BLOCK_SIZE, (b + 1) * BLOCK_SIZE) });
  }
  void tx.objectStore('sampleMeta').put({ runId: run.id, sorted: true, count: all.length, blockSize: BLOCK_SIZE });
  await tx.done;
  return run;
}
