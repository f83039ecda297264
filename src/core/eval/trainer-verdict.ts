/**
 * The trainer against us, per sample: whether the trainer's own score of a sample says right and
 * our EX says wrong, or the reverse. The training run's statistics count these per step
 * (series/stats.ts); the item list filters on them (views/item-query.ts). docs/series.md.
 */
import type { ItemResult } from '../types.ts';

/**
 * The trainer's pass threshold: a sample the trainer scored at least this is right by the
 * trainer's own account. 1 is the right answer of a binary reward (verl's, SkyRL's and prime-rl's
 * SQL rewards give 1 for a match, 0 otherwise), full credit of a partial-credit reward in [0, 1],
 * and still a pass for a reward that adds a format bonus above 1 (1.1). docs/series.md.
 */
export const TRAINER_PASS_THRESHOLD = 1;

/**
 * Where the trainer's score of a sample and our EX disagree: `trainer-right` (score >= the
 * threshold, EX 0), `trainer-wrong` (score below it, EX 1); null when they agree or the sample
 * has no trainer's score (or is not scored by us: a missing database).
 */
export function trainerDisagreement(
  score: number | null | undefined,
  sample: Pick<ItemResult, 'ex' | 'status'>,
  threshold = TRAINER_PASS_THRESHOLD,
): 'trainer-right' | 'trainer-wrong' | null {
  if (typeof score !== 'number' || !Number.isFinite(score) || sample.status === 'missing-db') return null;
  const trainerRight = score >= threshold;
  if (trainerRight && sample.ex !== 1) return 'trainer-right';
  if (!trainerRight && sample.ex === 1) return 'trainer-wrong';
  return null;
}
