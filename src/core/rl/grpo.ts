/**
 * GRPO group statistics exactly as verl's `compute_grpo_outcome_advantage` computes them
 * (verl/trainer/ppo/core_algos.py): per prompt, mean and unbiased standard deviation
 * (torch.std, divisor n - 1) of the samples' rewards, and advantage (r - mean) / (std + eps)
 * with eps = 1e-6. A group of one sample gets mean 0 and std 1, so its advantage is r / (1 + eps).
 */
import { maxOf, meanOf } from '../util/numbers.ts';
import { WorkbenchError } from '../errors.ts';

export const GRPO_EPSILON = 1e-6;

interface GrpoGroupStats {
  mean: number;
  std: number;
  advantages: number[];
  /** At least two samples and every reward equal: every advantage is 0, no gradient. */
  zeroVariance: boolean;
  /** Every advantage is exactly 0 (zero variance, or a single sample with reward 0). */
  noGradient: boolean;
}

/** Above this magnitude a squared deviation could overflow to Infinity: compute on scaled rewards. */
const SCALE_ABOVE = 1e150;

export function grpoGroup(rewards: readonly number[], epsilon = GRPO_EPSILON): GrpoGroupStats {
  const n = rewards.length;
  if (n === 0) throw new WorkbenchError('INTERNAL', 'a GRPO group needs at least one sample');
  const zeroVariance = n > 1 && rewards.every((r) => r === rewards[0]);
  let mean = 0;
  let std = 1;
  let advantages: number[];
  if (zeroVariance) {
    // Equal rewards can leave a rounding residue in the mean; verl's torch gives exactly 0 for them too.
    mean = meanOf(rewards);
    advantages = rewards.map(() => 0);
  } else if (n > 1) {
    // A single huge finite reward (say 1e300) would square to Infinity and zero every advantage:
    // the same statistics on rewards divided by their largest magnitude, scaled back.
    const big = maxOf(rewards.map(Math.abs));
    const scale = big > SCALE_ABOVE ? big : 1;
    const scaled = scale === 1 ? rewards : rewards.map((r) => r / scale);
    const m = meanOf(scaled);
    const s = Math.sqrt(scaled.reduce((a, r) => a + (r - m) ** 2, 0) / (n - 1));
    mean = m * scale;
    std = s * scale;
    advantages = scaled.map((r) => (r - m) / (s + epsilon / scale));
  } else {
    advantages = rewards.map((r) => (r - mean) / (std + epsilon));
  }
  return { mean, std: zeroVariance ? 0 : std, advantages, zeroVariance, noGradient: advantages.every((a) => a === 0) };
}
