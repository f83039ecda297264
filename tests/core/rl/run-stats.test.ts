import { describe, expect, it } from 'vitest';
import { WorkbenchError } from '../../../src/core/errors.ts';
import { bestOf, bestOfNAccuracy, SCORERS } from '../../../src/core/rl/best-of-n.ts';
import { frontierJsonl, promptStatsCsv, promptStatsJson } from '../../../src/core/rl/exports.ts';
import { mulberry32 } from '../../../src/core/util/rng.ts';
import { computeRunStats } from '../../../src/core/rl/run-stats.ts';
import { statsJson, statsTable } from '../../../src/core/rl/stats-report.ts';
import { question, sample } from './fixtures.ts';

const spec = (s: string) => [...s].map((c) => (c === '.' ? null : c));

// Four questions, n = 4: solved by all, by none, by half (with a tie in the vote), by one.
const samples = [
  ...question(0, spec('RRRR'), { difficulty: 'simple' }),
  ...question(1, spec('AA.B'), { difficulty: 'simple' }),
  ...question(2, spec('RRAA'), { difficulty: 'moderate' }),
  ...question(3, spec('RAA.'), { difficulty: 'challenging', dbId: 'other' }),
  sample({ index: 4, sample: 0, status: 'missing-db', dbId: 'gone' }),
];

describe('run statistics over n samples', () => {
  const stats = computeRunStats(samples, { rng: mulberry32(0) });

  it('groups prompts, leaves out missing databases and reports every k up to n by default', () => {
    expect(stats.prompts.map((p) => [p.index, p.n, p.correct])).toEqual([
      [0, 4, 4],
      [1, 4, 0],
      [2, 4, 2],
      [3, 4, 1],
    ]);
    expect(stats.missingDb).toBe(1);
    expect(stats.ks).toEqual([1, 2, 3, 4]);
    expect(stats.overall).toMatchObject({ questions: 4, samples: 16, nMin: 4, nMax: 4 });
  });

  it('averages pass@k over prompts', () => {
    // pass@2 per prompt: 1, 0, 1 - C(2,2)/C(4,2) = 5/6, 1 - C(3,2)/C(4,2) = 1/2
    expect(stats.overall.passAtK[1]).toBeCloseTo((1 + 0 + 0.5 + 0.25) / 4, 12);
    expect(stats.overall.passAtK[2]).toBeCloseTo((1 + 0 + 5 / 6 + 0.5) / 4, 12);
    expect(stats.overall.passAtK[4]).toBeCloseTo(3 / 4, 12);
    expect(stats.overall.meanEx).toBeCloseTo(stats.overall.passAtK[1]!, 12);
  });

  it('uses the seeded vote at k = n and the exact expectation below', () => {
    const tied = stats.prompts[2]!;
    expect(tied.vote.tied).toBe(2);
    // 'RAA.': A wins 2 to 1 whatever the seed
    expect(stats.prompts[3]!.majAtK[4]).toBe(0);
    // maj@1 is pass@1; maj@2 of 'RRAA': pairs RR (1), AA (0), RA x4 (1/2 each) -> (1 + 2) / 6
    expect(tied.majAtK[1]).toBeCloseTo(0.5, 12);
    expect(tied.majAtK[2]).toBeCloseTo(0.5, 12);
    const seeds = new Set(
      Array.from({ length: 16 }, (_, s) => computeRunStats(samples, { rng: mulberry32(s) }).prompts[2]!.majAtK[4]),
    );
    expect(seeds).toEqual(new Set([0, 1]));
    expect(computeRunStats(samples, { rng: mulberry32(0) }).overall.majAtK[4]).toBe(stats.overall.majAtK[4]);
  });

  it('computes GRPO shares: zero variance, frontier, all right, all wrong', () => {
    expect(stats.overall).toMatchObject({
      zeroVarianceShare: 0.5,
      noGradientShare: 0.5,
      frontierShare: 0.5,
      allCorrectShare: 0.25,
      allWrongShare: 0.25,
    });
    expect(stats.prompts[2]!.advantages[0]).toBeCloseTo(0.5 / (Math.sqrt(1 / 3) + 1e-6), 12);
    expect(stats.overall.passRateHistogram.map((b) => b.count)).toEqual([1, 0, 1, 1, 0, 0, 1]);
  });

  it('splits by difficulty', () => {
    expect(Object.keys(stats.byDifficulty)).toEqual(['simple', 'moderate', 'challenging']);
    expect(stats.byDifficulty.simple).toMatchObject({ questions: 2, zeroVarianceShare: 1, frontierShare: 0 });
    expect(stats.byDifficulty.moderate!.passAtK[1]).toBe(0.5);
  });

  it('restricts to the chosen k and rejects a k above the smallest n', () => {
    const some = computeRunStats(samples, { ks: [4, 1, 1], rng: mulberry32(0) });
    expect(some.ks).toEqual([1, 4]);
    expect(Object.keys(some.overall.passAtK)).toEqual(['1', '4']);
    const short = [...samples, ...question(9, spec('RA'))];
    expect(() => computeRunStats(short, { ks: [4], rng: mulberry32(0) })).toThrow(
      /k = 4 is not possible: k must be an integer from 1 to 2 \(question 9 has 2 samples\)/,
    );
    expect(() => computeRunStats([samples.at(-1)!], { rng: mulberry32(0) })).toThrow(WorkbenchError);
  });

  it('writes the contract keys of stats --out as fractions', () => {
    const json = statsJson(stats, { runName: 'r', runId: 'id', rewardFormula: 'ex', seed: 0 });
    expect(json).toMatchObject({
      questions: 4,
      samples_per_question: 4,
      zero_variance_share: 0.5,
      frontier_share: 0.5,
    });
    expect(Object.keys(json.pass_at_k)).toEqual(['1', '2', '3', '4']);
    expect(Object.keys(json.maj_at_k)).toEqual(['1', '2', '3', '4']);
    expect(json.explanations.zero_variance_share).toBe(
      '50.0% of prompts give GRPO no gradient: every sample got the same reward.',
    );
    expect(json.by_difficulty.simple!.questions).toBe(2);
    const table = statsTable(stats, { runName: 'r', runId: 'id', rewardFormula: 'ex', seed: 0 });
    expect(table).toContain('4 questions, n = 4 samples per question (16 samples), reward = ex');
    expect(table).toContain('50.0% of prompts give GRPO no gradient');
  });
});

describe('best-of-n', () => {
  const withLogprobs = [
    ...question(0, spec('RA'), {}).map((s, i) => ({ ...s, meanLogprob: [-1, -0.5][i]! })),
    ...question(1, spec('AR'), {}).map((s, i) => ({ ...s, meanLogprob: [-0.1, -0.9][i]! })),
  ];
  const [oracle, logprob, rubric] = SCORERS;

  it('picks the top-scored sample, the lowest sample number on ties', () => {
    expect(bestOfNAccuracy([withLogprobs.slice(0, 2), withLogprobs.slice(2)], oracle!)).toBe(1);
    expect(bestOfNAccuracy([withLogprobs.slice(0, 2), withLogprobs.slice(2)], logprob!)).toBe(0);
    const tie = question(0, spec('AR')).map((s) => ({ ...s, rubricScore: 3 }));
    expect(bestOf(tie, rubric!)!.sample).toBe(0);
  });

  it('is not available when a sample has no score', () => {
    expect(bestOfNAccuracy([question(0, spec('RA'))], logprob!)).toBeNull();
    const stats = computeRunStats(withLogprobs, { rng: mulberry32(0) });
    expect(stats.overall.bestOfN).toEqual({ oracle: 1, mean_logprob: 0, rubric: null });
  });
});

describe('per-prompt exports', () => {
  const stats = computeRunStats(samples, { ks: [1, 4], rng: mulberry32(0) });

  it('writes one CSV row per prompt with pass@k and maj@k columns', () => {
    const csv = promptStatsCsv(stats.prompts, stats.ks).split('\r\n');
    expect(csv[0]).toBe(
      'index,question_id,db_id,difficulty,n,correct,pass_rate,mean_reward,grpo_mean,grpo_std,zero_variance,frontier,voters,' +
        'vote_size,vote_tied,vote_score,pass_at_1,pass_at_4,maj_at_1,maj_at_4,advantages',
    );
    expect(csv).toHaveLength(6);
    expect(csv[2]!.startsWith('1,1,db,simple,4,0,0,0,0,0,1,0,3,2,1,0,0,0,0,0,')).toBe(true);
    expect(promptStatsJson(stats.prompts, stats.ks)[2]).toMatchObject({
      index: 2,
      pass_rate: 0.5,
      frontier: true,
      pass_at_4: 1,
    });
  });

  it('writes the frontier prompts as JSONL with their texts, and names a missing text', () => {
    const texts = [0, 1, 2, 3].map((index) => ({
      index,
      questionId: index,
      dbId: 'db',
      question: `Q${index}`,
      evidence: `E${index}`,
    }));
    const lines = frontierJsonl(stats.prompts, texts)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      {
        question_id: 2,
        db_id: 'db',
        question: 'Q2',
        evidence: 'E2',
        pass_rate: 0.5,
        difficulty: 'moderate',
        n: 4,
        correct: 2,
      },
      {
        question_id: 3,
        db_id: 'other',
        question: 'Q3',
        evidence: 'E3',
        pass_rate: 0.25,
        difficulty: 'challenging',
        n: 4,
        correct: 1,
      },
    ]);
    expect(() => frontierJsonl(stats.prompts, texts.slice(0, 3))).toThrow(
      /no question text for question 3 \(index 3\)/,
    );
  });
});
