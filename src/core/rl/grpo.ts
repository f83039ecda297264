/**
 * GRPO group statistics exactly as verl's `compute_grpo_outcome_advantage` computes them
 * (verl/trainer/ppo/core_algos.py): per prompt, mean and unbiased standard deviation
 * (torch.std, divisor n - 1) of the samples' rewards, and advantage (r - mean) / (std + eps)
 * with eps = 1e-6. A group of one sample gets mean 0 and std 1, so its advantage is r / (1 + eps).
 */
export const GRPO_EPSILON = 1e-6;

export interface GrpoGroupStats {
  mean: number;
  std: number;
  advantages: number[];
  /** At least two samples and every reward equal: every advantage is 0, no gradient. */
  zeroVariance: boolean;
  /** Every advantage is exactly 0 (zero variance, or a single sample with reward 0). */
  noGradient: boolean;
}

export function grpoGroup(rewards: readonly number[], epsilon = GRPO_EPSILON): GrpoGroupStats {
  const n = rewards.length;
  if (n === 0) throw new RangeError('a GRPO group needs at least one sample');
  let mean = 0;
  let std = 1;
  if (n > 1) {
    mean = rewards.reduce((a, r) => a + r, 0) / n;
    std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (n - 1));
  }
  const zeroVariance = n > 1 && rewards.every((r) => r === rewards[0]);
  // Equal rewards can leave a rounding residue in the mean; verl's torch gives exactly 0 for them too.
  const advantages = zeroVariance ? rewards.map(() => 0) : rewards.map((r) => (r - mean) / (std + epsilon));
  return { mean, std: zeroVariance ? 0 : std, advantages, zeroVariance, noGradient: advantages.every((a) => a === 0) };
}
