/**
 * Tables for columnar exports (Parquet): a run's samples and a run's per-prompt statistics, one
 * row per sample / prompt, with a documented, versioned schema (docs/formats.md, "Parquet out").
 * Pure: a table is a list of typed columns with a value function; the Parquet writer lives in
 * src/adapters/parquet. Bump a table's version when a column changes meaning or type; adding a
 * column at the end keeps the version's readers working and is noted in docs/formats.md.
 */
import { exclusionMap, type Exclusion } from '../eval/exclusions.ts';
import type { PromptNumbers } from '../rl/stats-view.ts';
import { exportedSample, type ExportedSample } from '../runfile/export.ts';
import type { RunHeader, RunQuestion, SampleRecord } from '../run/types.ts';

/** Column types as written: INT64 from JS numbers, JSON as UTF-8 text with the JSON annotation, DOUBLE_LIST as list<double>. */
export type ColumnType = 'BOOLEAN' | 'INT32' | 'INT64' | 'DOUBLE' | 'STRING' | 'JSON' | 'DOUBLE_LIST';

export interface TableColumn<R> {
  name: string;
  type: ColumnType;
  nullable: boolean;
  value: (row: R) => string | number | boolean | null | undefined | object;
}

export interface TableSchema<R> {
  /** Written as the file's `rlvr-workbench.table` key-value metadata. */
  table: string;
  version: number;
  columns: readonly TableColumn<R>[];
}

const col = <R>(name: string, type: ColumnType, nullable: boolean, value: TableColumn<R>['value']): TableColumn<R> => ({
  name,
  type,
  nullable,
  value,
});

/** A sample with its question's text, when the run knew it; an unscored sample's scores are null (export.ts). */
interface SampleRow {
  sample: ExportedSample;
  question: RunQuestion | undefined;
  /** The question's exclusion from the metrics, when it is excluded (the app's and `eval --exclude`'s). */
  excluded?: Exclusion | undefined;
}

/** Version 2: `ex` and `reward` are nullable, null (as every score) for a sample never scored (docs/formats.md). */
const SAMPLES_TABLE_VERSION = 2;

export const SAMPLES_TABLE: TableSchema<SampleRow> = {
  table: 'samples',
  version: SAMPLES_TABLE_VERSION,
  columns: [
    col('index', 'INT32', false, ({ sample }) => sample.index),
    col('question_id', 'INT64', false, ({ sample }) => sample.questionId),
    col('db_id', 'STRING', false, ({ sample }) => sample.dbId),
    col('difficulty', 'STRING', false, ({ sample }) => sample.difficulty),
    col('sample', 'INT32', false, ({ sample }) => sample.sample),
    col('status', 'STRING', false, ({ sample }) => sample.status),
    col('ex', 'INT32', true, ({ sample }) => sample.ex),
    col('soft_f1', 'DOUBLE', true, ({ sample }) => sample.softF1),
    col('rves', 'DOUBLE', true, ({ sample }) => sample.rves),
    col('time_ratio', 'DOUBLE', true, ({ sample }) => sample.timeRatio),
    col('format', 'INT32', false, ({ sample }) => sample.format),
    col('reward', 'DOUBLE', true, ({ sample }) => sample.reward),
    col('mutated_db', 'BOOLEAN', false, ({ sample }) => sample.mutatedDb),
    col('extraction_rule', 'STRING', false, ({ sample }) => sample.extraction.rule),
    col('think_stripped', 'BOOLEAN', false, ({ sample }) => sample.extraction.thinkStripped),
    col('pred_rows', 'INT64', true, ({ sample }) => sample.predRowCount),
    col('gold_rows', 'INT64', true, ({ sample }) => sample.goldRowCount),
    col('pred_columns', 'INT32', true, ({ sample }) => sample.predColumnCount),
    col('gold_columns', 'INT32', true, ({ sample }) => sample.goldColumnCount),
    col('elapsed_ms', 'DOUBLE', true, ({ sample }) => sample.elapsedMs),
    col('error', 'STRING', true, ({ sample }) => sample.error),
    col('result_key', 'STRING', true, ({ sample }) => sample.resultKey),
    col('sql', 'STRING', false, ({ sample }) => sample.sql),
    col('gold_sql', 'STRING', false, ({ sample }) => sample.goldSql),
    col('completion', 'STRING', true, ({ sample }) => sample.completion),
    col('mean_logprob', 'DOUBLE', true, ({ sample }) => sample.meanLogprob),
    col('question', 'STRING', true, ({ question }) => question?.question),
    col('evidence', 'STRING', true, ({ question }) => question?.evidence),
    col('rubric_id', 'STRING', true, ({ sample }) => sample.rubric?.rubricId),
    col('rubric_score', 'DOUBLE', true, ({ sample }) => sample.rubricScore),
    col('rubric_explicit', 'DOUBLE', true, ({ sample }) => sample.rubric?.explicit?.score),
    col('rubric_implicit', 'DOUBLE', true, ({ sample }) => sample.rubric?.implicit?.score),
    col('rubric_likert', 'DOUBLE', true, ({ sample }) => sample.rubric?.likert?.score),
    col('rubric_prompt_injection', 'BOOLEAN', true, ({ sample }) => sample.rubric?.promptInjection.flagged),
    col('rubric', 'JSON', true, ({ sample }) => sample.rubric),
    col('gen_engine', 'STRING', true, ({ sample }) => sample.generation?.engine),
    col('gen_model', 'STRING', true, ({ sample }) => sample.generation?.model),
    col('gen_template_id', 'STRING', true, ({ sample }) => sample.generation?.templateId),
    col('gen_tokens_in', 'INT64', true, ({ sample }) => sample.generation?.tokensIn),
    col('gen_tokens_out', 'INT64', true, ({ sample }) => sample.generation?.tokensOut),
    col('gen_latency_ms', 'DOUBLE', true, ({ sample }) => sample.generation?.latencyMs),
    col('gen_finish_reason', 'STRING', true, ({ sample }) => sample.generation?.finishReason),
    col('gen_seed', 'INT64', true, ({ sample }) => sample.generation?.seed),
    col('gen_error', 'STRING', true, ({ sample }) => sample.generation?.error),
    col('gen_prompt', 'JSON', true, ({ sample }) => sample.generation?.prompt),
    col('gen_fit', 'JSON', true, ({ sample }) => sample.generation?.fit),
    // Added in version 1 (at the end, docs/formats.md): the device that ran the sample.
    col('gen_device', 'STRING', true, ({ sample }) => sample.generation?.device),
    col('gen_device_reason', 'STRING', true, ({ sample }) => sample.generation?.deviceReason),
    col('gen_device_detail', 'STRING', true, ({ sample }) => sample.generation?.deviceDetail),
    // Added in version 1 (at the end): a corrected-gold overlay's verdicts (null without one) and the re-run on the older SQLite.
    col('ex_corrected', 'INT32', true, ({ sample }) => sample.corrected?.ex),
    col('soft_f1_corrected', 'DOUBLE', true, ({ sample }) => sample.corrected?.softF1),
    col('gold_sql_corrected', 'STRING', true, ({ sample }) =>
      sample.corrected?.changed ? sample.corrected.goldSql : null,
    ),
    col('version_check_sqlite', 'STRING', true, ({ sample }) => sample.versionCheck?.sqliteVersion),
    col('version_check_ex', 'INT32', true, ({ sample }) => sample.versionCheck?.ex),
    col('version_check_soft_f1', 'DOUBLE', true, ({ sample }) => sample.versionCheck?.softF1),
    col('version_check_differs', 'BOOLEAN', true, ({ sample }) => sample.versionCheck?.differs),
    col('version_check_planner', 'BOOLEAN', true, ({ sample }) =>
      sample.versionCheck ? sample.versionCheck.planner === true : undefined,
    ),
    // Added in version 2 (at the end): an excluded question's exclusion (null on the others), as the run file's `excluded`.
    col('excluded_reason', 'STRING', true, ({ excluded }) => excluded?.reason),
    col('excluded_author', 'STRING', true, ({ excluded }) => excluded?.author),
    col('excluded_date', 'STRING', true, ({ excluded }) => excluded?.date),
  ],
};

/** The rows of a run's samples table, in (index, sample) order, each with its question's text. */
export function sampleRows(
  samples: readonly SampleRecord[],
  questions: readonly RunQuestion[] | undefined,
  exclusions?: readonly Exclusion[],
): SampleRow[] {
  const byIndex = new Map((questions ?? []).map((q) => [q.index, q]));
  const excluded = exclusionMap(exclusions);
  return [...samples]
    .sort((a, b) => a.index - b.index || a.sample - b.sample)
    .map((sample) => ({
      sample: exportedSample(sample),
      question: byIndex.get(sample.index),
      excluded: excluded.get(sample.questionId),
    }));
}

/** Key-value metadata of a run export: the table, its version and the run header as JSON. */
export function runTableMetadata(
  schema: Pick<TableSchema<never>, 'table' | 'version'>,
  run: RunHeader,
): Record<string, string> {
  return {
    'rlvr-workbench.table': schema.table,
    'rlvr-workbench.version': String(schema.version),
    'rlvr-workbench.run': JSON.stringify(run),
  };
}

const PROMPT_STATS_TABLE_VERSION = 1;

/** Per-prompt statistics (the `stats` command's prompts), with pass@k and maj@k for the run's ks. */
export function promptStatsTable(ks: readonly number[]): TableSchema<PromptNumbers> {
  return {
    table: 'prompt-stats',
    version: PROMPT_STATS_TABLE_VERSION,
    columns: [
      col('index', 'INT32', false, (p) => p.index),
      col('question_id', 'INT64', false, (p) => p.questionId),
      col('db_id', 'STRING', false, (p) => p.dbId),
      col('difficulty', 'STRING', false, (p) => p.difficulty),
      col('n', 'INT32', false, (p) => p.n),
      col('correct', 'INT32', false, (p) => p.correct),
      col('pass_rate', 'DOUBLE', false, (p) => p.passRate),
      col('mean_reward', 'DOUBLE', false, (p) => p.meanReward),
      col('grpo_mean', 'DOUBLE', false, (p) => p.grpoMean),
      col('grpo_std', 'DOUBLE', false, (p) => p.grpoStd),
      col('zero_variance', 'BOOLEAN', false, (p) => p.zeroVariance),
      col('frontier', 'BOOLEAN', false, (p) => p.frontier),
      col('voters', 'INT32', false, (p) => p.voters),
      col('vote_size', 'INT32', false, (p) => p.vote.size),
      col('vote_tied', 'INT32', false, (p) => p.vote.tied),
      col('vote_score', 'DOUBLE', false, (p) => p.vote.score),
      ...ks.map((k) => col<PromptNumbers>(`pass_at_${k}`, 'DOUBLE', false, (p) => p.passAtK[k]!)),
      ...ks.map((k) => col<PromptNumbers>(`maj_at_${k}`, 'DOUBLE', false, (p) => p.majAtK[k]!)),
      col('advantages', 'DOUBLE_LIST', false, (p) => p.advantages),
    ],
  };
}
