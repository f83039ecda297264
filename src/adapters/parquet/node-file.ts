/**
 * A Parquet file on disk as an AsyncBuffer: reads only the byte ranges hyparquet asks for. The
 * reader (hyparquet) is imported on the first call, so a CLI command given JSON never loads it.
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import { WorkbenchError } from '../../core/errors.ts';
import type { SourceRecord } from '../../core/formats/records.ts';

/** Every record of a Parquet file; a missing file is named with the flag that gave it. */
export async function readParquetFileRecords(
  flag: string,
  file: string,
): Promise<{ name: string; records: SourceRecord[]; bytes: number; keyValue: Record<string, string> }> {
  const handle = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') throw new WorkbenchError('MISSING_FILE', `file not found: ${file}`, flag);
    if (err.code === 'EISDIR') throw new WorkbenchError('BAD_OPTION', `${file} is a directory; name a file`, flag);
    throw err;
  });
  try {
    const { size } = await handle.stat();
    if (!(await handle.stat()).isFile()) throw new WorkbenchError('BAD_OPTION', `${file} is not a file`, flag);
    const name = path.basename(file);
    const asyncBuffer = {
      byteLength: size,
      async slice(start: number, end = size): Promise<ArrayBuffer> {
        const buf = new Uint8Array(end - start);
        await handle.read(buf, 0, buf.length, start);
        return buf.buffer;
      },
    };
    const { parquetKeyValue, readParquetRecords } = await import('./read-parquet.ts');
    const src = { name, file: asyncBuffer };
    return { name, records: await readParquetRecords(src), bytes: size, keyValue: await parquetKeyValue(src) };
  } finally {
    await handle.close();
  }
}
