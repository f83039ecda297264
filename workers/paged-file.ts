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

/**
 * The unit of the cache and of the overlay: 4 KiB, SQLite's default page (BIRD's databases use
 * it). A query that looks rows up by key reads pages all over a file; with 64 KiB blocks each
 * such read brought 16 pages for one (BIRD dev's codebase_community golds: 260 s against 161 s).
 */
export const BLOCK_BYTES = 4 * 1024;

/** Blocks read at once when a read follows the previous one (a scan): 64 KiB. */
const READ_AHEAD_BLOCKS = 16;

/** How often (in reads from the source) a read asks whether the source changed. */
const PROBLEM_CHECK_READS = 64;

/**
 * Blocks of one source shared by every view of it, in slots of one array allocated with the
 * cache (as many as its capacity holds, or as the file has blocks if fewer), so that reading
 * allocates nothing. Which block a slot holds is kept in typed arrays, and a full cache lets go
 * of a block by the clock (second chance) rule: a hit only marks its slot used, where keeping
 * blocks in least-recently-used order cost a map update on every page SQLite read (a scan of a
 * 570 MiB database reads about a million). A miss right after the previous miss's block (a scan)
 * reads the next blocks with it, READ_AHEAD_BLOCKS in one read from the source. A block handed
 * out is a view of its slot, valid until the next block is read: every caller copies from it at
 * once (PagedFile).
 */
export class BlockCache {
  readonly #capacity: number;
  readonly #slab: Uint8Array;
  /** Block number -> its slot + 1 (0: not held). */
  readonly #slotOf: Int32Array;
  /** Slot -> the block it holds (-1: none), and its view of the slab. */
  readonly #blockIn: Int32Array;
  readonly #views: Array<Uint8Array | null>;
  /** Slot -> used since the clock hand last passed it. */
  readonly #used: Uint8Array;
  #hand = 0;
  #held = 0;
  /** Byte ranges patched over the source for every view (the WAL flag of a copy held in memory). */
  readonly #patches: [number, Uint8Array][] = [];
  #failure: string | null = null;
  /** The source said it changed: every block read since is zeros. */
  #changed = false;
  /** The last block read from the source (with those read ahead of it). */
  #lastMiss = -2;
  /** Where a read ahead lands before its blocks take their slots. */
  #ahead: Uint8Array | null = null;
  readsFromSource = 0;

  constructor(
    readonly source: PageSource,
    capacityBytes: number,
  ) {
    this.#capacity = Math.max(1, Math.floor(capacityBytes / BLOCK_BYTES));
    const blocks = Math.ceil(source.size / BLOCK_BYTES);
    const slots = Math.max(1, Math.min(this.#capacity, blocks));
    this.#slab = new Uint8Array(slots * BLOCK_BYTES);
    this.#slotOf = new Int32Array(blocks);
    this.#blockIn = new Int32Array(slots).fill(-1);
    this.#views = new Array<Uint8Array | null>(slots).fill(null);
    this.#used = new Uint8Array(slots);
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
    for (let slot = 0; slot < this.#blockIn.length; slot++) {
      const n = this.#blockIn[slot]!;
      if (n >= 0 && n * BLOCK_BYTES < at + bytes.length && at < (n + 1) * BLOCK_BYTES) this.#letGo(slot);
    }
  }

  /** Block `n` (within the source's size). */
  block(n: number): Uint8Array {
    const held = this.#slotOf[n]!;
    if (held !== 0) {
      this.#used[held - 1] = 1;
      return this.#views[held - 1]!;
    }
    const ahead =
      n === this.#lastMiss + 1
        ? Math.min(READ_AHEAD_BLOCKS, this.#slotOf.length - n, Math.floor(this.#blockIn.length / 2))
        : 1;
    let bytes: Uint8Array | null = null;
    if (ahead > 1) {
      const start = n * BLOCK_BYTES;
      this.#ahead ??= new Uint8Array(READ_AHEAD_BLOCKS * BLOCK_BYTES);
      bytes = this.#ahead.subarray(0, Math.min(ahead * BLOCK_BYTES, this.size - start));
      if (!this.#read(bytes, start)) bytes = null;
    }
    // The blocks read ahead first, so that taking their slots never lets go of block n.
    for (let k = bytes === null ? 0 : ahead - 1; k >= 0; k--)
      if (this.#slotOf[n + k] === 0)
        this.#install(n + k, bytes === null ? null : bytes.subarray(k * BLOCK_BYTES, (k + 1) * BLOCK_BYTES));
    this.#lastMiss = n + (bytes === null ? 0 : ahead - 1);
    return this.#views[this.#slotOf[n]! - 1]!;
  }

  /** Reads `into` from the source at `start`; false (and zeros) once a read failed. */
  #read(into: Uint8Array, start: number): boolean {
    if (this.#failure !== null) {
      into.fill(0);
      return false;
    }
    try {
      this.source.read(into, start);
    } catch (err) {
      this.#failure = err instanceof Error ? err.message : String(err);
      into.fill(0);
      return false;
    }
    // Whether the file changed is asked of the source every PROBLEM_CHECK_READS reads (an fstat
    // each: a query on a large file reads from it hundreds of thousands of times); the engine asks
    // again after every execution (`failure`), so a result read across a change never stands.
    if (this.readsFromSource++ % PROBLEM_CHECK_READS === 0 && this.source.problem() !== null) this.#changed = true;
    if (this.#changed) into.fill(0);
    return true;
  }

  /** Block `n` into a slot, from `read` (bytes of the source read ahead) or read now. */
  #install(n: number, read: Uint8Array | null): void {
    const start = n * BLOCK_BYTES;
    const slot = this.#freeSlot();
    const at = slot * BLOCK_BYTES;
    const out = this.#slab.subarray(at, at + Math.max(0, Math.min(BLOCK_BYTES, this.size - start)));
    if (read !== null) out.set(read.subarray(0, out.length));
    else if (out.length > 0) this.#read(out, start);
    for (const [p, bytes] of this.#patches) {
      const from = Math.max(p, start);
      const to = Math.min(p + bytes.length, start + out.length);
      if (from < to) out.set(bytes.subarray(from - p, to - p), from - start);
    }
    this.#slotOf[n] = slot + 1;
    this.#blockIn[slot] = n;
    this.#views[slot] = out;
    this.#used[slot] = 1;
    this.#held += out.length;
  }

  /** A slot to fill: a free one, else the first the clock hand finds unused since it last passed. */
  #freeSlot(): number {
    for (;;) {
      const slot = this.#hand;
      this.#hand = (slot + 1) % this.#blockIn.length;
      if (this.#blockIn[slot] === -1) return slot;
      if (this.#used[slot] === 0) {
        this.#letGo(slot);
        return slot;
      }
      this.#used[slot] = 0;
    }
  }

  #letGo(slot: number): void {
    const n = this.#blockIn[slot]!;
    if (n < 0) return;
    this.#slotOf[n] = 0;
    this.#blockIn[slot] = -1;
    this.#held -= this.#views[slot]!.length;
    this.#views[slot] = null;
    this.#used[slot] = 0;
  }

  /** Bytes held now (cache blocks). */
  heldBytes(): number {
    return this.#held;
  }

  close(): void {
    for (let slot = 0; slot < this.#blockIn.length; slot++) this.#letGo(slot);
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
