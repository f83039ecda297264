import { describe, expect, it } from 'vitest';
import { summarize } from '../../../src/core/eval/summary.ts';
import { samplesPerQuestion, summarizeSamples } from '../../../src/core/rl/sample-summary.ts';
import { question, sample, verdicts } from './fixtures.ts';

describe('eval summary over several samples per question', () => {
  it('is the official summary with one sample per question', () => {
    const results = verdicts([1, 0, 1]);
    expect(summarizeSamples(results, ['ex', 'soft-f1'])).toEqual(summarize(results, ['ex', 'soft-f1']));
  });

  it('averages each question over its samples, then over questions', () => {
    const spec = (s: string) => [...s].map((c) => (c === '.' ? null : c));
    // question 0: 2 of 2 right; question 1: 1 of 4 right (one failed); mean of means = (1 + 0.25) / 2
    const results = [...question(0, spec('RR')), ...question(1, spec('RAA.'), { difficulty: 'moderate' }), sample({ index: 2, sample: 0, status: 'missing-db' })];
    const s = summarizeSamples(results, ['ex']);
    expect(s.byDifficulty.total).toMatchObject({ count: 2, ex: 62.5, softF1: null, errors: 1 });
    expect(s.byDifficulty.simple).toMatchObject({ count: 1, ex: 100 });
    expect(s.byDifficulty.moderate).toMatchObject({ count: 1, ex: 25 });
    expect(s.byDb.db).toMatchObject({ count: 2, ex: 62.5 });
    expect(s.missingDbs).toEqual({ db: 1 });
    expect(samplesPerQuestion(results)).toEqual({ min: 2, max: 4, questions: 2 });
  });
});
