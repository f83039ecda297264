/**
 * The series report as tables (CSV and Parquet, docs/series.md "Outputs"): one row per step and
 * one row per question x step, and the JSON of `series --out` with the same field names.
 */
import type { Exclusion } from '../eval/exclusions.ts';
import type { TableSchema, TableColumn, ColumnType } from '../views/tables.ts';
import { csvCell } from '../util/csv-cell.ts';
import { UNEARNED_KINDS } from './earned.ts';
import type { QuestionDynamics, SeriesReport, StepStats } from './stats.ts';

const col = <R>(name: string, type: ColumnType, nullable: boolean, value: TableColumn<R>['value']): TableColumn<R> => ({
  name,
  type,
  nullable,
  value,
});

const SERIES_TABLE_VERSION = 1;

/** The key-value metadata of a series table's Parquet file (the CLI's and the app's alike). */
export function seriesTableMetadata(table: Pick<TableSchema<never>, 'table' | 'version'>): Record<string, string> {
  return { 'rlvr-workbench.table': table.table, 'rlvr-workbench.version': String(table.version) };
}

/** Step columns: `series --out` steps[] keys, CSV header and Parquet columns, in this order. */
export const SERIES_STEPS_TABLE: TableSchema<StepStats> = {
  table: 'series-steps',
  version: SERIES_TABLE_VERSION,
  columns: [
    col('step', 'INT64', false, (s) => s.step),
    col('questions', 'INT32', false, (s) => s.questions),
    col('samples', 'INT32', false, (s) => s.samples),
    col('n_min', 'INT32', false, (s) => s.nMin),
    col('n_max', 'INT32', false, (s) => s.nMax),
    col('ex', 'DOUBLE', true, (s) => s.ex),
    col('ts', 'DOUBLE', true, (s) => s.ts),
    col('pass_at_1', 'DOUBLE', false, (s) => s.passAt1),
    col('pass_at_n', 'DOUBLE', false, (s) => s.passAtN),
    col('maj_at_n', 'DOUBLE', false, (s) => s.majAtN),
    col('zero_variance', 'DOUBLE', false, (s) => s.zeroVariance),
    col('all_right', 'DOUBLE', false, (s) => s.allRight),
    col('all_wrong', 'DOUBLE', false, (s) => s.allWrong),
    col('mixed', 'DOUBLE', false, (s) => s.mixed),
    col('result_groups', 'DOUBLE', false, (s) => s.resultGroups),
    col('completion_chars', 'DOUBLE', false, (s) => s.completionChars),
    col('extraction_failures', 'INT32', false, (s) => s.extractionFailures),
    col('errors', 'INT32', false, (s) => s.errors),
    col('timeouts', 'INT32', false, (s) => s.timeouts),
    col('writes', 'INT32', false, (s) => s.writes),
    col('ex_only', 'INT32', true, (s) => s.exOnly),
    col('empty_result_passes', 'INT32', false, (s) => s.emptyResultPasses),
    col('trainer_reward', 'DOUBLE', true, (s) => s.trainerReward),
    col('trainer_scored', 'INT32', true, (s) => s.trainerScored),
    col('trainer_right_ex_wrong', 'INT32', true, (s) => s.trainerRightExWrong),
    col('trainer_wrong_ex_right', 'INT32', true, (s) => s.trainerWrongExRight),
    col('wall_time', 'STRING', true, (s) => s.wallTime),
    col('wall_time_source', 'STRING', true, (s) => s.wallTimeSource),
    col('ex_ci_low', 'DOUBLE', true, (s) => s.exCiLow),
    col('ex_ci_high', 'DOUBLE', true, (s) => s.exCiHigh),
    col('earned', 'DOUBLE', true, (s) => s.earned),
    col('pass_hat_n', 'DOUBLE', false, (s) => s.passHatN),
    ...UNEARNED_KINDS.map((k) =>
      col<StepStats>(`unearned_${k.replace('-', '_')}`, 'INT32', false, (s) => s.unearned[k]),
    ),
  ],
};

interface QuestionStepRow {
  question: QuestionDynamics;
  step: number;
  at: number;
}

export const SERIES_QUESTION_STEPS_TABLE: TableSchema<QuestionStepRow> = {
  table: 'series-question-steps',
  version: SERIES_TABLE_VERSION,
  columns: [
    col('question_id', 'INT64', false, (r) => r.question.questionId),
    col('index', 'INT32', false, (r) => r.question.index),
    col('db_id', 'STRING', false, (r) => r.question.dbId),
    col('step', 'INT64', false, (r) => r.step),
    col('pass_rate', 'DOUBLE', true, (r) => r.question.passRates[r.at]),
    col('right', 'BOOLEAN', true, (r) => r.question.verdicts[r.at]),
    col('earned_rate', 'DOUBLE', true, (r) => r.question.earnedRates[r.at]),
    col('bucket', 'STRING', false, (r) => r.question.bucket),
    col('first_solved_step', 'INT64', true, (r) => r.question.firstSolvedStep),
    col('last_solved_step', 'INT64', true, (r) => r.question.lastSolvedStep),
    col('flips', 'INT32', false, (r) => r.question.flips),
  ],
};

export function questionStepRows(report: SeriesReport): QuestionStepRow[] {
  return report.questions.flatMap((question) => report.steps.map((s, at) => ({ question, step: s.step, at })));
}

/** RFC 4180 CSV of a table, header first. */
export function tableCsv<R>(table: TableSchema<R>, rows: readonly R[]): string {
  const lines = [table.columns.map((c) => c.name).join(',')];
  for (const r of rows) lines.push(table.columns.map((c) => csvCell(c.value(r))).join(','));
  return lines.join('\r\n') + '\r\n';
}

function record<R>(table: TableSchema<R>, row: R): Record<string, unknown> {
  return Object.fromEntries(table.columns.map((c) => [c.name, c.value(row) ?? null]));
}

/** The JSON of `series --out`: steps (the step table's columns), questions, bucket counts, warnings. */
export function seriesReportJson(
  report: SeriesReport,
  meta: { stepRule: string; dataset: string; exclusions?: readonly Exclusion[] },
): object {
  return {
    format: 'rlvr-workbench-series-report',
    version: SERIES_TABLE_VERSION,
    dataset: meta.dataset,
    step_rule: meta.stepRule,
    steps: report.steps.map((s) => record(SERIES_STEPS_TABLE, s)),
    questions: report.questions.map((q) => ({
      question_id: q.questionId,
      index: q.index,
      db_id: q.dbId,
      difficulty: q.difficulty,
      bucket: q.bucket,
      first_solved_step: q.firstSolvedStep,
      last_solved_step: q.lastSolvedStep,
      flips: q.flips,
      pass_rates: q.passRates,
      earned_rates: q.earnedRates,
    })),
    buckets: report.buckets,
    best_step: report.best && {
      step: report.best.step,
      ex: report.best.ex,
      earned: report.best.earned,
      ci_low: report.best.ciLow,
      ci_high: report.best.ciHigh,
      resamples: report.best.resamples,
      by_ex: report.best.byEx && {
        step: report.best.byEx.step,
        ex: report.best.byEx.ex,
        earned: report.best.byEx.earned,
        unearned: report.best.byEx.unearned,
        warnings: report.best.byEx.warnings,
        message: report.best.byEx.message,
      },
    },
    warnings: report.warnings.map((w) => ({ rule: w.rule, start_step: w.startStep, message: w.message })),
    // The questions left out of every number above (with why, who and when); absent when none is.
    ...(meta.exclusions?.length
      ? {
          excluded: meta.exclusions.map((e) => ({
            question_id: e.questionId,
            reason: e.reason,
            author: e.author,
            date: e.date,
          })),
        }
      : {}),
  };
}
