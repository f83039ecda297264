/** Run files built in the test (no data copied): many questions x many samples, with chosen rewards. */
import { writeFileSync } from 'node:fs';
import type { RunFile, SampleRecord } from '../../src/core/run/types.ts';
import { DIFFICULTIES } from '../../src/core/types.ts';
import { mulberry32 } from '../../src/core/util/rng.ts';
import { runFile, sampleRecord } from '../helpers/run-records.ts';

export interface SyntheticRunSpec {
  questions: number;
  samples: number;
  seed: number;
  /** Chance that a sample is right, per question (default: spread over 0..1 by the seed). */
  reward?: (s: { index: number; sample: number; ex: 0 | 1 }) => number;
}

/**
 * Samples whose result keys come from a few results per question (the gold one and up to three
 * others, some samples failing), so maj@k has real ties and groups.
 */
export function syntheticSamples(spec: SyntheticRunSpec): SampleRecord[] {
  const rng = mulberry32(spec.seed);
  const out: SampleRecord[] = [];
  for (let index = 0; index < spec.questions; index++) {
    const p = rng.next();
    for (let sample = 0; sample < spec.samples; sample++) {
      const u = rng.next();
      const ex: 0 | 1 = u < p ? 1 : 0;
      const failed = ex === 0 && u > 0.95;
      const other = ex === 1 ? 'R' : `W${Math.floor(rng.next() * 3)}`;
      out.push(
        sampleRecord({
          index,
          sample,
          dbId: `db${index % 7}`,
          difficulty: DIFFICULTIES[index % DIFFICULTIES.length]!,
          ex,
          status: failed ? 'error' : 'ok',
          error: failed ? 'prediction: no such column' : null,
          predRowCount: failed ? null : 1,
          reward: spec.reward ? spec.reward({ index, sample, ex }) : ex,
          ...(failed ? {} : { resultKey: `q${index}-${other}` }),
        }),
      );
    }
  }
  return out;
}

export function syntheticRunFile(samples: SampleRecord[], name = 'synthetic'): RunFile {
  return runFile(samples, {
    id: `run-${name}`,
    name,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    dataset: {
      id: 'synthetic',
      name: 'synthetic',
      questions: { name: 'q.json', sha256: 'qq', bytes: 1 },
      gold: { name: 'g.sql', sha256: 'gg', bytes: 1 },
      databases: Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`db${i}`, `sha${i}`])),
    },
    samplesPerQuestion: Math.max(
      1,
      samples.reduce((m, s) => Math.max(m, s.sample + 1), 0),
    ),
  });
}

export function writeRunFile(file: string, run: RunFile): void {
  // Compact JSON: a 500,000-sample file stays a few hundred MB smaller than indented.
  writeFileSync(file, JSON.stringify(run));
}
