/**
 * Predictions of an app run, checked and paired in the import worker by the core's replay plan
 * (src/core/run/replay.ts) under the shared pairing policy. The app is strict: a file whose
 * pairing has findings (another count, other databases, keys out of order) is refused with the
 * findings' message instead of being scored against the wrong gold.
 */
import { createSHA256 } from 'hash-wasm';
import { planReplay } from '../../core/run/replay.ts';
import { blobAsyncBuffer, readParquetRecords } from '../parquet/read-parquet.ts';
import type { PairJob, PairedPredictions } from '../../../workers/import.api.ts';

/** sha256 (hash-wasm, fast on 50 MB files) and UTF-8 size of a text. */
export async function sha256Text(text: string): Promise<{ sha256: string; bytes: number }> {
  return sha256Bytes(new TextEncoder().encode(text));
}

export async function sha256Bytes(bytes: Uint8Array): Promise<{ sha256: string; bytes: number }> {
  const h = await createSHA256();
  h.init();
  h.update(bytes);
  return { sha256: h.digest('hex'), bytes: bytes.length };
}

export async function pairRunPredictions(job: PairJob): Promise<PairedPredictions> {
  const name = job.predictionsName;
  // A Parquet file (same columns as the JSONL format) is read row group by row group from the Blob.
  const predictions = job.predictionsBlob
    ? { name, records: await readParquetRecords({ name, file: blobAsyncBuffer(job.predictionsBlob) }) }
    : { name, text: job.predictionsText ?? '' };
  const { items, warnings, findings } = planReplay(
    { predictions, gold: job.gold, questions: job.questions, fence: job.fence },
    { strict: job.strict ?? true },
  );
  const hash = job.predictionsBlob ? await sha256Bytes(new Uint8Array(await job.predictionsBlob.arrayBuffer())) : await sha256Text(job.predictionsText ?? '');
  return { items, warnings, findings, ...hash };
}
