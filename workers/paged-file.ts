/**
 * A database file read by pages instead of copied whole (docs/engines.md, "Databases read by
 * pages"). sql.js keeps each database file in Emscripten's in-memory file system, whose file
 * node holds its contents in one array and reads it only through `contents.subarray(a, b)`
 * (every read of SQLite's pager), writes through `contents.set(bytes, at)` and takes the
 * initial contents with `data.slice(0, n)`. A `PagedFile` stands in for that array: the
 * file system keeps it as the node's contents (its `slice` of the whole range is itself), a
 * read copies the bytes asked for out of a bounded block cache filled from the source (a file
 * in Node, a Blob in a browser worker, both read synchronously), and a write goes to a private
 * overlay of its own, so the source is never written and memory follows the cache and the
 * overlay, not the file.
 */

/** Where the bytes come from: read synchronously, never written. */
export interface PageSource {
  readonly size: number;
  /** Fills `into` with the bytes at `position` (within `size`). Throws when they cannot be read. */
  read(into: Uint8Array, position: number): void;
  /** Why the bytes can no longer be trusted (the file changed while it was read), or null. */
  problem(): string | null;
  close(): void;
}

/** The unit of the cache and of the overlay: 64 KiB (16 SQLite pages of 4 KiB). */
export const BLOCK_BYTES = 64 * 1024;

/** Blocks of one source shared by every view of it, least recently used first out. */
export class BlockCache {
  readonly #blocks = new Map<number, Uint8Array>();
  readonly #capacity: number;
  /** Byte ranges patched over the source for every view (the WAL flag of a copy held in memory). */
  readonly #patches: [number, Uint8Array][] = [];
  #failure: string | null = null;
  /** The most recently used block (already at the LRU's end). */
  #last = -1;
  readsFromSource = 0;

  constructor(
    readonly source: PageSource,
    capacityBytes: number,
  ) {
    this.#capacity = Math.max(1, Math.floor(capacityBytes / BLOCK_BYTES));
  }

  get size(): number {
    return this.source.size;
  }

  /** The bytes the cache may hold. */
  get capacityBytes(): number {
    return this.#capacity * BLOCK_BYTES;
  }

  /** Why reads failed or what they found changed: reads then give zeros, which SQLite reports as damage. */
  get failure(): string | null {
    return this.#failure ?? this.source.problem();
  }

  patch(at: number, bytes: Uint8Array): void {
    this.#patches.push([at, bytes.slice()]);
    for (const n of this.#blocks.keys())
      if (n * BLOCK_BYTES < at + bytes.length && at < (n + 1) * BLOCK_BYTES) this.#blocks.delete(n);
  }

  block(n: number): Uint8Array {
    const hit = this.#blocks.get(n);
    if (hit) {
      if (n !== this.#last) {
        this.#blocks.delete(n);
        this.#blocks.set(n, hit);
        this.#last = n;
      }
      return hit;
    }
    this.#last = n;
    const start = n * BLOCK_BYTES;
    const out = new Uint8Array(Math.max(0, Math.min(BLOCK_BYTES, this.size - start)));
    if (this.#failure === null && out.length > 0) {
      try {
        this.source.read(out, start);
        this.readsFromSource += 1;
      } catch (err) {
        this.#failure = err instanceof Error ? err.message : String(err);
        out.fill(0);
      }
    }
    if (this.source.problem() !== null) out.fill(0);
    for (const [at, bytes] of this.#patches) {
      const from = Math.max(at, start);
      const to = Math.min(at + bytes.length, start + out.length);
      if (from < to) out.set(bytes.subarray(from - at, to - at), from - start);
    }
    this.#blocks.set(n, out);
    for (const k of this.#blocks.keys()) {
      if (this.#blocks.size <= this.#capacity) break;
      this.#blocks.delete(k);
    }
    return out;
  }

  /** Bytes held now (cache blocks). */
  heldBytes(): number {
    let n = 0;
    for (const b of this.#blocks.values()) n += b.length;
    return n;
  }

  close(): void {
    this.#blocks.clear();
    this.source.close();
  }
}

/**
 * One view of a source as the in-memory file system's file contents. A private view (a
 * connection that may write) keeps its writes in its overlay; the shared one never gets any
 * (its connection is re-opened on a private view before a text that may write).
 */
export class PagedFile {
  readonly #cache: BlockCache;
  /** Written blocks of this view, whole (a block is copied from the cache on its first write). */
  readonly #overlay = new Map<number, Uint8Array>();
  #handedOver = false;

  constructor(cache: BlockCache) {
    this.#cache = cache;
  }

  /**
   * The file system's capacity check: the file's size until the file system has taken this
   * object as the file's contents, then unbounded, so a write past the end goes to the overlay
   * instead of making the file system copy everything into an array of its own.
   */
  get length(): number {
    return this.#handedOver ? Number.MAX_SAFE_INTEGER : this.#cache.size;
  }

  /** The initial write of the file keeps `slice(0, n)` as its contents: this object itself. */
  slice(start = 0, end = this.#cache.size): PagedFile | Uint8Array {
    if (start === 0 && end === this.#cache.size && !this.#handedOver) {
      this.#handedOver = true;
      return this;
    }
    return this.subarray(start, end);
  }

  /** A copy of the bytes [start, end): what the file system reads. Past the source's end: zeros or the overlay. */
  subarray(start: number, end: number): Uint8Array {
    // Within one block (every page SQLite reads): a view of the block, which the file system
    // only copies from, as it would from its own array.
    const n = Math.floor(start / BLOCK_BYTES);
    if (end > start && Math.floor((end - 1) / BLOCK_BYTES) === n) {
      const block = this.#overlay.get(n) ?? (n * BLOCK_BYTES < this.#cache.size ? this.#cache.block(n) : null);
      const from = start - n * BLOCK_BYTES;
      if (block && end - n * BLOCK_BYTES <= block.length) return block.subarray(from, end - n * BLOCK_BYTES);
    }
    const out = new Uint8Array(Math.max(0, end - start));
    let at = start;
    while (at < end) {
      const n = Math.floor(at / BLOCK_BYTES);
      const blockStart = n * BLOCK_BYTES;
      const upto = Math.min(end, blockStart + BLOCK_BYTES);
      const block = this.#overlay.get(n) ?? (blockStart < this.#cache.size ? this.#cache.block(n) : null);
      if (block) {
        const from = at - blockStart;
        const to = Math.min(upto - blockStart, block.length);
        if (to > from) out.set(block.subarray(from, to), at - start);
      }
      at = upto;
    }
    return out;
  }

  /** A write of the file system: into this view's overlay only. */
  set(bytes: ArrayLike<number>, at = 0): void {
    const src = bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes);
    let done = 0;
    while (done < src.length) {
      const pos = at + done;
      const n = Math.floor(pos / BLOCK_BYTES);
      const blockStart = n * BLOCK_BYTES;
      let block = this.#overlay.get(n);
      if (!block) {
        block = new Uint8Array(BLOCK_BYTES);
        if (blockStart < this.#cache.size) block.set(this.#cache.block(n));
        this.#overlay.set(n, block);
      }
      const take = Math.min(src.length - done, BLOCK_BYTES - (pos - blockStart));
      block.set(src.subarray(done, done + take), pos - blockStart);
      done += take;
    }
  }

  /** Bytes this view holds of its own (its overlay). */
  overlayBytes(): number {
    return this.#overlay.size * BLOCK_BYTES;
  }
}
