/**
 * Exports of a run (pure): the run file (header + samples), predictions in BIRD's format so
 * that the official evaluator or our CLI reproduces the run's numbers, and CSV. Reading a run
 * file back (the boundary check) is `parseRunFile` in run-file.ts.
 */
import { csvCell } from '../util/csv-cell.ts';
import { exclusionMap, type Exclusion } from '../eval/exclusions.ts';
import {
  AGGREGATION_IDS,
  DEFAULT_AGGREGATION_IDS,
  aggregationScore,
  type AggregationId,
} from '../rubric/aggregations.ts';
import { BIRD_SEPARATOR } from '../formats/predictions.ts';
import {
  RUN_FILE_FORMAT,
  RUN_FILE_VERSION,
  type RunFile,
  type RunHeader,
  type RunQuestion,
  type SampleRecord,
} from '../run/types.ts';

/**
 * A sample as every export writes it. One never scored (its database was not imported) has every
 * score null (`ex`, `softF1`, `rves`, `timeRatio`, `ts`, `reward`, the rubric's), never 0 or a
 * rubric's 1, and its `status` (`missing-db`) and `error` say why: a plain mean over an export is
 * the dashboard's. `parseRunFile` reads such a sample back as the store keeps it.
 */
export type ExportedSample = Omit<
  SampleRecord,
  'ex' | 'softF1' | 'rves' | 'timeRatio' | 'ts' | 'reward' | 'rubricScore' | 'rubric'
> & {
  ex: SampleRecord['ex'] | null;
  softF1: number | null;
  rves: number | null;
  timeRatio: number | null;
  ts?: SampleRecord['ts'];
  reward: number | null;
  rubricScore?: number | null;
  rubric?: SampleRecord['rubric'] | null;
};

/** The sample was never scored (its database is missing): no score of it means anything. */
const isUnscoredSample = (s: Pick<SampleRecord, 'status'>) => s.status === 'missing-db';

export function exportedSample(s: SampleRecord): ExportedSample {
  if (!isUnscoredSample(s)) return s;
  return {
    ...s,
    ex: null,
    softF1: null,
    rves: null,
    timeRatio: null,
    reward: null,
    ...(s.ts !== undefined ? { ts: null } : {}),
    ...(s.rubricScore !== undefined ? { rubricScore: null } : {}),
    ...(s.rubric !== undefined ? { rubric: null } : {}),
  };
}

function bySampleOrder(a: SampleRecord, b: SampleRecord): number {
  return a.index - b.index || a.sample - b.sample;
}

/** A run file with its samples in (index, sample) order; `questions` adds their texts. */
export function toRunFile(run: RunHeader, samples: readonly SampleRecord[], questions?: RunQuestion[]): RunFile {
  const file: RunFile = {
    format: RUN_FILE_FORMAT,
    version: RUN_FILE_VERSION,
    run,
    samples: [...samples].sort(bySampleOrder),
  };
  if (questions) file.questions = questions;
  return file;
}

/** The exclusion of an excluded question as a sample of the run file carries it (without the id: the sample has it). */
type SampleExclusion = Omit<Exclusion, 'questionId'>;

/**
 * A sample as the run file writes it: `exportedSample`, and for a question excluded from the
 * metrics its exclusion, `excluded: {reason, author, date}` (docs/formats.md); the others as they are.
 */
function runFileSample(
  s: SampleRecord,
  excluded: ReadonlyMap<number, Exclusion> | null,
): ExportedSample & { excluded?: SampleExclusion } {
  const out = exportedSample(s);
  const e = excluded?.get(s.questionId);
  if (!e) return out;
  const mark: SampleExclusion = { reason: e.reason, author: e.author, date: e.date };
  return { ...out, excluded: mark };
}

/** JSON text of a run file; bigint-free by construction (samples hold scores, not rows). */
export function runFileJson(file: RunFile): string {
  return markedRunFileJson(file, null);
}

/** `runFileJson` with the samples of each excluded question carrying its exclusion (`excluded`). */
function markedRunFileJson(file: RunFile, excluded: ReadonlyMap<number, Exclusion> | null): string {
  return JSON.stringify({ ...file, samples: file.samples.map((s) => runFileSample(s, excluded)) }, null, 1);
}

/**
 * BIRD predictions `{"0": "SQL\t----- bird -----\tdb_id", ...}` in gold order, first sample of
 * each question. Keys run from 0 to the last gold index of the run, because BIRD pairs by
 * position: a gold line the run did not evaluate gets an empty prediction (scored as an error
 * by the evaluator), so the run's own items keep their positions and their numbers.
 */
export function toBirdPredictions(samples: readonly SampleRecord[]): Record<string, string> {
  const first = new Map<number, SampleRecord>();
  for (const s of samples) {
    const had = first.get(s.index);
    if (!had || s.sample < had.sample) first.set(s.index, s);
  }
  let last = -1;
  for (const i of first.keys()) if (i > last) last = i;
  const out: Record<string, string> = {};
  for (let i = 0; i <= last; i++) {
    const s = first.get(i);
    out[String(i)] = s ? `${s.sql}${BIRD_SEPARATOR}${s.dbId}` : `${BIRD_SEPARATOR}not-in-run`;
  }
  return out;
}

export function birdPredictionsJson(samples: readonly SampleRecord[]): string {
  return JSON.stringify(toBirdPredictions(samples), null, 4);
}

/** The stored rubric aggregations that get CSV columns of their own (explicit, implicit, Likert have theirs). */
const CSV_AGGREGATION_IDS: readonly AggregationId[] = AGGREGATION_IDS.filter(
  (id) => !DEFAULT_AGGREGATION_IDS.includes(id),
);

const CSV_COLUMNS = [
  'index',
  'question_id',
  'db_id',
  'difficulty',
  'sample',
  'status',
  'ex',
  'soft_f1',
  'rves',
  'time_ratio',
  'format',
  'reward',
  'mutated_db',
  'extraction_rule',
  'pred_rows',
  'gold_rows',
  'elapsed_ms',
  'error',
  'sql',
  'gold_sql',
  'rubric_id',
  'rubric_score',
  'rubric_explicit',
  'rubric_implicit',
  'rubric_likert',
  // The registry's other rubric aggregations stored with the sample (src/core/rubric/aggregations.ts).
  ...CSV_AGGREGATION_IDS.map((id) => `rubric_${id.replaceAll('-', '_')}`),
  // Generation runs: the device that ran the sample (webgpu, cpu, server, none), why the CPU, which adapter or server.
  'gen_device',
  'gen_device_reason',
  'gen_device_detail',
  // A corrected-gold overlay (empty without one) and the re-run on the older SQLite (flagged samples only).
  'ex_corrected',
  'soft_f1_corrected',
  'gold_sql_corrected',
  'version_check_sqlite',
  'version_check_ex',
  'version_check_soft_f1',
  'version_check_differs',
  'version_check_planner',
] as const;

/** One CSV row of a sample (no line end); an unscored sample's scores are empty cells. */
function csvRow(r: SampleRecord): string {
  const s = exportedSample(r);
  return [
    s.index,
    s.questionId,
    s.dbId,
    s.difficulty,
    s.sample,
    s.status,
    s.ex,
    s.softF1,
    s.rves,
    s.timeRatio,
    s.format,
    s.reward,
    s.mutatedDb,
    s.extraction.rule,
    s.predRowCount,
    s.goldRowCount,
    s.elapsedMs === null ? null : Math.round(s.elapsedMs * 1000) / 1000,
    s.error,
    s.sql,
    s.goldSql,
    s.rubric?.rubricId,
    s.rubricScore,
    s.rubric?.explicit?.score,
    s.rubric?.implicit?.score,
    s.rubric?.likert?.score,
    ...CSV_AGGREGATION_IDS.map((id) => aggregationScore(s.rubric?.aggregations, id)),
    s.generation?.device,
    s.generation?.deviceReason,
    s.generation?.deviceDetail,
    s.corrected?.ex,
    s.corrected?.softF1,
    s.corrected?.changed ? s.corrected.goldSql : undefined,
    s.versionCheck?.sqliteVersion,
    s.versionCheck?.ex,
    s.versionCheck?.softF1,
    s.versionCheck?.differs,
    s.versionCheck ? s.versionCheck.planner === true : undefined,
  ]
    .map(csvCell)
    .join(',');
}

/** RFC 4180 CSV, one row per sample, with a header row. */
export function toCsv(samples: readonly SampleRecord[]): string {
  return [...csvParts(samples)].join('');
}

/** `toCsv`'s text in parts (header, then `perPart` rows each): a large run's export never builds one string. */
export function* csvParts(
  samples: readonly SampleRecord[],
  perPart = 1000,
  trainerScores?: ReadonlyArray<number | null>,
  trainerRewards?: ReadonlyArray<Record<string, number | null> | null>,
  exclusions?: readonly Exclusion[],
): Generator<string> {
  const sorted = [...samples].sort(bySampleOrder);
  // Questions excluded from the metrics keep their rows, marked: a last column `excluded` with the reason.
  const excluded = exclusions?.length ? exclusionMap(exclusions) : null;
  // A step of a training run: the trainer's score of each sample (in (index, sample) order) in a last column.
  const scores = trainerScores?.length === sorted.length ? trainerScores : null;
  // And the dump's reward columns (TRL, prime-rl traces), one column each after it, named as the dump names them.
  const rewards = trainerRewards?.length === sorted.length ? trainerRewards : null;
  const names = rewards ? rewardNames(rewards) : [];
  const header = [...CSV_COLUMNS, ...(scores ? ['trainer_score'] : [])];
  const taken = new Set<string>(header);
  const rewardColumns = names.map((n) => (taken.has(`trainer_${n}`) ? `trainer_reward_${n}` : `trainer_${n}`));
  yield [...header, ...rewardColumns, ...(excluded ? ['excluded'] : [])].map(csvCell).join(',') + '\r\n';
  const tail = (i: number) =>
    (scores ? `,${scores[i] ?? ''}` : '') +
    names.map((n) => `,${csvCell(rewards![i]?.[n] ?? null)}`).join('') +
    (excluded ? `,${csvCell(excluded.get(sorted[i]!.questionId)?.reason ?? null)}` : '');
  for (let i = 0; i < sorted.length; i += perPart) {
    yield sorted
      .slice(i, i + perPart)
      .map((s, k) => csvRow(s) + tail(i + k) + '\r\n')
      .join('');
  }
}

/** Every reward column's name over the samples, in the order first met. */
function rewardNames(rewards: ReadonlyArray<Record<string, number | null> | null>): string[] {
  const names = new Set<string>();
  for (const r of rewards) for (const k of Object.keys(r ?? {})) names.add(k);
  return [...names];
}

/** JSON Lines: one sample record per line, compact, in (index, sample) order, `perPart` lines per part. */
export function* samplesJsonlParts(
  samples: readonly SampleRecord[],
  perPart = 1000,
  trainerScores?: ReadonlyArray<number | null>,
  trainerRewards?: ReadonlyArray<Record<string, number | null> | null>,
  exclusions?: readonly Exclusion[],
): Generator<string> {
  const sorted = [...samples].sort(bySampleOrder);
  // A question excluded from the metrics: its lines carry `excluded` (the reason); null on the others.
  const excluded = exclusions?.length ? exclusionMap(exclusions) : null;
  // A step of a training run: each line's `trainerScore` (in (index, sample) order; null where none)
  // and, where the dump has reward columns, its `trainerRewards` (name to value; null where none).
  const scores = trainerScores?.length === sorted.length ? trainerScores : null;
  const rewards = trainerRewards?.length === sorted.length ? trainerRewards : null;
  const line = (s: SampleRecord, i: number) => ({
    ...exportedSample(s),
    ...(scores ? { trainerScore: scores[i] ?? null } : {}),
    ...(rewards ? { trainerRewards: rewards[i] ?? null } : {}),
    ...(excluded ? { excluded: excluded.get(s.questionId)?.reason ?? null } : {}),
  });
  for (let i = 0; i < sorted.length; i += perPart) {
    yield sorted
      .slice(i, i + perPart)
      .map((s, k) => JSON.stringify(line(s, i + k)) + '\n')
      .join('');
  }
}

/**
 * `runFileJson`'s exact text in parts: the file around its samples, then `perPart` samples each,
 * every sample indented as JSON.stringify(file, null, 1) indents it (depth 2; JSON strings hold
 * no raw newline, so re-indenting lines is safe). A 500,000-sample run is ~350 MB of JSON. With
 * `exclusions`, the samples of each excluded question carry it (`excluded`: reason, author, date).
 */
export function* runFileJsonParts(file: RunFile, perPart = 500, exclusions?: readonly Exclusion[]): Generator<string> {
  const excluded = exclusions?.length ? exclusionMap(exclusions) : null;
  const marker = `__rlvr_samples_${file.samples.length}_${Date.now()}__`;
  const around = JSON.stringify({ ...file, samples: [marker] }, null, 1);
  const cut = around.split(`"${marker}"`);
  if (file.samples.length === 0 || cut.length !== 2) {
    yield markedRunFileJson(file, excluded);
    return;
  }
  yield cut[0]!;
  for (let i = 0; i < file.samples.length; i += perPart) {
    yield file.samples
      .slice(i, i + perPart)
      .map(
        (s, j) =>
          (i + j > 0 ? ',\n  ' : '') + JSON.stringify(runFileSample(s, excluded), null, 1).replaceAll('\n', '\n  '),
      )
      .join('');
  }
  yield cut[1]!;
}
