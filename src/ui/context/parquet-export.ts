/**
 * Parquet downloads in the app: a run's samples table and a run's per-prompt statistics
 * (src/core/views/tables.ts, documented in docs/formats.md), written by the composition root's
 * Parquet writer (the browser's encodes row groups one at a time and keeps them as Blob parts,
 * which the browser may page out to disk, then saves them as one Blob).
 */
import type { PromptNumbers } from '../../core/rl/stats-view.ts';
import {
  SAMPLES_TABLE,
  promptStatsTable,
  runTableMetadata,
  sampleRows,
  type TableSchema,
} from '../../core/views/tables.ts';
import type { RunFile, RunHeader } from '../../core/run/types.ts';
import { WorkbenchError } from '../../core/errors.ts';
import type { Exclusion } from '../../core/eval/exclusions.ts';

/** Writes a table's rows as one Parquet file, with the file's key-value metadata. */
export type ParquetBlobWriter = <R>(
  table: TableSchema<R>,
  rows: readonly R[],
  metadata: Record<string, string>,
) => Promise<Blob>;

/** The run's samples table; the samples of each question in `exclusions` carry it (`excluded_*` columns). */
export function runParquetBlob(
  file: RunFile,
  write: ParquetBlobWriter,
  exclusions?: readonly Exclusion[],
): Promise<Blob> {
  return write(
    SAMPLES_TABLE,
    sampleRows(file.samples, file.questions, exclusions),
    runTableMetadata(SAMPLES_TABLE, file.run),
  );
}

export function promptStatsParquetBlob(
  prompts: readonly PromptNumbers[],
  ks: readonly number[],
  run: RunHeader,
  write: ParquetBlobWriter,
): Promise<Blob> {
  const table = promptStatsTable(ks);
  return write(table, prompts, runTableMetadata(table, run));
}

/** The writer a state was given, or a refusal naming what is missing. */
export function parquetWriter(write: ParquetBlobWriter | undefined): ParquetBlobWriter {
  if (write) return write;
  return () =>
    Promise.reject(
      new WorkbenchError('UNSUPPORTED', 'Parquet files cannot be written here (no Parquet writer was given)'),
    );
}
