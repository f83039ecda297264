/**
 * Parquet in: the rows of a Parquet file (a Hugging Face split, a predictions table) as core
 * records (src/core/formats/records.ts), read with hyparquet and its compressors (snappy, gzip,
 * zstd, brotli, lz4) one row group at a time, so that only one group's decoded columns are held
 * besides the records built so far. Works on any AsyncBuffer: a browser File or Blob, or a file
 * handle in Node (node-file.ts).
 *
 * Values are normalised to what JSON.parse of the same row as JSONL would give: INT64 (bigint)
 * to number when it is a safe integer, and a null column (an absent optional field) left out of
 * the record, so the core's checks and messages are those of the JSONL format.
 */
import { parquetMetadataAsync, parquetReadObjects, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { WorkbenchError, isCancellation } from '../../core/errors.ts';
import { parquetRowWhere, type SourceRecord } from '../../core/formats/records.ts';

export interface ParquetSource {
  /** The file's name, as messages show it. */
  name: string;
  file: AsyncBuffer;
}

export interface RowGroupRecords {
  rowGroup: number;
  rowGroups: number;
  records: SourceRecord[];
}

/** A browser File or Blob as hyparquet's AsyncBuffer (reads only the byte ranges asked for). */
export function blobAsyncBuffer(blob: Blob): AsyncBuffer {
  return { byteLength: blob.size, slice: (start, end) => blob.slice(start, end).arrayBuffer() };
}

export { isParquetName } from '../../core/formats/parquet-name.ts';

function normalise(v: unknown): unknown {
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (Array.isArray(v)) return v.map(normalise);
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = normalise(x);
    return out;
  }
  return v;
}

async function metadataOf(src: ParquetSource): Promise<FileMetaData> {
  if (src.file.byteLength < 12) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `not a Parquet file: ${src.file.byteLength} bytes is too short for one (a Parquet file starts and ends with "PAR1")`,
      src.name,
    );
  }
  const head = new Uint8Array(await src.file.slice(0, 4));
  if (new TextDecoder().decode(head) !== 'PAR1') {
    throw new WorkbenchError(
      'BAD_FORMAT',
      'not a Parquet file: it does not start with "PAR1". Export the table as Parquet, or name the file .jsonl/.json if it is JSON',
      src.name,
    );
  }
  try {
    return await parquetMetadataAsync(src.file);
  } catch (err) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `the Parquet footer cannot be read (${(err as Error).message}): is the file truncated? Download or export it again`,
      src.name,
    );
  }
}

/** Top-level column names of the file's schema. */
export function topLevelColumns(metadata: FileMetaData): string[] {
  const [root, ...rest] = metadata.schema;
  const names: string[] = [];
  let i = 0;
  for (let c = 0; c < (root?.num_children ?? 0); c++) {
    const el = rest[i]!;
    names.push(el.name);
    // Skip the element's whole subtree (a struct or list has children).
    let pending = el.num_children ?? 0;
    i++;
    while (pending > 0) {
      pending += (rest[i]!.num_children ?? 0) - 1;
      i++;
    }
  }
  return names;
}

/** Finds which column of a row group does not decode, to name it in the message. */
async function failingColumn(
  src: ParquetSource,
  metadata: FileMetaData,
  rowStart: number,
  rowEnd: number,
): Promise<string | null> {
  for (const column of topLevelColumns(metadata)) {
    try {
      await parquetReadObjects({ file: src.file, metadata, rowStart, rowEnd, columns: [column], compressors });
    } catch {
      return column;
    }
  }
  return null;
}

/**
 * Yields the records of each row group in turn. Rows are numbered 1.. over the whole file, as
 * JSONL lines are; a decoding failure names the file, the row group, its rows and the column.
 */
export async function* parquetRecordGroups(
  src: ParquetSource,
  opts: { signal?: AbortSignal } = {},
): AsyncGenerator<RowGroupRecords> {
  const metadata = await metadataOf(src);
  const groups = metadata.row_groups;
  let rowStart = 0;
  for (let g = 0; g < groups.length; g++) {
    opts.signal?.throwIfAborted();
    const rowEnd = rowStart + Number(groups[g]!.num_rows);
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({ file: src.file, metadata, rowStart, rowEnd, compressors });
    } catch (err) {
      if (isCancellation(err)) throw err;
      const column = await failingColumn(src, metadata, rowStart, rowEnd);
      throw new WorkbenchError(
        'BAD_FORMAT',
        `row group ${g} (rows ${rowStart + 1}–${rowEnd})${column ? `, column "${column}"` : ''} cannot be decoded: ${(err as Error).message}. ` +
          'The file is damaged or uses an encoding this reader lacks: write it again (e.g. pandas.to_parquet or datasets.to_parquet)',
        src.name,
      );
    }
    const records = rows.map((row, k) => {
      const line = rowStart + k + 1;
      return { value: normalise(row), line, where: parquetRowWhere(src.name, line, g) };
    });
    yield { rowGroup: g, rowGroups: groups.length, records };
    rowStart = rowEnd;
  }
}

/** The file's key-value metadata (the workbench's tables carry their name, version and run). */
export async function parquetKeyValue(src: ParquetSource): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const { key, value } of (await metadataOf(src)).key_value_metadata ?? [])
    if (typeof value === 'string') out[key] = value;
  return out;
}

/** Every record of the file, read group by group. */
export async function readParquetRecords(
  src: ParquetSource,
  opts: { signal?: AbortSignal; onRowGroup?: (done: number, total: number) => void } = {},
): Promise<SourceRecord[]> {
  const all: SourceRecord[] = [];
  for await (const { records, rowGroup, rowGroups } of parquetRecordGroups(src, opts)) {
    for (const r of records) all.push(r);
    opts.onRowGroup?.(rowGroup + 1, rowGroups);
  }
  return all;
}
