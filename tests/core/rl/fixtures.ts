/** Small hand-made samples and runs for the RL statistics tests. */
import type { SampleRecord } from '../../../src/core/run/types.ts';
import type { Difficulty } from '../../../src/core/types.ts';
import { runFile, runHeader as header, sampleRecord as sample } from '../../helpers/run-records.ts';

export { header, runFile, sample };

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
