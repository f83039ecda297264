/**
 * A run read back from its samples Parquet table (`eval --parquet`, `stats --parquet` of a run,
 * the app's Parquet export; core/views/tables.ts SAMPLES_TABLE): the run header is the file's
 * `rlvr-workbench.run` key-value metadata, each row becomes the sample a run file would hold,
 * and both go through the run file's own checks (`runFileFromParts`). What the table does not
 * hold stays out: a generation run's per-sample prompt and fit (the `generation` record), the
 * test-suite verdicts and the findings. Enough for everything `stats` computes.
 */
import { WorkbenchError } from '../errors.ts';
import type { SourceRecord } from '../formats/records.ts';
import { SAMPLES_TABLE } from './tables.ts';
import type { RunFile, RunQuestion } from '../run/types.ts';
import { runFileFromParts } from '../runfile/run-file.ts';

type Row = Record<string, unknown>;

/** Sample fields (run file name) from columns (table name); absent or null columns stay out. */
const FIELDS: ReadonlyArray<readonly [string, string]> = [
  ['index', 'index'],
  ['questionId', 'question_id'],
  ['dbId', 'db_id'],
  ['difficulty', 'difficulty'],
  ['sample', 'sample'],
  ['status', 'status'],
  ['ex', 'ex'],
  ['softF1', 'soft_f1'],
  ['rves', 'rves'],
  ['timeRatio', 'time_ratio'],
  ['format', 'format'],
  ['reward', 'reward'],
  ['mutatedDb', 'mutated_db'],
  ['predRowCount', 'pred_rows'],
  ['goldRowCount', 'gold_rows'],
  ['predColumnCount', 'pred_columns'],
  ['goldColumnCount', 'gold_columns'],
  ['elapsedMs', 'elapsed_ms'],
  ['error', 'error'],
  ['resultKey', 'result_key'],
  ['sql', 'sql'],
  ['goldSql', 'gold_sql'],
  ['completion', 'completion'],
  ['meanLogprob', 'mean_logprob'],
  ['rubricScore', 'rubric_score'],
];
/** Fields a run file always has, null when empty (the table leaves a null column out of the row). */
const NULLABLE = ['softF1', 'rves', 'timeRatio', 'predRowCount', 'goldRowCount', 'elapsedMs', 'error'];

const json = (v: unknown): unknown => (typeof v === 'string' ? (JSON.parse(v) as unknown) : v);

function sampleOf(row: Row): Row {
  const out: Row = {};
  for (const [field, column] of FIELDS) if (row[column] !== undefined) out[field] = row[column];
  for (const field of NULLABLE) if (!(field in out)) out[field] = null;
  out.extraction = { rule: row.extraction_rule, thinkStripped: row.think_stripped };
  if (row.rubric !== undefined) out.rubric = json(row.rubric);
  return out;
}

/** The run of a samples table, or an error naming the file and saying which file to give instead. */
export function runFileFromSamplesTable(
  records: readonly SourceRecord[],
  keyValue: Readonly<Record<string, string>>,
  fileName: string,
): RunFile {
  const table = keyValue['rlvr-workbench.table'];
  const version = Number(keyValue['rlvr-workbench.version']);
  const header = keyValue['rlvr-workbench.run'];
  if (table === undefined || header === undefined) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      'is a Parquet file without the workbench run it came from (no "rlvr-workbench.run" metadata): give a run file (`eval --run-out`, the app\'s run export) or the samples Parquet the workbench writes (`eval --parquet`)',
      fileName,
    );
  }
  if (table !== SAMPLES_TABLE.table) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `is the workbench's "${table}" table, not a run's samples: give the run's samples Parquet (\`eval --parquet\`) or its run file`,
      fileName,
    );
  }
  if (!Number.isInteger(version) || version < 1 || version > SAMPLES_TABLE.version) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `samples table version ${keyValue['rlvr-workbench.version']} ${version > SAMPLES_TABLE.version ? 'was written by a newer workbench' : 'is unknown'}; this one reads versions 1 to ${SAMPLES_TABLE.version}`,
      fileName,
    );
  }
  let run: unknown;
  try {
    run = JSON.parse(header);
  } catch {
    throw new WorkbenchError(
      'BAD_FORMAT',
      'its "rlvr-workbench.run" metadata is not JSON: export the run again',
      fileName,
    );
  }
  const questions = new Map<number, RunQuestion>();
  const samples = records.map((rec) => {
    const row = (rec.value ?? {}) as Row;
    const index = row.index;
    if (typeof row.question === 'string' && typeof index === 'number' && !questions.has(index)) {
      questions.set(index, {
        index,
        questionId: row.question_id as number,
        dbId: row.db_id as string,
        question: row.question,
        evidence: typeof row.evidence === 'string' ? row.evidence : '',
      });
    }
    return { value: sampleOf(row), where: `row ${rec.line}` };
  });
  return runFileFromParts(
    run,
    samples,
    questions.size > 0 ? [...questions.values()].sort((a, b) => a.index - b.index) : undefined,
    fileName,
  );
}
