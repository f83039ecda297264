/**
 * Statistics of a series over its steps (docs/series.md defines every number): per-step curves,
 * per-question dynamics with buckets, and warnings with the step where each starts. Pure: the
 * CLI and the app's analysis worker call the same functions on the same samples.
 */
import type { MetricName } from '../eval/executor.ts';
import { summaryTotal } from '../eval/summary.ts';
import { majorityVote, voteGroups } from '../rl/majority.ts';
import { pairedBootstrapCi } from '../rl/paired-tests.ts';
import { passAtK, passHatK } from '../rl/pass-at-k.ts';
import { mulberry32 } from '../util/rng.ts';
import type { PromptStats } from '../rl/run-stats.ts';
import type { SampleRecord } from '../run/types.ts';
import type { Difficulty, ItemResult } from '../types.ts';
import type { Series, WallTimeSource } from './model.ts';
import { UNEARNED_KINDS, UNEARNED_TEXT, unearnedKind, type UnearnedKind } from './earned.ts';
import { TRAINER_PASS_THRESHOLD, trainerDisagreement } from '../eval/trainer-verdict.ts';
import { keptPositions, type Exclusion } from '../eval/exclusions.ts';

/**
 * What the statistics read of a sample: its result (no texts beyond the verdict) and the length
 * of its completion. The app's analysis worker keeps only this of each of 490,880 samples; the
 * CLI passes its samples through `seriesSample` too, so both compute from the same fields.
 */
type SeriesSample = Omit<ItemResult, 'tsCounterexample' | 'versionFeatures' | 'goldIssues'> &
  Pick<SampleRecord, 'sample' | 'format'> & {
    /** Characters of the completion (of the SQL when the sample kept no completion). */
    chars: number;
    /** Why its EX pass is not earned (src/core/series/earned.ts); null when earned or not a pass. */
    unearned: UnearnedKind | null;
  };

/** The fields of a sample the statistics read. */
export function seriesSample(s: SampleRecord): SeriesSample {
  const {
    tsCounterexample: _c,
    versionFeatures: _v,
    goldIssues: _g,
    sql,
    goldSql: _gold,
    completion,
    reward: _r,
    meanLogprob: _m,
    rubricScore: _rs,
    rubric: _ru,
    generation: _ge,
    ...rest
  } = s;
  return { ...rest, chars: (completion ?? sql).length, unearned: unearnedKind(s) };
}

/** Seed of maj@n's tie-break (the `stats` command's default), consumed in gold order at every step. */
const SERIES_MAJ_SEED = 0;

interface StepInput {
  step: number;
  samples: readonly SeriesSample[];
  /** Parallel to `samples`. */
  trainerScores: readonly (number | null)[];
  metrics: readonly MetricName[];
  /** The step's wall time and where it came from (SeriesStep); null when unknown. */
  wallTime?: string | null;
  wallTimeSource?: WallTimeSource | null;
}

export interface StepStats {
  step: number;
  /** ISO 8601, the step's wall time (the dump's own, else its file's); null when unknown. */
  wallTime: string | null;
  wallTimeSource: WallTimeSource | null;
  /** Scored questions (database present) and their samples. */
  questions: number;
  samples: number;
  /** Smallest and largest samples per question. */
  nMin: number;
  nMax: number;
  /** EX in percent, exactly the summary's (each question averages its samples first). */
  ex: number | null;
  /** 95% bootstrap interval of EX (percent) resampling the step's questions (BEST_RESAMPLES, seeded); null when EX is. */
  exCiLow: number | null;
  exCiHigh: number | null;
  /**
   * The earned score in percent: EX counting only earned passes (src/core/series/earned.ts), each
   * question averaging its samples first; null when EX is.
   */
  earned: number | null;
  /** EX passes that are not earned, by why (first that applies). */
  unearned: Record<UnearnedKind, number>;
  /** TS in percent when metric ts ran, else null. */
  ts: number | null;
  /** Percent of questions: mean of c/n; mean of pass@n (at least one sample right); the seeded majority vote's EX. */
  passAt1: number;
  passAtN: number;
  /** Percent of questions: mean of pass^n, C(c, n) / C(n, n) (all n samples right; passHatK). */
  passHatN: number;
  majAtN: number;
  /** Percent of questions whose samples are all right, all wrong, or mixed (the first two are the zero-variance share). */
  allRight: number;
  allWrong: number;
  mixed: number;
  zeroVariance: number;
  /** Mean over questions of distinct results among the samples that voted (resultKey; a diversity proxy). */
  resultGroups: number;
  /** Mean characters per completion (the SQL when the sample kept no completion). */
  completionChars: number;
  /** Samples: no SQL found, SQLite error, timeout, prediction changed the database. */
  extractionFailures: number;
  errors: number;
  timeouts: number;
  writes: number;
  /** Samples EX accepts and TS rejects; null when ts did not run. */
  exOnly: number | null;
  /** Samples EX accepts where gold and prediction both return no rows. */
  emptyResultPasses: number;
  /** Mean of the trainer's own score over the samples that have one; null when none has. */
  trainerReward: number | null;
  /**
   * Scored samples with a trainer's score, and those on which the trainer and our EX disagree
   * (`trainerVerdict`): the trainer says right (score >= TRAINER_PASS_THRESHOLD) while EX is 0, and
   * the trainer says wrong while EX is 1. All three null when no sample has a trainer's score.
   */
  trainerScored: number | null;
  trainerRightExWrong: number | null;
  trainerWrongExRight: number | null;
}

type QuestionCell = Pick<PromptStats, 'index' | 'questionId' | 'dbId' | 'difficulty' | 'n' | 'correct'> & {
  /** Earned passes among `correct`. */
  earned: number;
};
type DynamicsField = 'index' | 'questionId' | 'dbId' | 'difficulty' | 'status' | 'ex';
/** What the dynamics read of a sample: its verdict and whether its pass is earned. */
export type DynamicsSample = Pick<ItemResult, DynamicsField> & Pick<SeriesSample, 'unearned'>;

const percent = (x: number, of: number) => (of === 0 ? 0 : (x / of) * 100);

function byQuestion(samples: readonly SeriesSample[]): Map<number, SeriesSample[]> {
  const out = new Map<number, SeriesSample[]>();
  for (const s of samples) {
    const list = out.get(s.index);
    if (list) list.push(s);
    else out.set(s.index, [s]);
  }
  return new Map([...out].sort((a, b) => a[0] - b[0]));
}

/** The numbers of one step over its scored samples (a missing database leaves its samples out, as the summary does). */
export function stepStats(input: StepInput): StepStats {
  const scoredAt: number[] = [];
  input.samples.forEach((s, i) => s.status !== 'missing-db' && scoredAt.push(i));
  const samples = scoredAt.map((i) => input.samples[i]!);
  const summary = summaryTotal(samples, input.metrics);
  const questions = byQuestion(samples);
  const rng = mulberry32(SERIES_MAJ_SEED);
  const rates: number[] = [];
  let passAt1 = 0,
    passAtN = 0,
    passHatN = 0,
    earnedSum = 0,
    majAtN = 0,
    allRight = 0,
    allWrong = 0,
    groupSum = 0;
  let nMin = Infinity,
    nMax = 0;
  for (const qs of questions.values()) {
    const n = qs.length;
    const c = qs.filter((s) => s.ex === 1).length;
    nMin = Math.min(nMin, n);
    nMax = Math.max(nMax, n);
    passAt1 += c / n;
    passAtN += passAtK(n, c, n);
    passHatN += passHatK(n, c, n);
    earnedSum += qs.filter((s) => s.ex === 1 && s.unearned === null).length / n;
    rates.push((c / n) * 100);
    const { groups } = voteGroups(qs);
    majAtN += majorityVote(groups, rng).score;
    groupSum += groups.length;
    if (c === n) allRight++;
    else if (c === 0) allWrong++;
  }
  const q = questions.size;
  const unearned = Object.fromEntries(UNEARNED_KINDS.map((k) => [k, 0])) as Record<UnearnedKind, number>;
  let chars = 0,
    extractionFailures = 0,
    errors = 0,
    timeouts = 0,
    writes = 0,
    exOnly = 0,
    empty = 0;
  for (const s of samples) {
    chars += s.chars;
    if (s.unearned !== null) unearned[s.unearned]++;
    if (s.extraction.rule === 'none') extractionFailures++;
    if (s.status === 'error') errors++;
    if (s.status === 'timeout') timeouts++;
    if (s.mutatedDb) writes++;
    if (s.ex === 1 && s.ts === 0) exOnly++;
    if (s.ex === 1 && s.goldRowCount === 0 && s.predRowCount === 0) empty++;
  }
  const ci = summary.ex === null || q === 0 ? null : interval(rates);
  const own = scoredAt.map((i) => input.trainerScores[i]).filter((x): x is number => typeof x === 'number');
  let trainerRightExWrong = 0,
    trainerWrongExRight = 0;
  for (const i of scoredAt) {
    const d = trainerDisagreement(input.trainerScores[i], input.samples[i]!);
    if (d === 'trainer-right') trainerRightExWrong++;
    else if (d === 'trainer-wrong') trainerWrongExRight++;
  }
  return {
    step: input.step,
    wallTime: input.wallTime ?? null,
    wallTimeSource: input.wallTimeSource ?? null,
    questions: q,
    samples: samples.length,
    nMin: q === 0 ? 0 : nMin,
    nMax,
    ex: summary.ex,
    exCiLow: ci && ci[0],
    exCiHigh: ci && ci[1],
    earned: summary.ex === null ? null : percent(earnedSum, q),
    unearned,
    ts: summary.ts ?? null,
    passAt1: percent(passAt1, q),
    passAtN: percent(passAtN, q),
    passHatN: percent(passHatN, q),
    majAtN: percent(majAtN, q),
    allRight: percent(allRight, q),
    allWrong: percent(allWrong, q),
    mixed: percent(q - allRight - allWrong, q),
    zeroVariance: percent(allRight + allWrong, q),
    resultGroups: q === 0 ? 0 : groupSum / q,
    completionChars: samples.length === 0 ? 0 : chars / samples.length,
    extractionFailures,
    errors,
    timeouts,
    writes,
    exOnly: input.metrics.includes('ts') ? exOnly : null,
    emptyResultPasses: empty,
    trainerReward: own.length === 0 ? null : own.reduce((a, x) => a + x, 0) / own.length,
    trainerScored: own.length === 0 ? null : own.length,
    trainerRightExWrong: own.length === 0 ? null : trainerRightExWrong,
    trainerWrongExRight: own.length === 0 ? null : trainerWrongExRight,
  };
}

/**
 * The buckets in the order they are shown. Precedence (first that applies): unearned (right by
 * EX at some step, but earned at none: solved only by writes, constant answers, EX-only or
 * empty-result passes), then unstable, always, never, learned, forgotten on the EX verdicts.
 */
export const BUCKETS = ['unstable', 'always', 'never', 'learned', 'forgotten', 'unearned'] as const;
export type Bucket = (typeof BUCKETS)[number];

export interface QuestionDynamics {
  index: number;
  questionId: number;
  dbId: string;
  difficulty: Difficulty;
  /** Per step of the series (in order): the question's pass rate c/n, null when the step did not score it. */
  passRates: Array<number | null>;
  /** Per step: the majority verdict (pass rate > 1/2), null when not scored. */
  verdicts: Array<boolean | null>;
  /** Per step: the share of its samples whose pass is earned, null when not scored. */
  earnedRates: Array<number | null>;
  bucket: Bucket;
  /** First and last step whose majority verdict is right; null when none is. */
  firstSolvedStep: number | null;
  lastSolvedStep: number | null;
  /** Changes of the majority verdict between consecutive steps that scored the question. */
  flips: number;
}

/** Flips at which a question is unstable, whatever else it is. */
const UNSTABLE_FLIPS = 3;

/** What the dynamics keep of a step: per scored question, its samples and how many are right. */
export type StepCells = Map<number, QuestionCell>;

/** The cells of one step's samples (a missing database leaves its samples out). */
export function stepCells(samples: readonly DynamicsSample[]): StepCells {
  const out = new Map<number, QuestionCell>();
  for (const s of samples) {
    if (s.status === 'missing-db') continue;
    const c = out.get(s.index);
    const earned = s.ex === 1 && s.unearned === null ? 1 : 0;
    if (c) {
      c.n++;
      c.correct += s.ex;
      c.earned += earned;
    } else
      out.set(s.index, {
        index: s.index,
        questionId: s.questionId,
        dbId: s.dbId,
        difficulty: s.difficulty,
        n: 1,
        correct: s.ex,
        earned,
      });
  }
  return out;
}

/**
 * The bucket of a question from its verdicts at the steps that scored it (docs/series.md), and
 * from its earned verdicts at the same steps when known: right by EX somewhere but earned nowhere
 * is `unearned`, whatever else it is.
 */
export function bucketOf(
  verdicts: readonly boolean[],
  earnedVerdicts?: readonly boolean[],
): { bucket: Bucket; flips: number } {
  let flips = 0;
  for (let i = 1; i < verdicts.length; i++) if (verdicts[i] !== verdicts[i - 1]) flips++;
  const bucket: Bucket =
    earnedVerdicts && verdicts.some((v) => v) && !earnedVerdicts.some((v) => v)
      ? 'unearned'
      : flips >= UNSTABLE_FLIPS
        ? 'unstable'
        : verdicts.every((v) => v)
          ? 'always'
          : verdicts.every((v) => !v)
            ? 'never'
            : verdicts[verdicts.length - 1]
              ? 'learned'
              : 'forgotten';
  return { bucket, flips };
}

/** Every question scored at some step, in gold order, with its pass rate per step and its bucket. */
export function questionDynamics(
  steps: ReadonlyArray<{ step: number; samples: readonly DynamicsSample[] }>,
): QuestionDynamics[] {
  return dynamicsOfCells(steps.map((s) => ({ step: s.step, cells: stepCells(s.samples) })));
}

/** `questionDynamics` from each step's cells (the analysis worker reads one step at a time and keeps only its cells). */
function dynamicsOfCells(steps: ReadonlyArray<{ step: number; cells: StepCells }>): QuestionDynamics[] {
  const cells = steps.map((s) => s.cells);
  const all = new Map<number, QuestionCell>();
  for (const c of cells) for (const [i, cell] of c) if (!all.has(i)) all.set(i, cell);
  return [...all.values()]
    .sort((a, b) => a.index - b.index)
    .map((q) => {
      const passRates = cells.map((c) => {
        const cell = c.get(q.index);
        return cell ? cell.correct / cell.n : null;
      });
      const earnedRates = cells.map((c) => {
        const cell = c.get(q.index);
        return cell ? cell.earned / cell.n : null;
      });
      const verdicts = passRates.map((p) => (p === null ? null : p > 0.5));
      const present = verdicts.filter((v): v is boolean => v !== null);
      const earnedPresent = earnedRates.filter((p): p is number => p !== null).map((p) => p > 0.5);
      const solved = steps.filter((_, i) => verdicts[i] === true).map((s) => s.step);
      return {
        index: q.index,
        questionId: q.questionId,
        dbId: q.dbId,
        difficulty: q.difficulty,
        passRates,
        verdicts,
        earnedRates,
        ...bucketOf(present, earnedPresent),
        firstSolvedStep: solved[0] ?? null,
        lastSolvedStep: solved[solved.length - 1] ?? null,
      };
    });
}

type WarningRule =
  | 'ex-only-rising'
  | 'empty-result-rising'
  | 'writes-rising'
  | 'reward-without-ex'
  | 'diversity-collapse'
  | 'fell-below-best'
  | 'trainer-disagrees';

interface SeriesWarning {
  rule: WarningRule;
  /** The first step of the trailing run of steps at which the rule holds. */
  startStep: number;
  message: string;
}

/** Thresholds of the warnings (docs/series.md, "Warnings"). */
export const WARNING_THRESHOLDS = {
  /** Percentage points of samples above the first step. */
  exOnlyRise: 2,
  emptyRise: 2,
  writesRise: 1,
  /** Trainer reward above the first step's, in the trainer's units, while EX gains less than `exFlat` points. */
  rewardRise: 0.05,
  exFlat: 1,
  /** Mean result groups at most this fraction of the first step's (first step above 1, n >= 2). */
  diversityFraction: 0.75,
  /** Percent of a step's samples with a trainer's score on which the trainer and EX disagree, above which the step diverges. */
  trainerDisagreeShare: 0.5,
} as const;

/** Samples of a step on which the trainer and EX disagree (both ways); null when the step has no trainer's score. */
export function trainerDisagreements(s: Pick<StepStats, 'trainerRightExWrong' | 'trainerWrongExRight'>): number | null {
  return s.trainerRightExWrong === null || s.trainerWrongExRight === null
    ? null
    : s.trainerRightExWrong + s.trainerWrongExRight;
}

/** The step's disagreements are above WARNING_THRESHOLDS.trainerDisagreeShare percent of its samples with a trainer's score. */
export function trainerDiverges(
  s: Pick<StepStats, 'trainerScored' | 'trainerRightExWrong' | 'trainerWrongExRight'>,
): boolean {
  const d = trainerDisagreements(s);
  return (
    d !== null &&
    s.trainerScored !== null &&
    s.trainerScored > 0 &&
    percent(d, s.trainerScored) > WARNING_THRESHOLDS.trainerDisagreeShare
  );
}

/**
 * The first step of the trailing run where `holds(step, base)` is true at every step that can be
 * judged (`holds` returns null for a step it cannot judge, which neither breaks nor starts the run);
 * base is the first judgeable step. Null when the last judgeable step does not hold.
 */
function trailingStart(
  steps: readonly StepStats[],
  judge: (s: StepStats, base: StepStats) => boolean | null,
  canBase: (s: StepStats) => boolean,
): number | null {
  const baseAt = steps.findIndex(canBase);
  if (baseAt < 0) return null;
  const base = steps[baseAt]!;
  let start: number | null = null;
  for (let i = steps.length - 1; i > baseAt; i--) {
    const v = judge(steps[i]!, base);
    if (v === null) continue;
    if (!v) break;
    start = steps[i]!.step;
  }
  return start;
}

const share = (count: number, s: StepStats) => percent(count, s.samples);
const fmt = (x: number, digits = 2) => x.toFixed(digits);

/** The warnings of a series' step statistics, in rule order. */
export function seriesWarnings(steps: readonly StepStats[]): SeriesWarning[] {
  const T = WARNING_THRESHOLDS;
  const out: SeriesWarning[] = [];
  const last = steps[steps.length - 1];
  if (!last) return out;
  const rising = (rule: WarningRule, what: string, count: (s: StepStats) => number | null, rise: number) => {
    const start = trailingStart(
      steps,
      (s, base) =>
        count(s) === null || s.samples === 0 ? null : share(count(s)!, s) >= share(count(base)!, base) + rise,
      (s) => count(s) !== null && s.samples > 0,
    );
    if (start === null) return;
    const base = steps.find((s) => count(s) !== null && s.samples > 0)!;
    out.push({
      rule,
      startStep: start,
      message: `${what} rose from ${fmt(share(count(base)!, base))}% of samples at step ${base.step} to ${fmt(share(count(last)!, last))}% at step ${last.step} (>= ${rise} points above the first step from step ${start} on)`,
    });
  };
  rising('ex-only-rising', 'EX-only passes (EX 1, TS 0)', (s) => s.exOnly, T.exOnlyRise);
  rising(
    'empty-result-rising',
    'Empty-result passes (gold and prediction both 0 rows)',
    (s) => s.emptyResultPasses,
    T.emptyRise,
  );
  rising('writes-rising', 'Writes (predictions that changed the database)', (s) => s.writes, T.writesRise);
  const reward = trailingStart(
    steps,
    (s, base) =>
      s.trainerReward === null || s.ex === null
        ? null
        : s.trainerReward - base.trainerReward! >= T.rewardRise && s.ex - base.ex! < T.exFlat,
    (s) => s.trainerReward !== null && s.ex !== null,
  );
  if (reward !== null) {
    const base = steps.find((s) => s.trainerReward !== null && s.ex !== null)!;
    out.push({
      rule: 'reward-without-ex',
      startStep: reward,
      message: `the trainer's reward rose from ${fmt(base.trainerReward!, 4)} at step ${base.step} to ${fmt(last.trainerReward ?? NaN, 4)} at step ${last.step} while EX went from ${fmt(base.ex!)} to ${fmt(last.ex ?? NaN)} (from step ${reward} on)`,
    });
  }
  const diverse = trailingStart(
    steps,
    (s, base) => (s.nMin < 2 ? null : s.resultGroups <= T.diversityFraction * base.resultGroups),
    (s) => s.nMin >= 2 && s.resultGroups > 1,
  );
  if (diverse !== null) {
    const base = steps.find((s) => s.nMin >= 2 && s.resultGroups > 1)!;
    out.push({
      rule: 'diversity-collapse',
      startStep: diverse,
      message: `distinct results per question fell from ${fmt(base.resultGroups)} at step ${base.step} to ${fmt(last.resultGroups)} at step ${last.step} (<= ${T.diversityFraction} of the first from step ${diverse} on)`,
    });
  }
  // Unlike the rules above, a step where the trainer and EX disagree is told wherever it is.
  const diverging = steps.filter(trainerDiverges);
  if (diverging.length > 0)
    out.push({
      rule: 'trainer-disagrees',
      startStep: diverging[0]!.step,
      message: `the trainer's score and our EX disagree on more than ${T.trainerDisagreeShare}% of the samples at ${diverging.length === 1 ? 'step' : 'steps'} ${diverging
        .map(
          (s) =>
            `${s.step} (${s.trainerRightExWrong} the trainer passed and EX failed, ${s.trainerWrongExRight} the reverse, of ${s.trainerScored})`,
        )
        .join(', ')}; the trainer passes a sample scored >= ${TRAINER_PASS_THRESHOLD}`,
    });
  return out;
}

/**
 * The recommended step: the highest earned score (the first of equals), with a bootstrap interval
 * of that score over its questions; and, when the step with the highest EX is another one, that
 * step with what makes its EX unearned.
 */
interface BestCheckpoint {
  step: number;
  /** The step's EX (percent). */
  ex: number;
  /** The step's earned score (percent), what it was chosen on. */
  earned: number;
  /** 95% percentile interval of the earned score (percent) resampling the step's scored questions. */
  ciLow: number;
  ciHigh: number;
  resamples: number;
  /** The step with the highest EX when it is not `step`; null when it is. */
  byEx: BestByEx | null;
}

interface BestByEx {
  step: number;
  ex: number;
  earned: number;
  /** Its EX passes that are not earned, by why. */
  unearned: Record<UnearnedKind, number>;
  /** The warnings that hold at that step (their trailing run includes it). */
  warnings: WarningRule[];
  /** One sentence naming the step, its EX and earned score, and what applies to it. */
  message: string;
}

/** Resamples of every interval here, drawn with mulberry32 seeded SERIES_MAJ_SEED. */
const BEST_RESAMPLES = 1000;

/** 95% percentile bootstrap interval of the mean of `rates` (one per question), seeded. */
function interval(rates: readonly number[]): [number, number] {
  return pairedBootstrapCi(rates, BEST_RESAMPLES, mulberry32(SERIES_MAJ_SEED));
}

const argMax = (steps: readonly StepStats[], f: (s: StepStats) => number | null): number => {
  let at = -1;
  steps.forEach((s, i) => {
    const v = f(s);
    if (v !== null && (at < 0 || v > f(steps[at]!)!)) at = i;
  });
  return at;
};

/** The unearned passes of a step in words, e.g. `12 writes, 3 constant answers`; '' when none. */
export function unearnedText(u: Record<UnearnedKind, number>): string {
  return UNEARNED_KINDS.filter((k) => u[k] > 0)
    .map((k) => {
      const plural = UNEARNED_TEXT[k].split(' (')[0]!;
      return `${u[k]} ${u[k] === 1 ? plural.replace(/s$/, '').replace('passe', 'pass') : plural}`;
    })
    .join(', ');
}

/**
 * Best step by earned score and its interval: the earned score is the mean over questions of each
 * question's earned pass rate, so those rates are resampled. `warnings` are the series' warnings,
 * to say which apply to the best step by EX when it is another step.
 */
export function bestCheckpoint(
  steps: readonly StepStats[],
  questions: readonly QuestionDynamics[],
  warnings: readonly SeriesWarning[] = [],
): BestCheckpoint | null {
  const at = argMax(steps, (s) => s.earned);
  if (at < 0) return null;
  const rates = questions
    .map((q) => q.earnedRates[at])
    .filter((p): p is number => p !== null)
    .map((p) => p * 100);
  const [ciLow, ciHigh] = interval(rates);
  const best = steps[at]!;
  const exAt = argMax(steps, (s) => s.ex);
  const top = steps[exAt]!;
  let byEx: BestByEx | null = null;
  if (exAt !== at) {
    const applying = warnings.filter((w) => w.rule !== 'fell-below-best' && w.startStep <= top.step);
    const what = unearnedText(top.unearned);
    byEx = {
      step: top.step,
      ex: top.ex!,
      earned: top.earned!,
      unearned: { ...top.unearned },
      warnings: applying.map((w) => w.rule),
      message:
        `step ${top.step} has the highest EX, ${fmt(top.ex!)}, but an earned score of ${fmt(top.earned!)}` +
        (what ? `: ${what} among its EX passes` : '') +
        (applying.length ? `; warnings that hold there: ${applying.map((w) => w.rule).join(', ')}` : ''),
    };
  }
  return {
    step: best.step,
    ex: best.ex!,
    earned: best.earned!,
    ciLow,
    ciHigh,
    resamples: BEST_RESAMPLES,
    byEx,
  };
}

/**
 * `fell-below-best`: a step after the best one whose EX is below the best step's EX by more than
 * its own interval reaches (the best EX above the step's interval). Starts at the first such
 * step; the message names the best step, the step with the largest fall, and the other steps.
 */
function regressionWarning(steps: readonly StepStats[], best: BestCheckpoint | null): SeriesWarning | null {
  if (!best) return null;
  const after = steps.slice(steps.findIndex((s) => s.step === best.step) + 1);
  const fell = after.filter((s) => s.ex !== null && s.exCiHigh !== null && s.ex < best.ex && best.ex > s.exCiHigh);
  if (fell.length === 0) return null;
  const worst = fell.reduce((a, s) => (s.ex! < a.ex! ? s : a));
  const others = fell.filter((s) => s !== worst).map((s) => s.step);
  return {
    rule: 'fell-below-best',
    startStep: fell[0]!.step,
    message:
      `EX fell from ${fmt(best.ex)} at step ${best.step} (the best step) to ${fmt(worst.ex!)} at step ${worst.step}, ` +
      `${fmt(best.ex - worst.ex!)} points, below step ${worst.step}'s own 95% interval (${fmt(worst.exCiLow!)} to ${fmt(worst.exCiHigh!)})` +
      (others.length ? `; also below their own interval: step ${others.join(', ')}` : ''),
  };
}

export interface SeriesReport {
  steps: StepStats[];
  questions: QuestionDynamics[];
  buckets: Record<Bucket, number>;
  warnings: SeriesWarning[];
  best: BestCheckpoint | null;
}

/** The report from each step's numbers and cells (what the analysis worker keeps of each step as it reads it). */
export function seriesReportOf(
  steps: StepStats[],
  cells: ReadonlyArray<{ step: number; cells: StepCells }>,
): SeriesReport {
  const questions = dynamicsOfCells(cells);
  const buckets = Object.fromEntries(BUCKETS.map((b) => [b, 0])) as Record<Bucket, number>;
  for (const q of questions) buckets[q.bucket]++;
  const warnings = seriesWarnings(steps);
  const best = bestCheckpoint(steps, questions, warnings);
  const fell = regressionWarning(steps, best);
  return { steps, questions, buckets, warnings: fell ? [...warnings, fell] : warnings, best };
}

/**
 * Everything the series view and the CLI show, from the series' samples; the questions of
 * `exclusions` (src/core/eval/exclusions.ts) are left out of every step, so no number counts them.
 */
export function seriesReport(series: Pick<Series, 'steps'>, exclusions?: readonly Exclusion[] | null): SeriesReport {
  const kept = series.steps.map((s) => keptPositions(s.run.samples, exclusions));
  const samples = series.steps.map((s, i) => pick(s.run.samples, kept[i]!).map(seriesSample));
  const steps = series.steps.map((s, i) =>
    stepStats({
      step: s.step,
      samples: samples[i]!,
      trainerScores: pick(s.trainerScores, kept[i]!),
      metrics: s.run.run.config.metrics,
      wallTime: s.wallTime,
      wallTimeSource: s.wallTimeSource,
    }),
  );
  return seriesReportOf(
    steps,
    series.steps.map((s, i) => ({ step: s.step, cells: stepCells(samples[i]!) })),
  );
}

/** The entries at `at` (all of them when `at` is null). */
function pick<T>(list: readonly T[], at: readonly number[] | null): readonly T[] {
  return at ? at.map((i) => list[i]!) : list;
}
