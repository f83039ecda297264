/**
 * Storing a series file (src/core/series/file.ts, validated first) as a training run: each
 * step's run (header and samples in BLOCK_SIZE blocks, in (index, sample) order, its trainer
 * scores and reward columns sorted with them), the series record and its scores, in one transaction. Run in the
 * import worker: a series of 490,880 samples is hundreds of MB of JSON.
 */
import { parseSeriesFile } from '../../core/series/file.ts';
import { scoreOf } from '../../core/run/score-run.ts';
import type { RunHeader, SampleRecord } from '../../core/run/types.ts';
import { StoreError, isQuotaError } from '../../app/store-errors.ts';
import type { SeriesRecord } from '../../app/records.ts';
import { BLOCK_SIZE, type WorkbenchIdb } from './schema.ts';

export async function storeSeriesFile(idb: WorkbenchIdb, text: string, fileName: string): Promise<SeriesRecord> {
  const file = parseSeriesFile(text, fileName);
  if (file.steps.length === 0)
    throw new StoreError('NOT_FOUND', `${fileName}: the training run has no step: there is nothing to show`);
  const had = await idb.get('series', file.id);
  if (had) throw new StoreError('ALREADY_EXISTS', `${fileName}: this training run is already stored as "${had.name}"`);
  for (const s of file.steps) {
    const run = await idb.get('runs', s.run.run.id);
    if (run)
      throw new StoreError(
        'ALREADY_EXISTS',
        `${fileName}: step ${s.step}'s run is already stored as "${run.name}": delete it first to import this training run`,
      );
  }
  const first = file.steps[0]!.run.run;
  const now = new Date().toISOString();
  const record: SeriesRecord = {
    id: file.id,
    name: file.name,
    createdAt: file.createdAt,
    updatedAt: now,
    datasetId: first.dataset.id,
    dataset: file.dataset,
    stepRule: file.stepRule,
    origin: 'series-file',
    config: first.config,
    steps: file.steps.map((s) => ({
      step: s.step,
      runId: s.run.run.id,
      wallTime: s.wallTime,
      wallTimeSource: s.wallTimeSource,
      source: s.source,
      owned: true,
      ...(s.run.run.executions
        ? { executions: { executed: s.run.run.executions.executed, reused: s.run.run.executions.reused } }
        : {}),
    })),
    runIds: file.steps.map((s) => s.run.run.id),
  };
  const tx = idb.transaction(['runs', 'sampleBlocks', 'sampleMeta', 'series', 'seriesScores'], 'readwrite');
  try {
    for (const s of file.steps) {
      // Samples and their trainer scores sorted together into (index, sample) order.
      const order = s.run.samples
        .map((x, i) => ({ x, score: s.trainerScores[i] ?? null, rewards: s.trainerRewards?.[i] ?? null }))
        .sort((a, b) => a.x.index - b.x.index || a.x.sample - b.x.sample);
      const samples: SampleRecord[] = order.map((o) => o.x);
      const header: RunHeader = s.run.run.status === 'running' ? { ...s.run.run, status: 'cancelled' } : s.run.run;
      const run: RunHeader =
        header.score || samples.length === 0 ? header : { ...header, score: scoreOf(samples, header.config.metrics) };
      void tx.objectStore('runs').put(run);
      for (let b = 0; b * BLOCK_SIZE < samples.length; b++)
        void tx
          .objectStore('sampleBlocks')
          .put({ runId: run.id, block: b, samples: samples.slice(b * BLOCK_SIZE, (b + 1) * BLOCK_SIZE) });
      void tx
        .objectStore('sampleMeta')
        .put({ runId: run.id, sorted: true, count: samples.length, blockSize: BLOCK_SIZE });
      void tx.objectStore('seriesScores').put({
        seriesId: record.id,
        step: s.step,
        scores: order.map((o) => o.score),
        ...(s.trainerRewards ? { rewards: order.map((o) => o.rewards) } : {}),
      });
    }
    void tx.objectStore('series').put(record);
    await tx.done;
  } catch (err) {
    if (isQuotaError(err))
      throw new StoreError(
        'QUOTA_EXCEEDED',
        `Browser storage is full: ${fileName} was not imported (nothing already stored changed). Free space by deleting datasets or runs.`,
      );
    throw err;
  }
  return record;
}
