/**
 * Predictions of an app run, checked and paired in the import worker by the core's replay plan
 * (src/core/run/replay.ts) under the shared pairing policy. The app is strict: a file whose
 * pairing has findings (another count, other databases, keys out of order) is refused with the
 * findings' message instead of being scored against the wrong gold.
 */
import { WorkbenchError } from '../../core/errors.ts';
import {
  detectHarnessFormat,
  mapHarnessRows,
  mappingReport,
  type HarnessFormat,
  type HarnessRun,
} from '../../core/formats/harness.ts';
import { withReplayEpisodes } from '../../core/formats/replay-episode.ts';
import type { SourceRecord } from '../../core/formats/records.ts';
import { planReplay } from '../../core/run/replay.ts';
import { readHarnessFile } from '../harness/read-harness.ts';
import { sha256Of } from './hash-stream.ts';
import { blobAsyncBuffer, readParquetRecords } from '../parquet/read-parquet.ts';
import type { PairJob, PairedPredictions } from '../../app/records.ts';

/**
 * A trainer's or harness's dump (verl generations, lm-eval --log_samples, an Inspect log) as the
 * records of one run, with the mapping report as warnings; null when the file is not one. A run is
 * one file: a dump holding several training steps is refused with what to do (the Training runs
 * page makes it a series).
 */
async function harnessRecords(
  job: PairJob,
): Promise<{ records: SourceRecord[]; warnings: string[]; format: HarnessFormat; run: HarnessRun } | null> {
  const name = job.predictionsName;
  const text = job.predictionsText;
  let blob: Blob | null = null;
  if (job.predictionsBlob && /\.eval$/i.test(name)) blob = job.predictionsBlob;
  else if (text !== undefined) {
    const trimmed = text.trimStart();
    const firstLine = trimmed.slice(0, (trimmed + '\n').indexOf('\n'));
    let first: unknown;
    try {
      first = JSON.parse(/\.json$/i.test(name) && trimmed.includes('"samples"') ? trimmed : firstLine);
    } catch {
      first = null;
    }
    if (detectHarnessFormat(first)) blob = new Blob([text]);
  }
  if (!blob) return null;
  const { format, rows } = await readHarnessFile(name, blob, null);
  const runs = mapHarnessRows(rows, job.questions);
  if (runs.length > 1) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `holds ${runs.length} training steps (${runs.map((r) => r.step).join(', ')}): the app makes one run per file. ` +
        "Import it on the Training runs page, which makes one step of a training run per training step; or give one step per file (verl writes one <step>.jsonl per validation), or use the CLI's harness command",
      name,
    );
  }
  const run = runs[0]!;
  if (run.records.length === 0)
    throw new WorkbenchError(
      'MISMATCH',
      `no row matched a question of this dataset: ${mappingReport(format, name, run)}`,
      name,
    );
  return { records: run.records, warnings: [mappingReport(format, name, run)], format, run };
}

export async function pairRunPredictions(job: PairJob): Promise<PairedPredictions> {
  const name = job.predictionsName;
  const harness = await harnessRecords(job);
  // A Parquet file (same columns as the JSONL format) is read row group by row group from the Blob.
  const predictions = harness
    ? { name, records: harness.records }
    : job.predictionsBlob
      ? { name, records: await readParquetRecords({ name, file: blobAsyncBuffer(job.predictionsBlob) }) }
      : { name, text: job.predictionsText ?? '' };
  const { items, warnings, findings } = planReplay(
    { predictions, gold: job.gold, questions: job.questions, fence: job.fence },
    { strict: job.strict ?? true },
  );
  const hash = job.predictionsBlob ? await sha256Of(job.predictionsBlob) : await sha256Of(job.predictionsText ?? '');
  return {
    // A multi-turn dump's samples keep their episodes (turns, the trainer's score) in the run.
    items: harness ? withReplayEpisodes(items, harness.format, harness.run) : items,
    warnings: [...(harness?.warnings ?? []), ...warnings],
    findings,
    ...hash,
  };
}
