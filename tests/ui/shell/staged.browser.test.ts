/** Drawing in steps (src/ui/shell/staged.svelte.ts): one step per task, up to the limit, back to the start on a reset. */
import { flushSync } from 'svelte';
import { describe, expect, it } from 'vitest';
import { nextTask } from '../../../src/ui/shell/staged.svelte.ts';
import { stagedHarness } from './staged-harness.svelte.ts';

/** Lets one timer task run, then applies the state it changed. */
async function oneTask(): Promise<void> {
  await nextTask();
  flushSync();
}

describe('Staged', () => {
  it('grows by its step once per task and stops at the limit', async () => {
    const s = stagedHarness(120, { start: 50, step: 50 });
    expect(s.count).toBe(50);
    await oneTask();
    expect(s.count).toBe(100);
    await oneTask();
    expect(s.count).toBe(150);
    expect(s.reached(120)).toBe(true);
    await oneTask();
    await oneTask();
    expect(s.count).toBe(150);
    s.stop();
  });

  it('goes back to the start when the reset signal changes, and on when the limit grows', async () => {
    const s = stagedHarness(3);
    expect(s.count).toBe(0);
    for (let i = 0; i < 3; i++) await oneTask();
    expect(s.count).toBe(3);
    s.reset();
    expect(s.count).toBe(0);
    expect(s.reached(1)).toBe(false);
    await oneTask();
    expect(s.count).toBe(1);
    s.setLimit(1);
    await oneTask();
    expect(s.count).toBe(1);
    s.setLimit(2);
    await oneTask();
    expect(s.count).toBe(2);
    s.stop();
  });

  it('stops stepping once its owner is gone', async () => {
    const s = stagedHarness(10);
    s.stop();
    await oneTask();
    await oneTask();
    expect(s.count).toBe(0);
  });
});
