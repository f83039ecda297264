/**
 * Hand-made run records for tests: a sample record and a run header with plain defaults (one
 * database "db", a done replay run), each field replaceable, and a run file of both.
 */
import {
  DEFAULT_RUN_CONFIG,
  RUN_FILE_FORMAT,
  RUN_FILE_VERSION,
  type RunFile,
  type RunHeader,
  type SampleRecord,
} from '../../src/core/run/types.ts';

/** A sample that ran: `ex` (default 0) is also its Soft-F1 and reward; one row each side. */
export function sampleRecord(fields: Partial<SampleRecord> & { index: number; sample: number }): SampleRecord {
  const ex = fields.ex ?? 0;
  return {
    questionId: fields.index,
    dbId: 'db',
    difficulty: 'simple',
    ex,
    softF1: ex,
    rves: null,
    timeRatio: null,
    status: 'ok',
    error: null,
    mutatedDb: false,
    extraction: { rule: 'sql-field', thinkStripped: false },
    predRowCount: 1,
    goldRowCount: 1,
    elapsedMs: 1,
    sql: 'SELECT 1',
    goldSql: 'SELECT 1',
    format: 1,
    reward: ex,
    ...fields,
  };
}

/** A done replay run of the dataset "mini" (databases db and other), one sample per question. */
export function runHeader(fields: Partial<RunHeader> = {}): RunHeader {
  return {
    id: 'run-1',
    name: 'run one',
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
    status: 'done',
    source: { kind: 'replay', predictions: { name: 'p.jsonl', sha256: 'aa', bytes: 1 } },
    dataset: {
      id: 'mini',
      name: 'mini',
      questions: { name: 'q.json', sha256: 'qq', bytes: 1 },
      gold: { name: 'g.sql', sha256: 'gg', bytes: 1 },
      databases: { db: 'd1', other: 'o1' },
    },
    subset: { description: 'all', indices: [] },
    config: { ...DEFAULT_RUN_CONFIG },
    samplesPerQuestion: 1,
    executor: 'sql.js 1.17.0',
    ...fields,
  };
}

/** A run file of `samples` under `runHeader(fields)`. */
export function runFile(samples: SampleRecord[], fields: Partial<RunHeader> = {}): RunFile {
  return { format: RUN_FILE_FORMAT, version: RUN_FILE_VERSION, run: runHeader(fields), samples };
}
