/**
 * A sample's reward columns as the item view and the question-across-steps view show them beside
 * the trainer's score (core/series/model.ts trainerRewardsText).
 */
import { describe, expect, it } from 'vitest';
import { trainerRewardsText } from '../../../src/core/series/model.ts';

describe("the trainer's reward columns in a line", () => {
  it('names each column in the dump’s order with its value (4 decimals at most), none where it has no value', () => {
    expect(trainerRewardsText({ correctness: 1, format: 0.5, advantage: 0.7142857142857143 })).toBe(
      'correctness 1 · format 0.5 · advantage 0.7143',
    );
    expect(trainerRewardsText({ format_reward: null, advantage: -0.25 })).toBe('format_reward none · advantage -0.25');
  });

  it('is empty for a sample without reward columns', () => {
    expect(trainerRewardsText(null)).toBe('');
    expect(trainerRewardsText(undefined)).toBe('');
    expect(trainerRewardsText({})).toBe('');
  });
});
