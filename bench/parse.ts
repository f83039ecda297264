/**
 * `parse_linear_ratio`: time(4N) / time(N) of the hostile inputs that were quadratic
 * — a judge answer of `{` (jsonObjects), completions of `WITH a(` and of `<think>` (extractSql)
 * — at N = 256 KiB, the median of a few rounds, the worst of the three. Linear gives about 4,
 * quadratic about 16 (`--quick`: N = 16 KiB). Measured as a ratio within one run, never as a timed test.
 */
import { performance } from 'node:perf_hooks';
import { jsonObjects } from '../src/core/rubric/parse-judge.ts';
import { extractSql } from '../src/core/sql/extract-sql.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Median time of `reps` calls, over `rounds`. */
function timeOf(f: () => unknown, rounds: number, reps: number): number {
  const ms: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) f();
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

/** Calls of `f` that take at least 20 ms together (a fast linear parse is well under a millisecond). */
function repsFor(f: () => unknown): number {
  let reps = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 20) {
    f();
    reps++;
  }
  return reps;
}

export function measureParse(quick: boolean): { keys: Record<string, number> } {
  const n = (quick ? 16 : 256) * 1024;
  const rounds = quick ? 3 : 5;
  const cases: Record<string, (size: number) => () => unknown> = {
    judge_braces: (size) => {
      const t = '{'.repeat(size);
      return () => jsonObjects(t);
    },
    sql_with: (size) => {
      const t = 'WITH a('.repeat(Math.ceil(size / 7));
      return () => extractSql(t);
    },
    sql_think: (size) => {
      const t = '<think>'.repeat(Math.ceil(size / 7));
      return () => extractSql(t);
    },
  };
  const keys: Record<string, number> = {};
  let worst = 0;
  for (const [name, make] of Object.entries(cases)) {
    const small = make(n);
    const reps = repsFor(small); // also the warm-up
    const ratio = timeOf(make(4 * n), rounds, reps) / timeOf(small, rounds, reps);
    keys[`parse_linear_ratio_${name}`] = ratio;
    worst = Math.max(worst, ratio);
  }
  keys.parse_linear_ratio = worst;
  keys.parse_linear_n_chars = n;
  return { keys };
}
