/**
 * Distillation (Zhong, Yu, Klein 2020, section 3.3): from a pool of candidate databases, keep a
 * small set that tells each gold apart from as many of its near-miss variants as possible.
 * A candidate "distinguishes" (gold, variant) when both run on it and their results differ
 * under the official comparison (executionMatch). Greedy set cover: repeatedly keep the
 * candidate that distinguishes the most pairs not yet distinguished; ties go to the lower
 * candidate number (deterministic). When no candidate adds a pair, the suite is topped up
 * with the remaining candidates in order up to its size: extra random databases catch wrong
 * queries the variants do not model.
 */

interface DistillInput {
  /** Per candidate: the (gold, variant) pair ids it distinguishes. */
  distinguishes: ReadonlyArray<ReadonlySet<number>>;
  size: number;
}

interface DistillOutcome {
  /** Chosen candidate numbers, in the order they were kept. */
  chosen: number[];
  /** Pairs some candidate distinguishes, and of those, pairs the chosen set distinguishes. */
  distinguishable: number;
  covered: number;
  /** Candidates kept by the cover (the rest of `chosen` is the top-up). */
  byCover: number;
}

export function distill({ distinguishes, size }: DistillInput): DistillOutcome {
  const all = new Set<number>();
  for (const s of distinguishes) for (const p of s) all.add(p);
  const covered = new Set<number>();
  const chosen: number[] = [];
  const free = new Set(distinguishes.map((_, i) => i));
  while (chosen.length < size && free.size > 0) {
    let best = -1;
    let gain = 0;
    for (const c of free) {
      let g = 0;
      for (const p of distinguishes[c]!) if (!covered.has(p)) g++;
      if (g > gain) {
        gain = g;
        best = c;
      }
    }
    if (best < 0) break;
    chosen.push(best);
    free.delete(best);
    for (const p of distinguishes[best]!) covered.add(p);
  }
  const byCover = chosen.length;
  for (const c of [...free].sort((a, b) => a - b)) {
    if (chosen.length >= size) break;
    chosen.push(c);
  }
  return { chosen, distinguishable: all.size, covered: covered.size, byCover };
}
