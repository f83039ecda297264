/** A Staged count inside an effect root, with a reset signal and a limit the test can change. */
import { flushSync } from 'svelte';
import { Staged, type StagedOptions } from '../../../src/ui/shell/staged.svelte.ts';

export function stagedHarness(limit: number, options: Omit<StagedOptions, 'reset'> = {}) {
  let max = $state(limit);
  let version = $state(0);
  let staged!: Staged;
  const stop = $effect.root(() => {
    staged = new Staged(() => max, { ...options, reset: () => version });
  });
  flushSync();
  return {
    get count() {
      return staged.count;
    },
    reached: (n: number) => staged.reached(n),
    setLimit(n: number) {
      max = n;
      flushSync();
    },
    reset() {
      version++;
      flushSync();
    },
    stop,
  };
}
