import { describe, expect, it } from 'vitest';
import { chooseThreads } from '../../src/core/engine/threads.ts';

const MB = 1024 * 1024;

describe('chooseThreads', () => {
  it('uses one thread without cross-origin isolation, whatever the machine', () => {
    expect(chooseThreads({ hardwareConcurrency: 16, crossOriginIsolated: false }, 4000 * MB)).toEqual({
      threads: 1,
      reason: 'the page is not cross-origin isolated (COOP/COEP headers), so WebAssembly threads are unavailable',
    });
  });

  it('uses one thread for a tiny model (measured faster on the 2-core machine)', () => {
    expect(chooseThreads({ hardwareConcurrency: 16, crossOriginIsolated: true }, 1.2 * MB).threads).toBe(1);
  });

  it.each<[number, number]>([
    [1, 1],
    [2, 1],
    [4, 2],
    [8, 4],
    [12, 6],
    [32, 8],
  ])('uses half of %i logical cores for a real model, at most 8: %i', (cores, threads) => {
    expect(chooseThreads({ hardwareConcurrency: cores, crossOriginIsolated: true }, 900 * MB).threads).toBe(threads);
  });
});
