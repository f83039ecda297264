/**
 * Where database bytes come from, and what a load gives: the one port that both the app's ports
 * (ports.ts) and the store's ports (store-ports.ts) name, kept apart so neither imports the other.
 */
import type { DbFileRef } from '../core/types.ts';

/**
 * A database's bytes as loaded, and their identity: the sha256 of exactly these bytes (hashed as
 * they were read, or the content address they were read by), or null when it is not known. The
 * verdict cache stores what a worker computed on them under this sha256 (ItemResult.dbSha256).
 */
export interface LoadedDb {
  bytes: Uint8Array;
  sha256: string | null;
}

/** A database as a reference a worker reads by pages, and its identity. */
export interface PagedDb {
  ref: DbFileRef;
  sha256: string | null;
}

/** Where database bytes come from: files on disk (CLI), IndexedDB (browser), the demo. */
export interface DbSource {
  has(dbId: string): Promise<boolean>;
  /**
   * Why what stands where the database should be cannot be read as one (a directory, a FIFO, a
   * device, a dangling link...), or null. Its items are not scored (`missing-db`, with this
   * reason), like those of a database that is not there.
   */
  unusable?(dbId: string): Promise<string | null>;
  /** A fresh copy each call: the bytes are transferred to a worker. */
  load(dbId: string): Promise<LoadedDb>;
  /**
   * The database as a file or Blob a worker reads by pages (workers/paged-file.ts), checked as
   * `load` checks its bytes, with its sha256 (hashed once per file and modification, never a
   * whole copy in memory). Absent where a source has only bytes (the demo, tests).
   */
  openPaged?(dbId: string): Promise<PagedDb>;
  /** Where the database was expected, for the missing-db message. */
  describe(dbId: string): string;
}
