/**
 * Records of a tabular input file, whatever its format: a line of JSON Lines or a row of a
 * Parquet file. The parsers of predictions, questions and rubric datasets read records, so a
 * Parquet file is checked by the same rules and with the same messages as its JSONL twin; only
 * `where` differs (`file:line` for JSONL, `file row N (row group G)` for Parquet).
 */
import { parseJsonLines } from './questions.ts';

export interface SourceRecord {
  /** The decoded value: an object for a well-formed row. */
  value: unknown;
  /** Where the record is, for messages. */
  where: string;
  /** 1-based line (JSON Lines) or row (Parquet) in the file. */
  line: number;
}

/** The records of a JSON Lines text (blank lines skipped; syntax errors name file:line). */
export function jsonLineRecords(text: string, fileName: string): SourceRecord[] {
  return parseJsonLines(text, fileName).map(({ value, line }) => ({ value, line, where: `${fileName}:${line}` }));
}

/** How a Parquet row is named in messages: file, 1-based row of the file and 0-based row group. */
export function parquetRowWhere(fileName: string, row: number, rowGroup: number): string {
  return `${fileName} row ${row} (row group ${rowGroup})`;
}
