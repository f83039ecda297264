/**
 * Exports of a run (pure): the run file (header + samples), predictions in BIRD's format so
 * that the official evaluator or our CLI reproduces the run's numbers, and CSV. Plus the
 * boundary check of a run file being imported.
 */
import { WorkbenchError } from '../errors.ts';
import { BIRD_SEPARATOR } from '../formats/predictions.ts';
import { describeValue, isRecord, parseJsonText } from '../formats/questions.ts';
import { RUN_FILE_FORMAT, RUN_FILE_VERSION, type RunFile, type RunHeader, type SampleRecord } from './types.ts';

function bySampleOrder(a: SampleRecord, b: SampleRecord): number {
  return a.index - b.index || a.sample - b.sample;
}

export function toRunFile(run: RunHeader, samples: readonly SampleRecord[]): RunFile {
  return { format: RUN_FILE_FORMAT, version: RUN_FILE_VERSION, run, samples: [...samples].sort(bySampleOrder) };
}

/** JSON text of a run file; bigint-free by construction (samples hold scores, not rows). */
export function runFileJson(file: RunFile): string {
  return JSON.stringify(file, null, 1);
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
  const last = Math.max(-1, ...first.keys());
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

const CSV_COLUMNS = [
  'index', 'question_id', 'db_id', 'difficulty', 'sample', 'status', 'ex', 'soft_f1', 'rves', 'time_ratio', 'format',
  'reward', 'mutated_db', 'extraction_rule', 'pred_rows', 'gold_rows', 'elapsed_ms', 'error', 'sql', 'gold_sql',
] as const;

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** RFC 4180 CSV, one row per sample, with a header row. */
export function toCsv(samples: readonly SampleRecord[]): string {
  const rows = [...samples].sort(bySampleOrder).map((s) =>
    [
      s.index, s.questionId, s.dbId, s.difficulty, s.sample, s.status, s.ex, s.softF1, s.rves, s.timeRatio, s.format,
      s.reward, s.mutatedDb, s.extraction.rule, s.predRowCount, s.goldRowCount,
      s.elapsedMs === null ? null : Math.round(s.elapsedMs * 1000) / 1000, s.error, s.sql, s.goldSql,
    ].map(csvCell).join(','),
  );
  return [CSV_COLUMNS.join(','), ...rows].join('\r\n') + '\r\n';
}

// ---- Import of a run file: validated here, trusted inside. ----

type Check = (v: unknown) => boolean;
const str: Check = (v) => typeof v === 'string';
const num: Check = (v) => typeof v === 'number' && Number.isFinite(v);
const int: Check = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const numOrNull: Check = (v) => v === null || num(v);
const intOrNull: Check = (v) => v === null || int(v);
const strOrNull: Check = (v) => v === null || str(v);
const bool: Check = (v) => typeof v === 'boolean';
const oneOf = (...xs: unknown[]): Check => (v) => xs.includes(v);
const obj: Check = (v) => isRecord(v);

function need(o: Record<string, unknown>, key: string, ok: Check, want: string, where: string): void {
  if (!ok(o[key])) throw new WorkbenchError('BAD_FORMAT', `"${key}" must be ${want}, found ${describeValue(o[key])}`, where);
}

function checkFileRef(v: unknown, where: string): void {
  if (!isRecord(v)) throw new WorkbenchError('BAD_FORMAT', `expected a file reference {name, sha256, bytes}, found ${describeValue(v)}`, where);
  need(v, 'name', str, 'a string', where);
  need(v, 'sha256', str, 'a string', where);
  need(v, 'bytes', int, 'a byte count', where);
}

function checkHeader(run: unknown, where: string): void {
  if (!isRecord(run)) throw new WorkbenchError('BAD_FORMAT', `"run" must be an object, found ${describeValue(run)}`, where);
  for (const k of ['id', 'name', 'createdAt', 'updatedAt', 'executor']) need(run, k, str, 'a string', where);
  need(run, 'status', oneOf('running', 'done', 'cancelled', 'failed'), 'running, done, cancelled or failed', where);
  need(run, 'samplesPerQuestion', int, 'a count', where);
  need(run, 'source', obj, 'an object', where);
  need(run, 'dataset', obj, 'an object', where);
  need(run, 'subset', obj, 'an object', where);
  need(run, 'config', obj, 'an object', where);
  const source = run.source as Record<string, unknown>;
  need(source, 'kind', oneOf('replay', 'generation'), '"replay" or "generation"', `${where}.source`);
  if (source.kind === 'replay') checkFileRef(source.predictions, `${where}.source.predictions`);
  const ds = run.dataset as Record<string, unknown>;
  need(ds, 'id', str, 'a string', `${where}.dataset`);
  need(ds, 'name', str, 'a string', `${where}.dataset`);
  checkFileRef(ds.questions, `${where}.dataset.questions`);
  if (ds.gold !== null) checkFileRef(ds.gold, `${where}.dataset.gold`);
  need(ds, 'databases', obj, 'an object', `${where}.dataset`);
  const subset = run.subset as Record<string, unknown>;
  need(subset, 'description', str, 'a string', `${where}.subset`);
  need(subset, 'indices', (v) => Array.isArray(v) && v.every(int), 'an array of indices', `${where}.subset`);
  const config = run.config as Record<string, unknown>;
  need(config, 'metrics', (v) => Array.isArray(v) && v.every(oneOf('ex', 'soft-f1', 'r-ves')), 'a list of metrics', `${where}.config`);
  need(config, 'timeoutMs', num, 'a number', `${where}.config`);
  need(config, 'readOnly', bool, 'true or false', `${where}.config`);
}

function checkSample(s: unknown, where: string): void {
  if (!isRecord(s)) throw new WorkbenchError('BAD_FORMAT', `expected a sample object, found ${describeValue(s)}`, where);
  for (const k of ['index', 'questionId', 'sample']) need(s, k, int, 'a non-negative integer', where);
  for (const k of ['dbId', 'sql', 'goldSql']) need(s, k, str, 'a string', where);
  need(s, 'difficulty', oneOf('simple', 'moderate', 'challenging', 'unknown'), 'a difficulty', where);
  need(s, 'status', oneOf('ok', 'error', 'timeout', 'missing-db'), 'ok, error, timeout or missing-db', where);
  need(s, 'ex', oneOf(0, 1), '0 or 1', where);
  need(s, 'format', oneOf(0, 1), '0 or 1', where);
  need(s, 'reward', num, 'a number', where);
  for (const k of ['softF1', 'rves', 'timeRatio', 'elapsedMs']) need(s, k, numOrNull, 'a number or null', where);
  for (const k of ['predRowCount', 'goldRowCount']) need(s, k, intOrNull, 'a count or null', where);
  need(s, 'error', strOrNull, 'a string or null', where);
  need(s, 'mutatedDb', bool, 'true or false', where);
  need(s, 'extraction', (v) => isRecord(v) && str(v.rule) && bool(v.thinkStripped), 'an extraction {rule, thinkStripped}', where);
}

/** Parses and validates a run file; errors name the file and the field. */
export function parseRunFile(text: string, fileName: string): RunFile {
  const v = parseJsonText(text, fileName);
  if (!isRecord(v) || v.format !== RUN_FILE_FORMAT) {
    throw new WorkbenchError('BAD_FORMAT', `not a workbench run file (expected "format": "${RUN_FILE_FORMAT}")`, fileName);
  }
  if (v.version !== RUN_FILE_VERSION) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `run file version ${describeValue(v.version)} is not supported (this workbench reads version ${RUN_FILE_VERSION})`,
      fileName,
    );
  }
  checkHeader(v.run, `${fileName}: run`);
  if (!Array.isArray(v.samples)) throw new WorkbenchError('BAD_FORMAT', `"samples" must be an array, found ${describeValue(v.samples)}`, fileName);
  const seen = new Set<string>();
  v.samples.forEach((s, i) => {
    const where = `${fileName}: samples[${i}]`;
    checkSample(s, where);
    const key = `${(s as SampleRecord).index}/${(s as SampleRecord).sample}`;
    if (seen.has(key)) throw new WorkbenchError('BAD_FORMAT', `sample ${key} appears twice`, where);
    seen.add(key);
  });
  return v as unknown as RunFile;
}
