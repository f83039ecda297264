import { describe, expect, it } from 'vitest';
import type { StorageInfo, WorkbenchStore } from '../../../src/app/store-ports.ts';
import { SETTLE_DELAYS_MS, StorageState } from '../../../src/ui/context/storage.svelte.ts';

const MiB = 1024 * 1024;
const STORED = 1449 * MiB;

/**
 * Test double of the browser's storage port (navigator.storage cannot run in Node): it answers
 * as Chromium did after a restart, the figure before it had counted IndexedDB's data for the
 * first `staleReads` estimates, then what is stored.
 */
function browserAfterRestart(staleReads: number): { store: WorkbenchStore; reads: () => number } {
  let reads = 0;
  const storage = {
    async estimate(): Promise<StorageInfo> {
      reads += 1;
      return { usage: reads <= staleReads ? 16 * MiB : STORED, quota: 10_000 * MiB, persisted: false };
    },
    async requestPersistence() {
      return false;
    },
  };
  return { store: { storage } as unknown as WorkbenchStore, reads: () => reads };
}

describe('StorageState: the storage line shows what the browser counts once it has counted everything', () => {
  it('a first figure read before the browser counted the stored datasets is replaced by the settled one', async () => {
    const { store, reads } = browserAfterRestart(3);
    const waits: number[] = [];
    const state = new StorageState(store, async (ms) => void waits.push(ms));
    // The app's start reads the figure while the stores open: the browser's first answer.
    await state.refresh();
    expect(state.info?.usage).toBe(16 * MiB);
    // Then, the stores open, it is read again as the browser settles.
    await state.settle();
    expect(state.info?.usage).toBe(STORED);
    expect(reads()).toBe(1 + SETTLE_DELAYS_MS.length);
    // The delays between readings add up to the schedule (none waited before the first reading).
    expect(waits.reduce((a, b) => a + b, 0)).toBe(SETTLE_DELAYS_MS.at(-1));
    expect(waits.every((ms) => ms > 0)).toBe(true);
  });

  it('a later change replaces the readings still to come of an earlier one', async () => {
    const { store, reads } = browserAfterRestart(0);
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let waited = 0;
    // The first settle() waits until released; the second never waits.
    const state = new StorageState(store, (ms) => (waited++ === 0 ? blocked : Promise.resolve(void ms)));
    const first = state.settle();
    await state.settle();
    const afterSecond = reads();
    release();
    await first;
    // The first one read once (at once) and stopped when released: the second one had replaced it.
    expect(afterSecond).toBe(1 + SETTLE_DELAYS_MS.length);
    expect(reads()).toBe(afterSecond);
    expect(state.info?.usage).toBe(STORED);
  });
});
