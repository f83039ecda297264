/**
 * Which files of a watched folder are ready to be read, for the CLI's `series --watch` and the
 * app's folder watch alike. A file is ready once it is complete as far as a poll can tell: the
 * same size (above 0) and the same modification time at two consecutive polls. A file is read
 * once per version (size and modification time): one that could not be read, or whose
 * evaluation was refused, is offered again when it changes (never blacklisted), and one read
 * before is offered again when it changes afterwards (the caller says so and re-reads it).
 */
import { onAbort } from '../engine/abort.ts';
import type { AbortSignalLike } from '../eval/executor.ts';

interface PolledFile {
  name: string;
  size: number;
  /** Modification time in ms (Node's `mtimeMs`); the app's listing gives `lastModified`. */
  mtimeMs?: number;
  lastModified?: number;
}

/** A version of a file: its size and modification time. */
const versionOf = (f: PolledFile): string => `${f.size}:${f.mtimeMs ?? f.lastModified ?? ''}`;
/** Marked read before this watch began, at whatever version it has when first listed. */
const ADOPT = '\u0000adopt';

export class StableFiles {
  /** Each listed file's version at the last poll. */
  private readonly seen = new Map<string, string>();
  /** The version at which each file was last offered (read, refused or failed). */
  private readonly read = new Map<string, string>();

  /** A file read before this watch began (the app's stored list): not offered again unless it changes afterwards. */
  markTaken(name: string): void {
    this.read.set(name, ADOPT);
  }

  /** Whether the file was offered at some version. */
  has(name: string): boolean {
    return this.read.has(name);
  }

  /** The file was not read after all (its evaluation was stopped): offered again at the next poll where it is stable. */
  release(name: string): void {
    this.read.delete(name);
  }

  /**
   * The files of this poll's listing that are ready and not yet offered at their version, in
   * listing order; each is marked offered at that version. Files no longer listed are forgotten
   * as seen (a file that comes back needs two polls again).
   */
  poll(listing: ReadonlyArray<PolledFile>): string[] {
    const ready: string[] = [];
    const listed = new Set<string>();
    for (const f of listing) {
      const version = versionOf(f);
      listed.add(f.name);
      const before = this.seen.get(f.name);
      this.seen.set(f.name, version);
      const read = this.read.get(f.name);
      if (read === ADOPT) {
        this.read.set(f.name, version);
        continue;
      }
      if (read === version || f.size <= 0 || before !== version) continue;
      this.read.set(f.name, version);
      ready.push(f.name);
    }
    for (const name of [...this.seen.keys()]) if (!listed.has(name)) this.seen.delete(name);
    return ready;
  }
}

/** A timer as the callers' platform has it: starts one, returns how to cancel it. */
export interface PollTimer {
  start(ms: number, fire: () => void): () => void;
}

/**
 * The pause between two polls: `ms`, or less when `signal` aborts. Whichever ends it, the other
 * is removed, so a watch of any length holds no listener on its signal per poll.
 */
export function pollPause(ms: number, signal: AbortSignalLike | undefined, timer: PollTimer): Promise<void> {
  return new Promise<void>((resolve) => {
    let cancelTimer = () => undefined as void;
    const dispose = onAbort(signal, () => {
      cancelTimer();
      resolve();
    });
    if (signal?.aborted) return;
    cancelTimer = timer.start(ms, () => {
      dispose();
      resolve();
    });
  });
}
