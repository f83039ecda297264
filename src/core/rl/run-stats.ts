/**
 * Per-prompt and per-run statistics over n samples: pass@k, maj@k, best-of-n, GRPO groups,
 * the learnable frontier and histograms, overall and by difficulty. Pure: randomness (the
 * maj@n tie-break) comes from the injected Rng, consumed in gold order.
 */
import { WorkbenchError } from '../errors.ts';
import type { SampleRecord } from '../run/types.ts';
import { ALL_DIFFICULTIES, type Difficulty } from '../types.ts';
import { bestOfNAccuracy, scorersFor, type Scorer } from './best-of-n.ts';
import { grpoGroup } from './grpo.ts';
import { groupSamples, type PromptGroup } from './groups.ts';
import { advantageHistogram, passRateHistogram, type Bin } from './histogram.ts';
import { expectedMajCurve, MajCurveTooLarge, majorityVote, voteGroups } from './majority.ts';
import { maxOf, meanOf, minOf } from '../util/numbers.ts';
import { passAtK } from './pass-at-k.ts';
import type { Rng } from '../util/rng.ts';

export interface PromptStats {
  key: string;
  index: number;
  questionId: number;
  dbId: string;
  difficulty: Difficulty;
  n: number;
  /** Samples with EX 1. */
  correct: number;
  passRate: number;
  meanReward: number;
  /** GRPO group statistics of the rewards (verl). */
  grpoMean: number;
  grpoStd: number;
  advantages: number[];
  zeroVariance: boolean;
  noGradient: boolean;
  /** 0 < pass rate < 1. */
  frontier: boolean;
  passAtK: Record<number, number>;
  majAtK: Record<number, number>;
  /** Samples that executed and so voted. */
  voters: number;
  /** The vote over all n samples (seeded tie-break). */
  vote: { resultKey: string | null; size: number; tied: number; score: number };
  /** The samples, for best-of-n and exports. */
  samples: readonly SampleRecord[];
}

export interface StatsBucket {
  questions: number;
  samples: number;
  /** Smallest and largest n among the prompts. */
  nMin: number;
  nMax: number;
  meanEx: number;
  meanReward: number;
  passAtK: Record<number, number>;
  majAtK: Record<number, number>;
  /** Best-of-n accuracy per scorer id; null when the scorer has no score for some sample. */
  bestOfN: Record<string, number | null>;
  zeroVarianceShare: number;
  noGradientShare: number;
  frontierShare: number;
  allCorrectShare: number;
  allWrongShare: number;
  meanAbsAdvantage: number;
  passRateHistogram: Bin[];
  advantageHistogram: Bin[];
}

export interface RunStats {
  ks: number[];
  overall: StatsBucket;
  byDifficulty: Partial<Record<Difficulty, StatsBucket>>;
  prompts: PromptStats[];
  /** Samples left out because their database is missing. */
  missingDb: number;
}

interface StatsOptions {
  /** Which k to report (default: every k from 1 to the smallest n). */
  ks?: readonly number[];
  /** Breaks maj@n ties. */
  rng: Rng;
  scorers?: readonly Scorer[];
  /** Called every few prompts with (prompts done, prompts in all): the app's worker reports it as progress. */
  onProgress?: (done: number, total: number) => void;
}

function majCurve(g: PromptGroup, groups: Parameters<typeof expectedMajCurve>[0], abstain: number): number[] {
  try {
    return expectedMajCurve(groups, abstain);
  } catch (err) {
    if (!(err instanceof MajCurveTooLarge)) throw err;
    throw new WorkbenchError(
      'BAD_OPTION',
      `k: question ${g.questionId} has ${err.samples} samples in ${err.groups} distinct results, too many for the exact maj@k with k < n: ` +
        `ask only for k = n (maj@n is one vote), e.g. --k ${err.samples}, or leave that question out`,
      'k',
    );
  }
}

function promptStats(g: PromptGroup, ks: readonly number[], rng: Rng): PromptStats {
  const n = g.samples.length;
  const correct = g.samples.reduce((a, s) => a + s.ex, 0);
  const rewards = g.samples.map((s) => s.reward);
  const grpo = grpoGroup(rewards);
  const { groups, abstain } = voteGroups(g.samples);
  const vote = majorityVote(groups, rng);
  const curve = ks.some((k) => k < n) ? majCurve(g, groups, abstain) : [];
  const passAt: Record<number, number> = {};
  const majAt: Record<number, number> = {};
  for (const k of ks) {
    passAt[k] = passAtK(n, correct, k);
    majAt[k] = k === n ? vote.score : curve[k - 1]!;
  }
  return {
    key: g.key,
    index: g.index,
    questionId: g.questionId,
    dbId: g.dbId,
    difficulty: g.difficulty,
    n,
    correct,
    passRate: correct / n,
    meanReward: meanOf(rewards),
    grpoMean: grpo.mean,
    grpoStd: grpo.std,
    advantages: grpo.advantages,
    zeroVariance: grpo.zeroVariance,
    noGradient: grpo.noGradient,
    frontier: correct > 0 && correct < n,
    passAtK: passAt,
    majAtK: majAt,
    voters: n - abstain,
    vote: {
      resultKey: vote.winner?.resultKey ?? null,
      size: vote.winner?.size ?? 0,
      tied: vote.tied,
      score: vote.score,
    },
    samples: g.samples,
  };
}

function bucket(prompts: readonly PromptStats[], ks: readonly number[], scorers: readonly Scorer[]): StatsBucket {
  const q = prompts.length;
  const mean = (f: (p: PromptStats) => number) => meanOf(prompts.map(f));
  const share = (f: (p: PromptStats) => boolean) => (q === 0 ? 0 : prompts.filter(f).length / q);
  const advantages = prompts.flatMap((p) => p.advantages);
  return {
    questions: q,
    samples: prompts.reduce((a, p) => a + p.n, 0),
    nMin: minOf(prompts.map((p) => p.n)),
    nMax: maxOf(prompts.map((p) => p.n)),
    meanEx: mean((p) => p.passRate),
    meanReward: mean((p) => p.meanReward),
    passAtK: Object.fromEntries(ks.map((k) => [k, mean((p) => p.passAtK[k]!)])),
    majAtK: Object.fromEntries(ks.map((k) => [k, mean((p) => p.majAtK[k]!)])),
    bestOfN: Object.fromEntries(
      scorers.map((s) => [
        s.id,
        bestOfNAccuracy(
          prompts.map((p) => p.samples),
          s,
        ),
      ]),
    ),
    zeroVarianceShare: share((p) => p.zeroVariance),
    noGradientShare: share((p) => p.noGradient),
    frontierShare: share((p) => p.frontier),
    allCorrectShare: share((p) => p.correct === p.n),
    allWrongShare: share((p) => p.correct === 0),
    meanAbsAdvantage: meanOf(advantages.map(Math.abs)),
    passRateHistogram: passRateHistogram(prompts.map((p) => p.passRate)),
    advantageHistogram: advantageHistogram(advantages),
  };
}

export function computeRunStats(samples: readonly SampleRecord[], options: StatsOptions): RunStats {
  const { groups, missingDb } = groupSamples(samples);
  if (groups.length === 0) {
    throw new WorkbenchError('BAD_FORMAT', 'no sample can be scored: the run is empty or every database is missing');
  }
  const nMin = minOf(groups.map((g) => g.samples.length));
  const ks = options.ks
    ? [...new Set(options.ks)].sort((a, b) => a - b)
    : Array.from({ length: nMin }, (_, i) => i + 1);
  for (const k of ks) {
    if (!Number.isInteger(k) || k < 1 || k > nMin) {
      const short = groups.find((g) => g.samples.length < k);
      throw new WorkbenchError(
        'BAD_OPTION',
        `k = ${k} is not possible: k must be an integer from 1 to ${nMin}` +
          (short ? ` (question ${short.questionId} has ${short.samples.length} samples)` : ''),
        'k',
      );
    }
  }
  const scorers = options.scorers ?? scorersFor(samples);
  const prompts: PromptStats[] = [];
  for (const g of groups) {
    prompts.push(promptStats(g, ks, options.rng));
    if (options.onProgress && (prompts.length % 256 === 0 || prompts.length === groups.length))
      options.onProgress(prompts.length, groups.length);
  }
  const byDifficulty: RunStats['byDifficulty'] = {};
  for (const d of ALL_DIFFICULTIES) {
    const ps = prompts.filter((p) => p.difficulty === d);
    if (ps.length > 0) byDifficulty[d] = bucket(ps, ks, scorers);
  }
  return { ks, overall: bucket(prompts, ks, scorers), byDifficulty, prompts, missingDb };
}
