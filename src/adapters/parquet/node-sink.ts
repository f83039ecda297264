/**
 * Parquet out to a file in Node: each row group's bytes are written as soon as they are encoded.
 * The writer (hyparquet-writer) is imported on the first call, so a CLI command that writes no
 * Parquet never loads it.
 */
import { open } from 'node:fs/promises';
import type { TableSchema } from '../../core/views/tables.ts';
import type { WriteTableOptions } from './write-parquet.ts';

export async function writeParquetFile<R>(
  file: string,
  table: TableSchema<R>,
  rows: readonly R[],
  opts: WriteTableOptions = {},
): Promise<number> {
  const { writeParquetTable } = await import('./write-parquet.ts');
  const handle = await open(file, 'w');
  try {
    return await writeParquetTable(
      table,
      rows,
      async (bytes) => {
        await handle.write(bytes);
      },
      opts,
    );
  } finally {
    await handle.close();
  }
}
