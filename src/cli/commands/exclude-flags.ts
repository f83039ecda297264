/**
 * `--exclude FILE`, shared by `eval`, `series` and `report`: questions left out of every metric,
 * one JSONL line each (`{"question_id", "reason", "author", "date"}`; src/core/eval/exclusions.ts).
 * A bad line is refused naming the file and the line, before any work.
 */
import path from 'node:path';
import { excludedText, parseExclusions, type Exclusion } from '../../core/eval/exclusions.ts';
import { WorkbenchError, isWorkbenchError } from '../../core/errors.ts';
import { readText } from './tabular-input.ts';

/** The exclusions of `--exclude FILE`; empty without the flag. */
export async function excludeFlag(file: string | undefined): Promise<Exclusion[]> {
  if (file === undefined) return [];
  const text = await readText('--exclude', file);
  try {
    return parseExclusions(text, file);
  } catch (err) {
    if (isWorkbenchError(err)) throw new WorkbenchError(err.code, err.message, '--exclude');
    throw err;
  }
}

/** The line the commands print: `3 questions excluded (gold-issues.jsonl): every metric is over the others`; empty for none. */
export function excludedLine(exclusions: readonly Exclusion[], file: string | undefined, present: number): string {
  if (exclusions.length === 0 || file === undefined) return '';
  const absent = exclusions.length - present;
  return (
    `${excludedText(present) || '0 questions excluded'} (--exclude ${path.basename(file)}): every metric is over the other questions` +
    (absent > 0 ? `; ${absent} listed question id(s) are not in this run` : '') +
    '\n'
  );
}
