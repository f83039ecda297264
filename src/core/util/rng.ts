/** Port: uniform numbers in [0, 1). Injected wherever a statistic draws at random, so runs repeat exactly. */
export interface Rng {
  next(): number;
}

/**
 * mulberry32 (Tommy Ettinger's 32-bit generator): tiny, fast and good enough for bootstrap
 * resampling and tie-breaks; the same seed gives the same sequence in the browser and in Node.
 */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return {
    next() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

/** A uniform integer in [0, n). */
export function randomIndex(rng: Rng, n: number): number {
  return Math.min(n - 1, Math.floor(rng.next() * n));
}
