/**
 * Which files of a watched folder are ready to be read: a file is taken once its size is the
 * same (and above 0) at two consecutive polls, so a file still being written is not read; each
 * file is taken once. The CLI's `series --watch` and the app's folder watch poll with it.
 */
export class StableFiles {
  private readonly sizes = new Map<string, number>();
  private readonly taken = new Set<string>();

  /** Files already in the series (or refused): never taken again. */
  markTaken(name: string): void {
    this.taken.add(name);
  }

  has(name: string): boolean {
    return this.taken.has(name);
  }

  /** The files of this poll's listing that are ready, in listing order; they are marked taken. */
  poll(listing: ReadonlyArray<{ name: string; size: number }>): string[] {
    const ready: string[] = [];
    for (const { name, size } of listing) {
      if (this.taken.has(name)) continue;
      if (size > 0 && this.sizes.get(name) === size) {
        this.taken.add(name);
        ready.push(name);
      } else this.sizes.set(name, size);
    }
    return ready;
  }
}
