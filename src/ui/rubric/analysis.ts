/**
 * What the rubric screen draws from a run's rubric scores (pure): score histograms, the
 * agreement of two aggregates, and the judge-vs-EX matrix whose "judge passes, EX = 0" cell
 * lists the samples where the judge rewards a wrong answer (a reward-hacking lens).
 */
import type { RubricScores } from '../../core/rubric/scores.ts';

const BINS = 10;

/** Counts of scores in [0, 0.1), [0.1, 0.2), ..., [0.9, 1]; values outside [0, 1] go to the end bins. */
export function histogram(values: readonly (number | null)[], bins = BINS): number[] {
  const out = new Array<number>(bins).fill(0);
  for (const v of values) {
    if (v === null) continue;
    const b = Math.min(bins - 1, Math.max(0, Math.floor(v * bins)));
    out[b]! += 1;
  }
  return out;
}

export const binLabels = (bins = BINS): string[] =>
  Array.from({ length: bins }, (_, i) => `${(i / bins).toFixed(1)}–${((i + 1) / bins).toFixed(1)}`);

export interface Agreement {
  /** Samples with both scores. */
  n: number;
  /** Pearson correlation, null when fewer than 2 pairs or a constant series. */
  pearson: number | null;
  meanAbsDiff: number | null;
  /** Share of samples on the same side of `threshold`. */
  passAgreement: number | null;
}

export function agreement(a: readonly (number | null)[], b: readonly (number | null)[], threshold = 0.5): Agreement {
  const pairs: [number, number][] = [];
  a.forEach((x, i) => {
    const y = b[i];
    if (x !== null && y !== null && y !== undefined) pairs.push([x, y]);
  });
  const n = pairs.length;
  if (n === 0) return { n, pearson: null, meanAbsDiff: null, passAgreement: null };
  const mx = pairs.reduce((s, p) => s + p[0], 0) / n;
  const my = pairs.reduce((s, p) => s + p[1], 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [x, y] of pairs) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  }
  return {
    n,
    pearson: n >= 2 && sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null,
    meanAbsDiff: pairs.reduce((s, [x, y]) => s + Math.abs(x - y), 0) / n,
    passAgreement: pairs.filter(([x, y]) => x >= threshold === y >= threshold).length / n,
  };
}

export type JudgeScoreKind = 'explicit' | 'implicit' | 'likert';

export function scoreOf(s: RubricScores, kind: JudgeScoreKind): number | null {
  if (kind === 'explicit') return s.explicit?.score ?? null;
  if (kind === 'implicit') return s.implicit?.score ?? null;
  return s.likert?.score ?? null;
}

interface ExMatrixRow {
  key: string;
  ex: 0 | 1;
  score: number | null;
  /** The sample was not scored (its database is missing): it is neither EX 1 nor EX 0. */
  unscored?: boolean;
}

export interface ExMatrix {
  /** [judge passes][EX]: `passWrong` = judge ≥ threshold and EX = 0. */
  passRight: number;
  passWrong: number;
  failRight: number;
  failWrong: number;
  /** Samples without a judge score. */
  noScore: number;
  /** Samples left out because they were not scored (database missing). */
  unscored?: number;
  /** Keys of the samples in `passWrong`. */
  rewardedWrong: string[];
}

export function exMatrix(rows: readonly ExMatrixRow[], threshold = 0.5): ExMatrix {
  const m: ExMatrix = {
    passRight: 0,
    passWrong: 0,
    failRight: 0,
    failWrong: 0,
    noScore: 0,
    rewardedWrong: [],
    unscored: 0,
  };
  for (const r of rows) {
    if (r.unscored) m.unscored! += 1;
    else if (r.score === null) m.noScore += 1;
    else if (r.score >= threshold) {
      if (r.ex === 1) m.passRight += 1;
      else {
        m.passWrong += 1;
        m.rewardedWrong.push(r.key);
      }
    } else if (r.ex === 1) m.failRight += 1;
    else m.failWrong += 1;
  }
  return m;
}

/** True when some sample got a verdict or a 1..10 score from a judge (not only SQL and regex checks). */
export function judgeAnswered(scores: readonly RubricScores[]): boolean {
  return scores.some(
    (s) =>
      s.criteria.some((c) => c.source === 'judge' && c.status === 'ok') ||
      s.implicit?.status === 'ok' ||
      s.likert?.status === 'ok',
  );
}

export const fmt3 = (x: number | null | undefined): string => (x === null || x === undefined ? '—' : x.toFixed(3));

/** A criterion's verdict as shown in the per-sample tables. */
export const verdictMark = (met: boolean | null, status: string): string =>
  status !== 'ok' ? status : met ? '✓ met' : '✗ not met';

const SCORE_KINDS = ['explicit', 'implicit', 'likert'] as const;

/** Each aggregate's score histogram over a run's samples (ScoreOverview's charts). */
export function scoreHistograms(
  scores: readonly RubricScores[],
): { kind: (typeof SCORE_KINDS)[number]; counts: number[] }[] {
  return SCORE_KINDS.map((k) => ({ kind: k, counts: histogram(scores.map((s) => scoreOf(s, k))) }));
}

/** Agreement of the explicit and implicit scores over a run's samples. */
export function explicitImplicitAgreement(scores: readonly RubricScores[], threshold: number): Agreement {
  return agreement(
    scores.map((s) => scoreOf(s, 'explicit')),
    scores.map((s) => scoreOf(s, 'implicit')),
    threshold,
  );
}
