/**
 * Parquet out: a core table (src/core/views/tables.ts) written with hyparquet-writer, streamed:
 * rows are encoded one row group at a time and each group's bytes go to the sink before the
 * next group is built, so a 100,000-sample run never sits in memory as one encoded file. The
 * sink is a file in Node (node-sink.ts) or the parts of a Blob in the browser (blobSink).
 */
import type { ParquetWriteOptions, Writer } from 'hyparquet-writer';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { ColumnType, TableSchema } from '../../core/views/tables.ts';

type SchemaElement = NonNullable<ParquetWriteOptions['schema']>[number];

/** Receives the file's bytes in order; the array is reused after the call returns. */
export type ParquetSink = (bytes: Uint8Array) => void | Promise<void>;

/** Rows per row group: small enough to keep memory flat, large enough for DuckDB and pandas to scan fast. */
export const ROW_GROUP_ROWS = 10_000;

function element(name: string, type: ColumnType, nullable: boolean): SchemaElement[] {
  const repetition_type = nullable ? 'OPTIONAL' : 'REQUIRED';
  switch (type) {
    case 'STRING':
      return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type }];
    case 'JSON':
      return [{ name, type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type }];
    case 'DOUBLE_LIST':
      return [
        { name, repetition_type, converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', type: 'DOUBLE', repetition_type: 'REQUIRED' },
      ];
    default:
      return [{ name, type, repetition_type }];
  }
}

export function parquetSchemaOf(table: TableSchema<never>): SchemaElement[] {
  return [
    { name: 'schema', num_children: table.columns.length },
    ...table.columns.flatMap((c) => element(c.name, c.type, c.nullable)),
  ];
}

function cell(type: ColumnType, v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (type === 'INT64') return BigInt(v as number);
  if (type === 'JSON') return JSON.stringify(v);
  return v;
}

/** A ByteWriter that hands its bytes to the sink after every row group and at the end. */
class SinkWriter extends ByteWriter {
  constructor(private readonly sink: ParquetSink) {
    super(1 << 20);
  }
  async flush(): Promise<void> {
    const bytes = this.getBytes();
    this.index = 0;
    await this.sink(bytes);
  }
  async finish(): Promise<void> {
    await this.flush();
  }
}

export interface WriteTableOptions {
  metadata?: Record<string, string>;
  rowGroupRows?: number;
  signal?: AbortSignal;
  onRows?: (written: number, total: number) => void;
}

/** Writes the rows as one Parquet file (SNAPPY pages), row group by row group; returns the bytes written. */
export async function writeParquetTable<R>(
  table: TableSchema<R>,
  rows: readonly R[],
  sink: ParquetSink,
  opts: WriteTableOptions = {},
): Promise<number> {
  const writer = new SinkWriter(sink);
  const pw = new ParquetWriter({
    writer: writer as unknown as Writer,
    schema: parquetSchemaOf(table as TableSchema<never>),
    kvMetadata: Object.entries(opts.metadata ?? {}).map(([key, value]) => ({ key, value })),
    createdBy: 'rlvr-workbench (hyparquet-writer)',
  });
  const size = opts.rowGroupRows ?? ROW_GROUP_ROWS;
  for (let start = 0; start < rows.length || start === 0; start += size) {
    opts.signal?.throwIfAborted();
    const group = rows.slice(start, start + size);
    const columnData = table.columns.map((c) => ({ name: c.name, data: group.map((r) => cell(c.type, c.value(r))) }));
    await pw.write({ columnData: columnData as never, rowGroupSize: Math.max(1, group.length) });
    opts.onRows?.(start + group.length, rows.length);
    if (rows.length === 0) break;
  }
  await pw.finish();
  return writer.offset;
}

/**
 * A sink that turns each row group's bytes into a Blob at once, so the encoded file is held by
 * the browser's blob storage (which pages large blobs out to disk), not by the JS heap.
 */
export function blobSink(): { sink: ParquetSink; blob(): Blob } {
  const parts: Blob[] = [];
  return {
    sink: (bytes) => void parts.push(new Blob([bytes.slice()])),
    blob: () => new Blob(parts, { type: 'application/vnd.apache.parquet' }),
  };
}

/** A table's rows as one Parquet file in a Blob (row groups kept as Blob parts, see blobSink). */
export async function parquetBlob<R>(
  table: TableSchema<R>,
  rows: readonly R[],
  metadata: Record<string, string>,
): Promise<Blob> {
  const out = blobSink();
  await writeParquetTable(table, rows, out.sink, { metadata });
  return out.blob();
}
