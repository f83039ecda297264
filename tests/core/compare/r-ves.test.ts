import { describe, expect, it } from 'vitest';
import { timeRatio, vesReward } from '../../../src/core/compare/r-ves.ts';

describe('official R-VES pieces', () => {
  it.each([
    [0, 0],
    [0.1, 0.25],
    [0.25, 0.5],
    [0.49, 0.5],
    [0.5, 0.75],
    [0.99, 0.75],
    [1, 1],
    [1.99, 1],
    [2, 1.25],
    [10, 1.25],
  ])('a time ratio of %f gives the reward %f', (ratio, reward) => {
    expect(vesReward(ratio)).toBe(reward);
  });
  it('drops ratios outside mean ± 3 std before averaging', () => {
    // mean 5.71, population std 21.1: 100 lies above mean + 3 std (69.0) and is dropped
    expect(timeRatio([...Array(20).fill(1), 100])).toBe(1);
    // with few samples nothing is far enough out: [1, 1, 4] has mean 2, std 1.41 -> all kept
    expect(timeRatio([1, 1, 4])).toBe(2);
    const many = [...Array(200).fill(1), 1.1, 0.9, 1000];
    expect(timeRatio(many)).toBeCloseTo((200 + 1.1 + 0.9) / 202, 12);
  });
  it('fails like the official code (division by zero) when every ratio is identical', () => {
    expect(timeRatio([1, 1, 1])).toBeNull();
  });
  it('fails on an infinite ratio from a zero timing', () => {
    expect(timeRatio([1, Infinity])).toBeNull();
  });
});
