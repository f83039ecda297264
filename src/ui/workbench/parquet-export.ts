/**
 * Parquet downloads in the app: a run's samples table and a run's per-prompt statistics
 * (src/core/views/tables.ts, documented in docs/formats.md). Row groups are encoded one at a time
 * and kept as Blob parts, which the browser may page out to disk, then saved as one Blob.
 */
import type { PromptNumbers } from '../../core/rl/stats-view.ts';
import { SAMPLES_TABLE, promptStatsTable, runTableMetadata, sampleRows } from '../../core/views/tables.ts';
import type { RunFile, RunHeader } from '../../core/run/types.ts';
import { blobSink, writeParquetTable } from '../../adapters/parquet/write-parquet.ts';

export async function runParquetBlob(file: RunFile): Promise<Blob> {
  const out = blobSink();
  await writeParquetTable(SAMPLES_TABLE, sampleRows(file.samples, file.questions), out.sink, {
    metadata: runTableMetadata(SAMPLES_TABLE, file.run),
  });
  return out.blob();
}

export async function promptStatsParquetBlob(
  prompts: readonly PromptNumbers[],
  ks: readonly number[],
  run: RunHeader,
): Promise<Blob> {
  const table = promptStatsTable(ks);
  const out = blobSink();
  await writeParquetTable(table, prompts, out.sink, { metadata: runTableMetadata(table, run) });
  return out.blob();
}
