/**
 * Predictions from records (src/core/formats/records.ts): a JSON Lines file's lines or a Parquet
 * file's rows, with the same columns and the same rules. `position` is the record's 0-based
 * line or row, so `position + 1` names it later on.
 */
import { WorkbenchError } from '../errors.ts';
import { extractSql, type ExtractOptions } from '../sql/extract-sql.ts';
import type { Prediction } from '../types.ts';
import { describeValue, isRecord } from './questions.ts';
import type { SourceRecord } from './records.ts';

function questionIdOf(v: unknown, where: string): number {
  const n = typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `"question_id" must be a non-negative integer (or a string of digits), found ${describeValue(v)}`,
      where,
    );
  }
  return n;
}

/** An optional JSONL field that must be a string array when present. */
function stringArray(v: unknown, field: string, where: string): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'string')) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `"${field}" must be a non-empty array of strings (one per sample), found ${Array.isArray(v) ? (v.length === 0 ? 'an empty array' : 'an array with a non-string element') : describeValue(v)}`,
      where,
    );
  }
  return v as string[];
}

function logprobOf(v: unknown, field: string, where: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new WorkbenchError('BAD_FORMAT', `"${field}" must be a finite number, found ${describeValue(v)}`, where);
  }
  return v;
}

/** One sample: explicit SQL wins over the completion, which is kept either way. */
function samplePrediction(
  position: number,
  questionId: number,
  sql: string | undefined,
  completion: string | undefined,
  meanLogprob: number | undefined,
  options: ExtractOptions,
): Prediction {
  let pred: Prediction;
  if (sql !== undefined) {
    pred = { position, questionId, sql, extraction: { rule: 'sql-field', thinkStripped: false } };
    if (completion !== undefined) pred.completion = completion;
  } else {
    const { sql: extracted, extraction } = extractSql(completion!, options);
    pred = { position, questionId, sql: extracted, extraction, completion: completion! };
  }
  if (meanLogprob !== undefined) pred.meanLogprob = meanLogprob;
  return pred;
}

/**
 * A record holds one sample (`sql` / `completion`) or several (`sqls` / `completions` arrays,
 * e.g. vLLM's n outputs or an RL trainer's rollouts); several records may share a question_id.
 */
export function predictionsFromRecords(
  records: readonly SourceRecord[],
  fileName: string,
  options: ExtractOptions,
): Prediction[] {
  if (records.length === 0) throw new WorkbenchError('BAD_FORMAT', 'the file contains no predictions', fileName);
  return records.flatMap(({ value, line, where }) => {
    if (!isRecord(value)) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `expected an object {"question_id": ..., "sql": ...}, found ${describeValue(value)}`,
        where,
      );
    }
    const questionId = questionIdOf(value.question_id, where);
    const position = line - 1;
    if (value.sqls !== undefined || value.completions !== undefined) {
      if (value.sql !== undefined || value.completion !== undefined) {
        throw new WorkbenchError(
          'BAD_FORMAT',
          'use either "sql"/"completion" (one sample) or "sqls"/"completions" (several samples) on a line, not both',
          where,
        );
      }
      const sqls = stringArray(value.sqls, 'sqls', where);
      const completions = stringArray(value.completions, 'completions', where);
      const n = (sqls ?? completions)!.length;
      if (sqls && completions && sqls.length !== completions.length) {
        throw new WorkbenchError(
          'BAD_FORMAT',
          `"sqls" has ${sqls.length} samples but "completions" has ${completions.length}`,
          where,
        );
      }
      let logprobs: unknown[] | undefined;
      if (value.mean_logprobs !== undefined && value.mean_logprobs !== null) {
        if (!Array.isArray(value.mean_logprobs) || value.mean_logprobs.length !== n) {
          throw new WorkbenchError(
            'BAD_FORMAT',
            `"mean_logprobs" must be an array of ${n} numbers, one per sample`,
            where,
          );
        }
        logprobs = value.mean_logprobs;
      }
      return Array.from({ length: n }, (_, k) =>
        samplePrediction(
          position,
          questionId,
          sqls?.[k],
          completions?.[k],
          logprobOf(logprobs?.[k], `mean_logprobs[${k}]`, where),
          options,
        ),
      );
    }
    if (value.sql !== undefined && typeof value.sql !== 'string') {
      throw new WorkbenchError('BAD_FORMAT', `"sql" must be a string, found ${describeValue(value.sql)}`, where);
    }
    const completion = typeof value.completion === 'string' ? value.completion : undefined;
    if (value.sql === undefined && completion === undefined) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `needs a "sql" string or a "completion" string (raw model output), or "sqls"/"completions" arrays, found "completion" ${describeValue(value.completion)}`,
        where,
      );
    }
    const meanLogprob = logprobOf(value.mean_logprob, 'mean_logprob', where);
    return [samplePrediction(position, questionId, value.sql as string | undefined, completion, meanLogprob, options)];
  });
}
