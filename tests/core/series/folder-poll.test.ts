/**
 * The watched folder's rule (StableFiles): a file is taken once its size and modification time
 * are the same at two consecutive polls, once per version, and offered again whenever it
 * changes; the pause between polls (pollPause) leaves no abort listener behind.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { pollPause, StableFiles, type PollTimer } from '../../../src/core/series/folder-poll.ts';

describe('StableFiles: complete files only, each version once, never blacklisted', () => {
  it('waits while the modification time moves even when the size does not', () => {
    const f = new StableFiles();
    expect(f.poll([{ name: 'a.jsonl', size: 10, mtimeMs: 1000 }])).toEqual([]);
    // Rewritten in place to the same size: not complete as far as two polls can tell.
    expect(f.poll([{ name: 'a.jsonl', size: 10, mtimeMs: 2000 }])).toEqual([]);
    expect(f.poll([{ name: 'a.jsonl', size: 10, mtimeMs: 2000 }])).toEqual(['a.jsonl']);
    expect(f.poll([{ name: 'a.jsonl', size: 10, mtimeMs: 2000 }])).toEqual([]);
  });

  it('offers a file again once it changes after it was taken (a step still being written, a half-written JSON)', () => {
    const f = new StableFiles();
    const at = (size: number, mtimeMs: number) => [{ name: '100.jsonl', size, mtimeMs }];
    f.poll(at(26, 1));
    expect(f.poll(at(26, 1))).toEqual(['100.jsonl']);
    expect(f.poll(at(26, 1))).toEqual([]);
    // The writer goes on: the new version is taken once it is stable, then not again.
    expect(f.poll(at(52, 2))).toEqual([]);
    expect(f.poll(at(52, 2))).toEqual(['100.jsonl']);
    expect(f.poll(at(52, 2))).toEqual([]);
  });

  it('a released file (its evaluation stopped) is offered at the next poll; a file that leaves the listing needs two polls again', () => {
    const f = new StableFiles();
    const a = [{ name: 'a.json', size: 5, lastModified: 7 }];
    f.poll(a);
    expect(f.poll(a)).toEqual(['a.json']);
    f.release('a.json');
    expect(f.poll(a)).toEqual(['a.json']);
    const b = [{ name: 'b.json', size: 5, mtimeMs: 1 }];
    f.poll(b);
    f.poll([]);
    expect(f.poll(b)).toEqual([]);
    expect(f.poll(b)).toEqual(['b.json']);
  });

  it('a file marked taken before the watch began is not offered again unless it changes afterwards', () => {
    const f = new StableFiles();
    f.markTaken('old.jsonl');
    const v1 = [{ name: 'old.jsonl', size: 5, lastModified: 1 }];
    expect([f.poll(v1), f.poll(v1), f.poll(v1)]).toEqual([[], [], []]);
    const v2 = [{ name: 'old.jsonl', size: 9, lastModified: 2 }];
    expect([f.poll(v2), f.poll(v2)]).toEqual([[], ['old.jsonl']]);
  });
});

/** A timer the test fires by hand (a test double of setTimeout): no wall clock involved. */
function manualTimer(): PollTimer & { fireAll(): void; pending(): number } {
  const live = new Set<() => void>();
  return {
    start(_ms, fire) {
      live.add(fire);
      return () => live.delete(fire);
    },
    fireAll() {
      for (const fire of [...live]) {
        live.delete(fire);
        fire();
      }
    },
    pending: () => live.size,
  };
}

describe('pollPause: the pause between two polls', () => {
  it('leaves no abort listener on the signal after any number of pauses', async () => {
    const stop = new AbortController();
    const timer = manualTimer();
    for (let k = 0; k < 25; k++) {
      const pause = pollPause(1000, stop.signal, timer);
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
      timer.fireAll();
      await pause;
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    }
  });

  it('ends at once on abort, cancelling its timer; on an aborted signal it does not wait', async () => {
    const stop = new AbortController();
    const timer = manualTimer();
    const pause = pollPause(60_000, stop.signal, timer);
    expect(timer.pending()).toBe(1);
    stop.abort();
    await pause;
    expect(timer.pending()).toBe(0);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    await pollPause(60_000, stop.signal, timer);
    expect(timer.pending()).toBe(0);
  });
});
