/** Parquet out to a file in Node: each row group's bytes are written as soon as they are encoded. */
import { open } from 'node:fs/promises';
import type { TableSchema } from '../../core/views/tables.ts';
import { writeParquetTable, type WriteTableOptions } from './write-parquet.ts';

export async function writeParquetFile<R>(
  file: string,
  table: TableSchema<R>,
  rows: readonly R[],
  opts: WriteTableOptions = {},
): Promise<number> {
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
