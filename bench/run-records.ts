/**
 * Hand-made run records for the tests and the benchmarks (tests/helpers/run-records.ts re-exports
 * them): a sample record and a run header with plain defaults (one database "db", a done replay
 * run), each field replaceable, a run file of both, and the stored-run sample of the IndexedDB
 * write benchmark and its test. Pure: no Node, no DOM.
 */
import {
  DEFAULT_RUN_CONFIG,
  RUN_FILE_FORMAT,
  RUN_FILE_VERSION,
  type RunFile,
  type RunHeader,
  type SampleRecord,
} from '../src/core/run/types.ts';

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

/** A dataset a run names that is not stored here: no gold, no databases (`fields` replace any). */
export function unstoredDataset(fields: Partial<RunHeader['dataset']> = {}): RunHeader['dataset'] {
  return {
    id: 'gone',
    name: 'a dataset not stored here',
    questions: { name: 'q.json', sha256: 'cd', bytes: 4 },
    gold: null,
    databases: {},
    ...fields,
  };
}

/** A run file of `samples` under `runHeader(fields)`. */
export function runFile(samples: SampleRecord[], fields: Partial<RunHeader> = {}): RunFile {
  return { format: RUN_FILE_FORMAT, version: RUN_FILE_VERSION, run: runHeader(fields), samples };
}

const STORED_DBS = ['superhero', 'toxicology', 'student_club'];

/**
 * Sample `index` of the stored-run benchmark (bench/browser/idb-write.ts) and its test
 * (tests/store/performance.browser.test.ts): a BIRD-sized record on one of three databases,
 * every other one right, every seventh an error.
 */
export function storedRunSample(index: number): SampleRecord {
  const failed = index % 7 === 0;
  return sampleRecord({
    index,
    sample: 0,
    ex: (index % 2) as 0 | 1,
    dbId: STORED_DBS[index % 3]!,
    difficulty: 'moderate',
    softF1: 0.5,
    status: failed ? 'error' : 'ok',
    error: failed ? 'prediction: no such column: T1.name' : null,
    extraction: { rule: 'bird-separator', thinkStripped: false },
    predRowCount: 3,
    goldRowCount: 3,
    elapsedMs: 2.25,
    sql: `SELECT T1.name, COUNT(*) FROM superhero AS T1 JOIN hero_power AS T2 ON T1.id = T2.hero_id WHERE T1.id = ${index} GROUP BY T1.name`,
    goldSql: `SELECT T1.name FROM superhero AS T1 WHERE T1.id = ${index}`,
  });
}
