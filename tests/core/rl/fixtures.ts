/** Small hand-made samples and runs for the RL statistics tests. */
import {
  DEFAULT_RUN_CONFIG,
  RUN_FILE_FORMAT,
  RUN_FILE_VERSION,
  type RunFile,
  type RunHeader,
  type SampleRecord,
} from '../../../src/core/run/types.ts';
import type { Difficulty } from '../../../src/core/types.ts';

export function sample(fields: Partial<SampleRecord> & { index: number; sample: number }): SampleRecord {
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

/**
 * One question's samples from a compact spec: each entry is the sample's result key
 * ('R' = the gold result, any other letter = another result, null = did not execute).
 */
export function question(
  index: number,
  results: ReadonlyArray<string | null>,
  extra: Partial<SampleRecord> = {},
): SampleRecord[] {
  return results.map((r, s) => {
    const ex = r === 'R' ? 1 : 0;
    return sample({
      index,
      sample: s,
      ex,
      reward: ex,
      ...(r === null ? { status: 'error' as const, error: 'prediction: no such table' } : { resultKey: `key-${r}` }),
      ...extra,
    });
  });
}

export function header(fields: Partial<RunHeader> = {}): RunHeader {
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

export function runFile(samples: SampleRecord[], fields: Partial<RunHeader> = {}): RunFile {
  return { format: RUN_FILE_FORMAT, version: RUN_FILE_VERSION, run: header(fields), samples };
}

/** Per-question EX verdicts (one sample each) as samples. */
export function verdicts(exs: ReadonlyArray<0 | 1>, difficulty: Difficulty = 'simple', dbId = 'db'): SampleRecord[] {
  return exs.map((ex, index) => sample({ index, sample: 0, ex, reward: ex, difficulty, dbId }));
}

/** All k-element subsets of [0, n). */
export function subsets(n: number, k: number): number[][] {
  const out: number[][] = [];
  const pick = (start: number, acc: number[]): void => {
    if (acc.length === k) {
      out.push([...acc]);
      return;
    }
    for (let i = start; i < n; i++) pick(i + 1, [...acc, i]);
  };
  pick(0, []);
  return out;
}
