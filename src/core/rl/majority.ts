/**
 * Self-consistency (maj@k): samples vote with their execution result. Samples whose
 * results EX would call equal share a `resultKey` and vote together; samples that did not
 * execute (no `resultKey`) do not vote. The largest group wins and the question scores that
 * group's EX. A sample whose output held no SQL (format reward 0: extraction rule `none`, or a
 * BIRD value that is not a string) does not vote either, although its empty SQL "executes"
 * to an empty result: having no answer is not an answer.
 *
 * - Over all n samples (maj@n) ties between equally large groups are broken by the injected
 *   Rng: `groups[floor(rng.next() * ties)]` among the tied groups in order of first appearance,
 *   drawing only when there is a tie, so a seed reproduces the vote exactly.
 * - For k < n, maj@k is the EXACT expectation over all C(n, k) subsets of k samples with a
 *   uniformly random tie-break (a tie between t groups gives each 1/t), computed by counting
 *   (below), not by sampling: no seed is involved and the value equals the mean of the seeded
 *   procedure over seeds and subsets.
 */
import { CodedError } from '../errors.ts';
import type { SampleRecord } from '../run/types.ts';
import { randomIndex, type Rng } from '../util/rng.ts';
import { maxOf } from '../util/numbers.ts';

export interface VoteGroup {
  resultKey: string;
  size: number;
  /** Mean EX of the group's samples (all 1 or all 0 unless the database was mutated). */
  value: number;
  /** Lowest sample number in the group. */
  first: number;
}

/** Voting groups in order of first appearance, and how many samples abstain. */
export function voteGroups(samples: readonly Pick<SampleRecord, 'resultKey' | 'ex' | 'sample' | 'format'>[]): {
  groups: VoteGroup[];
  abstain: number;
} {
  const byKey = new Map<string, { size: number; exSum: number; first: number }>();
  let abstain = 0;
  for (const s of [...samples].sort((a, b) => a.sample - b.sample)) {
    if (s.resultKey === undefined || s.format === 0) {
      abstain++;
      continue;
    }
    const g = byKey.get(s.resultKey);
    if (g) {
      g.size++;
      g.exSum += s.ex;
    } else byKey.set(s.resultKey, { size: 1, exSum: s.ex, first: s.sample });
  }
  const groups = [...byKey].map(([resultKey, g]) => ({
    resultKey,
    size: g.size,
    value: g.exSum / g.size,
    first: g.first,
  }));
  return { groups, abstain };
}

interface Vote {
  /** The winning group, or null when no sample executed. */
  winner: VoteGroup | null;
  /** Number of groups tied for the largest size (1 = no tie). */
  tied: number;
  /** EX of the voted answer (0 when nobody voted). */
  score: number;
}

/** The vote over all samples, ties broken by `rng`. */
export function majorityVote(groups: readonly VoteGroup[], rng: Rng): Vote {
  if (groups.length === 0) return { winner: null, tied: 0, score: 0 };
  const max = maxOf(groups.map((g) => g.size));
  const top = groups.filter((g) => g.size === max);
  const winner = top.length === 1 ? top[0]! : top[randomIndex(rng, top.length)]!;
  return { winner, tied: top.length, score: winner.value };
}

/** ln(i!) for i = 0..n: binomials as ln C(a, b) = lf[a] - lf[b] - lf[a - b] never overflow. */
function logFactorials(n: number): Float64Array {
  const lf = new Float64Array(n + 1);
  for (let i = 2; i <= n; i++) lf[i] = lf[i - 1]! + Math.log(i);
  return lf;
}

/**
 * Above this many inner steps for one question the exact maj@k (k < n) is refused with a
 * clear error instead of running for minutes: it is reached only with many (hundreds of)
 * distinct results of the same size as the right one, e.g. 1,000 singletons.
 */
/** Below this a term is recomputed from logs rather than stepped by a ratio, so underflow cannot stick at 0. */
const TINY = 1e-250;

const MAX_MAJ_STEPS = 100_000_000;

/** Thrown when a question's exact maj@k would exceed MAX_MAJ_STEPS. */
export class MajCurveTooLarge extends CodedError<'TOO_LARGE'> {
  override readonly name = 'MajCurveTooLarge';
  constructor(
    readonly samples: number,
    readonly groups: number,
  ) {
    super(
      'TOO_LARGE',
      `exact maj@k for k < n over ${samples} samples in ${groups} distinct results needs more than ${MAX_MAJ_STEPS} steps`,
    );
  }
}

/** The inner steps expectedMajCurve takes, counted before any is taken (same loops, no work). */
function majCurveSteps(groups: readonly VoteGroup[], abstain: number): number {
  let steps = 0;
  groups.forEach((g, gi) => {
    if (g.value === 0) return;
    const others = groups.filter((_, oi) => oi !== gi);
    for (let t = 1; t <= g.size; t++) {
      let c = 0;
      let free = abstain;
      for (const o of others) {
        if (o.size < t) free += o.size;
        else steps += ++c * ((c - 1) * t + 1) * (t + 1);
      }
      steps += (c * t + 1) * (free + 1);
      if (steps > MAX_MAJ_STEPS) return;
    }
  });
  return steps;
}

/**
 * Expected maj@k for every k from 1 to n (index k - 1), n = voters + abstainers.
 *
 * For a group G of size s and a vote count t in G, every other group must draw at most t.
 * Groups smaller than t cannot reach t, so they join the abstainers in a free pool of f
 * samples; the c constrained groups (size >= t, S samples together) are combined one by one:
 * P[j][m] is the share of the C(S, m) ways to draw m samples from them in which each draws at
 * most t and exactly j draw t (a j+1-way tie, G then wins with probability 1/(j+1)). Then
 *   P_k(G wins) = sum_t sum_m C(s, t) C(S, m) C(f, k-t-m) / C(n, k) * sum_j P[j][m] / (j+1).
 * Every count is a ratio of binomials formed in log space, so n is not limited by the double
 * range (C(1030, 515) already overflows). Only groups with a non-zero value contribute, which
 * in practice is the one group whose result equals gold.
 */
export function expectedMajCurve(groups: readonly VoteGroup[], abstain: number): number[] {
  const n = groups.reduce((a, g) => a + g.size, abstain);
  const lf = logFactorials(n);
  const lC = (a: number, b: number) => lf[a]! - lf[b]! - lf[a - b]!;
  const curve = new Float64Array(n);
  if (majCurveSteps(groups, abstain) > MAX_MAJ_STEPS) throw new MajCurveTooLarge(n, groups.length);
  groups.forEach((g, gi) => {
    if (g.value === 0) return;
    const others = groups.filter((_, oi) => oi !== gi);
    for (let t = 1; t <= g.size; t++) {
      const constrained = others.filter((o) => o.size >= t);
      const free = abstain + others.reduce((a, o) => (o.size < t ? a + o.size : a), 0);
      // P[j * width + m], m <= maxM = (groups combined so far) * t
      const width = constrained.length * t + 1;
      let P = new Float64Array((constrained.length + 1) * width);
      P[0] = 1;
      let S = 0;
      let maxM = 0;
      constrained.forEach((o, step) => {
        const next = new Float64Array(P.length);
        const S2 = S + o.size;
        for (let m = 0; m <= maxM; m++) {
          let any = false;
          for (let j = 0; j <= step && !any; j++) any = P[j * width + m] !== 0;
          if (!any) continue;
          // F(x) = C(S, m) C(o, x) / C(S2, m + x), a probability, stepped in x by its ratio.
          const lSm = lC(S, m);
          let f = 0;
          for (let x = 0; x <= t; x++) {
            f =
              x === 0 || f < TINY
                ? Math.exp(lSm + lC(o.size, x) - lC(S2, m + x))
                : f * ((o.size - x + 1) / x) * ((m + x) / (S2 - m - x + 1));
            if (f === 0) continue;
            const tie = x === t ? 1 : 0;
            for (let j = 0; j <= step; j++) {
              const w = P[j * width + m]!;
              if (w !== 0) next[(j + tie) * width + m + x] += w * f;
            }
          }
        }
        S = S2;
        maxM += t;
        P = next;
      });
      const lWays = lC(g.size, t);
      for (let m = 0; m <= maxM; m++) {
        let q = 0;
        for (let j = 0; j <= constrained.length; j++) q += P[j * width + m]! / (j + 1);
        if (q === 0) continue;
        const lHead = lWays + lC(S, m);
        // C(s, t) C(S, m) C(free, r) / C(n, k), stepped in r by its ratio.
        let f = 0;
        for (let r = 0; r <= free; r++) {
          const k = t + m + r;
          f =
            r === 0 || f < TINY
              ? Math.exp(lHead + lC(free, r) - lC(n, k))
              : f * ((free - r + 1) / r) * (k / (n - k + 1));
          curve[k - 1] += g.value * q * f;
        }
      }
    }
  });
  return Array.from(curve);
}
