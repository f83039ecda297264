/**
 * Input files that may be JSON/JSONL or Parquet (by the name's `.parquet`/`.pq` ending): the
 * questions of `--dataset`, the predictions of `--predictions`, a RaR rubric dataset. Parquet
 * rows (read by the host: src/cli/node-host.ts) go through the same core parsers as JSONL lines
 * (src/core/formats/records.ts).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { decodeUtf8File } from '../../core/util/utf8-text.ts';
import { WorkbenchError, isWorkbenchError } from '../../core/errors.ts';
import { parseQuestions, questionsFromRecords } from '../../core/formats/questions.ts';
import { parseRarJsonl, rarFromRecords, type RarRow } from '../../core/rubric/rar-dataset.ts';
import type { ReplayInputs } from '../../core/run/replay.ts';
import type { Question } from '../../core/types.ts';
import { parseRunFile } from '../../core/runfile/run-file.ts';
import type { RunFile } from '../../core/run/types.ts';
import { runFileFromSamplesTable } from '../../core/views/samples-table.ts';
import { isParquetName } from '../../core/formats/parquet-name.ts';
import type { NodeHost } from '../node-host.ts';

export async function readText(flag: string, file: string): Promise<string> {
  try {
    const bytes = await readFile(file);
    // Strict UTF-8: a file in another encoding is an input error, not silently mangled text.
    return decodeUtf8File(bytes, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new WorkbenchError('MISSING_FILE', `file not found: ${file}`, flag);
    if (code === 'EISDIR') throw new WorkbenchError('BAD_OPTION', `${file} is a directory; name a file`, flag);
    if (isWorkbenchError(err)) throw new WorkbenchError(err.code, `${err.message}`, flag);
    throw err;
  }
}

export async function readQuestionsInput(host: NodeHost, flag: string, file: string): Promise<Question[]> {
  if (!isParquetName(file)) return parseQuestions(await readText(flag, file), path.basename(file));
  const { name, records } = await host.parquet.read(flag, file);
  return questionsFromRecords(records, name);
}

export async function readPredictionsInput(
  host: NodeHost,
  flag: string,
  file: string,
): Promise<ReplayInputs['predictions']> {
  if (!isParquetName(file)) return { name: path.basename(file), text: await readText(flag, file) };
  const { name, records } = await host.parquet.read(flag, file);
  return { name, records };
}

export async function readRarInput(host: NodeHost, flag: string, file: string): Promise<RarRow[]> {
  if (!isParquetName(file)) return parseRarJsonl(await readText(flag, file), path.basename(file));
  const { name, records } = await host.parquet.read(flag, file);
  return rarFromRecords(records, name);
}

/** A run: a run file or `eval --out` report (JSON), or the run's samples Parquet table the workbench writes. */
export async function readRunInput(host: NodeHost, flag: string, file: string): Promise<RunFile> {
  if (!isParquetName(file)) return parseRunFile(await readText(flag, file), path.basename(file));
  const { name, records, keyValue } = await host.parquet.read(flag, file);
  return runFileFromSamplesTable(records, keyValue, name);
}
