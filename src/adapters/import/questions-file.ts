/**
 * The questions file of a dataset import: JSON/JSONL text, or Parquet (BIRD or Spider questions
 * as a dataset hub publishes them: the same columns, `question_id` as INT64). A Parquet file is
 * read once as a stream for its sha256 and its pieces kept as a Blob, which hyparquet then reads
 * by byte range, one row group at a time.
 */
import { parseQuestions, questionsFromRecords } from '../../core/formats/questions.ts';
import type { Question } from '../../core/types.ts';
import { blobAsyncBuffer, isParquetName, readParquetRecords } from '../parquet/read-parquet.ts';
import { readTextFile, streamFile } from './hash-stream.ts';
import type { ImportFile } from './import-files.ts';

export async function readQuestionsFile(
  file: ImportFile,
  signal?: AbortSignal,
): Promise<{ questions: Question[]; sha256: string; bytes: number }> {
  if (!isParquetName(file.path)) {
    const { text, sha256, bytes } = await readTextFile(file, signal);
    return { questions: parseQuestions(text, file.path), sha256, bytes };
  }
  const pieces: Uint8Array<ArrayBuffer>[] = [];
  const { sha256, bytes } = await streamFile(file, { signal, onData: (p) => void pieces.push(p.slice()) });
  const records = await readParquetRecords({ name: file.path, file: blobAsyncBuffer(new Blob(pieces)) }, { signal });
  return { questions: questionsFromRecords(records, file.path), sha256, bytes };
}
