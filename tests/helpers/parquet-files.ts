/**
 * Parquet files for tests, written with hyparquet-writer (an independent writer: the app reads
 * with hyparquet) in the schemas the ecosystem publishes: pyarrow's layout for Hugging Face
 * datasets (optional columns, `list<element: struct<...>>`, INT64 integers).
 */
import { writeFileSync } from 'node:fs';
import type { SchemaElement } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';

export type Column = { name: string; data: unknown[] };

export const utf8 = (name: string): SchemaElement => ({
  name,
  type: 'BYTE_ARRAY',
  converted_type: 'UTF8',
  repetition_type: 'OPTIONAL',
});
export const int64 = (name: string): SchemaElement => ({ name, type: 'INT64', repetition_type: 'OPTIONAL' });
export const float64 = (name: string): SchemaElement => ({ name, type: 'DOUBLE', repetition_type: 'OPTIONAL' });

/** A list column as pyarrow writes it: name (LIST) > list (repeated) > element. */
export function listOf(name: string, element: SchemaElement[]): SchemaElement[] {
  return [
    { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    ...element,
  ];
}

export function structOf(name: string, fields: SchemaElement[]): SchemaElement[] {
  return [{ name, repetition_type: 'OPTIONAL', num_children: fields.length }, ...fields];
}

/** The schema of ScaleAI RaR-Medicine / RaR-Science `data/*.parquet` (the dataset card's features). */
export const RAR_SCHEMA: SchemaElement[] = [
  { name: 'schema', num_children: 6 },
  utf8('question'),
  utf8('reference_answer'),
  utf8('question_source'),
  ...listOf('rubric', structOf('element', [utf8('description'), utf8('title'), int64('weight')])),
  ...listOf('rubric_list', [utf8('element')]),
  int64('rubric_count'),
];

/** A table's schema and columns, spread into `parquetBytes` or `writeParquet`. */
export type Table = [schema: SchemaElement[], columns: Column[]];

const QUESTION_COLUMNS = ['question_id', 'db_id', 'question', 'evidence', 'SQL', 'difficulty'];

/** BIRD questions (dev.json's rows) as Hugging Face publishes them: question_id INT64, the other fields UTF8. */
export function birdQuestionsTable(rows: readonly Record<string, unknown>[]): Table {
  return [
    [{ name: 'schema', num_children: 6 }, int64('question_id'), ...QUESTION_COLUMNS.slice(1).map(utf8)],
    QUESTION_COLUMNS.map((c) => ({
      name: c,
      data: rows.map((r) => (c === 'question_id' ? BigInt(r[c] as number) : r[c])),
    })),
  ];
}

/** A predictions line: an SQL or a completion to extract it from, with an optional mean log-probability. */
export interface PredictionLine {
  question_id: number;
  sql?: string;
  completion?: string;
  mean_logprob?: number;
}

/** Prediction lines as a table: question_id INT64, sql and completion UTF8, mean_logprob DOUBLE (null where absent). */
export function predictionLinesTable(lines: readonly PredictionLine[]): Table {
  return [
    [
      { name: 'schema', num_children: 4 },
      int64('question_id'),
      utf8('sql'),
      utf8('completion'),
      float64('mean_logprob'),
    ],
    [
      { name: 'question_id', data: lines.map((l) => BigInt(l.question_id)) },
      { name: 'sql', data: lines.map((l) => l.sql ?? null) },
      { name: 'completion', data: lines.map((l) => l.completion ?? null) },
      { name: 'mean_logprob', data: lines.map((l) => l.mean_logprob ?? null) },
    ],
  ];
}

export function parquetBytes(schema: SchemaElement[], columns: Column[], rowGroupSize: number): Uint8Array {
  // hyparquet-writer pins its own hyparquet for types: the schema elements are the same shape.
  return new Uint8Array(parquetWriteBuffer({ schema: schema as never, columnData: columns as never, rowGroupSize }));
}

export function writeParquet(file: string, schema: SchemaElement[], columns: Column[], rowGroupSize = 1000): string {
  writeFileSync(file, parquetBytes(schema, columns, rowGroupSize));
  return file;
}

/** hyparquet's AsyncBuffer over bytes in memory. */
export function memoryBuffer(bytes: Uint8Array): {
  byteLength: number;
  slice(start: number, end?: number): ArrayBuffer;
} {
  return { byteLength: bytes.byteLength, slice: (s, e) => bytes.slice(s, e).buffer };
}
