/**
 * A synthetic training run for the series benchmarks (bench/series.ts in Node, the benchmark
 * page in Chromium): step s of `questions` x `perQuestion` samples, question q right with a
 * chance that drifts with the step, three wrong results to vote among. Pure: no Node, no DOM.
 */
import type { SampleRecord } from '../src/core/run/types.ts';
import { mulberry32 } from '../src/core/util/rng.ts';
import { sampleRecord } from './run-records.ts';

/** A scored sample of a synthetic run (`over` replaces any field): one row each side, no error. */
export function benchSample(
  index: number,
  sample: number,
  ex: 0 | 1,
  resultKey: string,
  over: Partial<SampleRecord> = {},
): SampleRecord {
  return sampleRecord({ index, sample, ex, dbId: `db${index % 7}`, resultKey, ...over });
}

/** One step's samples: question q is right with a chance that drifts with the step, 3 wrong results to vote among. */
export function syntheticStep(step: number, questions: number, perQuestion: number): SampleRecord[] {
  const rng = mulberry32(1000 + step);
  const out: SampleRecord[] = [];
  for (let index = 0; index < questions; index++) {
    const p = Math.min(1, Math.max(0, ((index * 7919) % 1000) / 1000 + (step - 20) / 80));
    for (let sample = 0; sample < perQuestion; sample++) {
      const ex: 0 | 1 = rng.next() < p ? 1 : 0;
      const sql = `SELECT name FROM t WHERE id = ${index}`;
      out.push(
        benchSample(index, sample, ex, ex ? 'R' : `W${Math.floor(rng.next() * 3)}`, {
          dbId: `db${index % 11}`,
          difficulty: 'moderate',
          extraction: { rule: 'fenced-sql-last', thinkStripped: false },
          sql,
          goldSql: sql,
          completion: `\`\`\`sql\n${sql}\n\`\`\``,
        }),
      );
    }
  }
  return out;
}
