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
import type { SampleRecord } from '../run/types.ts';
import { randomIndex, type Rng } from './rng.ts';

export interface VoteGroup {
  resultKey: string;
  size: number;
  /** Mean EX of the group's samples (all 1 or all 0 unless the database was mutated). */
  value: number;
  /** Lowest sample number in the group. */
  first: number;
}

/** Voting groups in order of first appearance, and how many samples abstain. */
export function voteGroups(
  samples: readonly Pick<SampleRecord, 'resultKey' | 'ex' | 'sample' | 'format'>[],
): { groups: VoteGroup[]; abstain: number } {
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
  const groups = [...byKey].map(([resultKey, g]) => ({ resultKey, size: g.size, value: g.exSum / g.size, first: g.first }));
  return { groups, abstain };
}

export interface Vote {
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
  const max = Math.max(...groups.map((g) => g.size));
  const top = groups.filter((g) => g.size === max);
  const winner = top.length === 1 ? top[0]! : top[randomIndex(rng, top.length)]!;
  return { winner, tied: top.length, score: winner.value };
}

/** Binomial coefficients C(n, 0..n) as doubles; exact while below 2^53, accurate after. */
function binomialRows(n: number): Float64Array[] {
  const rows: Float64Array[] = [];
  for (let i = 0; i <= n; i++) {
    const row = new Float64Array(i + 1);
    row[0] = row[i] = 1;
    for (let j = 1; j < i; j++) row[j] = rows[i - 1]![j - 1]! + rows[i - 1]![j]!;
    rows.push(row);
  }
  return rows;
}

/** Counting stays in doubles: C(1000, 500) ~ 2.7e299 is the largest that fits. */
export const MAX_EXACT_MAJ_SAMPLES = 1000;

/**
 * Expected maj@k for every k from 1 to n (index k - 1), n = voters + abstainers.
 *
 * For a group G of size s and a vote count t in G, the other groups must each draw at most
 * t; W_t[j][m] counts the ways to draw m samples from them with exactly j of them drawing t
 * (a j+1-way tie, G then wins with probability 1/(j+1)); abstainers fill the rest freely:
 *   P_k(G wins) = sum_t C(s, t) sum_{j,m} W_t[j][m] C(f, k-t-m) / (j+1) / C(n, k).
 * Only groups with a non-zero value contribute, which in practice is the one group whose
 * result equals gold.
 */
export function expectedMajCurve(groups: readonly VoteGroup[], abstain: number): number[] {
  const n = groups.reduce((a, g) => a + g.size, abstain);
  if (n > MAX_EXACT_MAJ_SAMPLES) {
    throw new RangeError(`exact maj@k supports up to ${MAX_EXACT_MAJ_SAMPLES} samples per question, got ${n}`);
  }
  const C = binomialRows(n);
  const curve = new Array<number>(n).fill(0);
  groups.forEach((g, gi) => {
    if (g.value === 0) return;
    const others = groups.filter((_, oi) => oi !== gi);
    const J = others.length;
    for (let t = 1; t <= g.size; t++) {
      // W[j * (n + 1) + m]
      let W = new Float64Array((J + 1) * (n + 1));
      W[0] = 1;
      let maxM = 0;
      others.forEach((o, step) => {
        const next = new Float64Array(W.length);
        const top = Math.min(o.size, t);
        for (let j = 0; j <= step; j++) {
          for (let m = 0; m <= maxM; m++) {
            const w = W[j * (n + 1) + m]!;
            if (w === 0) continue;
            for (let x = 0; x <= top; x++) {
              const at = (x === t ? j + 1 : j) * (n + 1) + m + x;
              next[at] = next[at]! + w * C[o.size]![x]!;
            }
          }
        }
        maxM += top;
        W = next;
      });
      const ways = C[g.size]![t]!;
      for (let k = t; k <= n; k++) {
        let sum = 0;
        for (let j = 0; j <= J; j++) {
          for (let m = 0; m <= Math.min(maxM, k - t); m++) {
            const w = W[j * (n + 1) + m]!;
            const rest = k - t - m;
            if (w === 0 || rest > abstain) continue;
            sum += (w * C[abstain]![rest]!) / (j + 1);
          }
        }
        curve[k - 1] = curve[k - 1]! + (g.value * ways * sum) / C[n]![k]!;
      }
    }
  });
  return curve;
}
