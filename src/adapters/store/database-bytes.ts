/**
 * Database bytes in IndexedDB: Blob chunks keyed [sha256, n] (see CHUNK_BYTES in schema.ts for
 * why), read back as ONE Uint8Array, and locks that keep two tabs from writing the same file.
 */
import { chunkRange, type DatabaseRecord, type WorkbenchIdb } from './schema.ts';
import { WorkbenchError } from '../../core/errors.ts';

/** Above this, a single Blob read may hit the browser's 2 GB ArrayBuffer limit for blob reads. */
const SINGLE_READ_LIMIT = 1024 * 1024 * 1024;

/**
 * The bytes of a stored database in one Uint8Array. The browser fills the buffer from its blob
 * files off the main thread; no second full copy exists in JavaScript. Throws if chunks are
 * missing (a damaged store), naming the database.
 */
export async function readDatabaseBytes(idb: WorkbenchIdb, record: DatabaseRecord): Promise<Uint8Array> {
  const chunks = await checkedChunks(idb, record);
  const total = record.sizeBytes;
  if (total <= SINGLE_READ_LIMIT) return new Uint8Array(await new Blob(chunks).arrayBuffer());
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(new Uint8Array(await c.arrayBuffer()), at);
    at += c.size;
  }
  return out;
}

/**
 * A stored database as one Blob over its chunks, for a worker that reads it by pages: nothing
 * is read here (the browser keeps the chunks on disk). Throws as readDatabaseBytes does when
 * chunks are missing.
 */
export async function readDatabaseBlob(idb: WorkbenchIdb, record: DatabaseRecord): Promise<Blob> {
  return new Blob(await checkedChunks(idb, record));
}

async function checkedChunks(idb: WorkbenchIdb, record: DatabaseRecord): Promise<Blob[]> {
  const chunks = await idb.getAll('chunks', chunkRange(record.sha256));
  const total = chunks.reduce((n, c) => n + c.size, 0);
  if (chunks.length !== record.chunkCount || total !== record.sizeBytes) {
    throw new WorkbenchError(
      'BAD_DATABASE',
      `database ${record.dbId} (sha256 ${record.sha256.slice(0, 12)}…) is damaged in browser storage ` +
        `(${chunks.length}/${record.chunkCount} chunks, ${total}/${record.sizeBytes} bytes): delete the dataset and import it again`,
    );
  }
  return chunks;
}

/** Name of the lock held while a database's chunks are written and not yet recorded. */
export function dbWriteLock(sha256: string): string {
  return `db-write:${sha256}`;
}

/**
 * Holds a Web Lock until `release()` is called. Resolves null when `ifAvailable` and another
 * tab or worker holds it. Without the Web Locks API (old browsers) every lock is granted.
 */
export function holdLock(name: string, ifAvailable: boolean): Promise<(() => void) | null> {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (!locks) return Promise.resolve(() => {});
  return new Promise((resolve, reject) => {
    locks
      .request(name, { ifAvailable }, (lock) => {
        if (!lock) {
          resolve(null);
          return undefined;
        }
        return new Promise<void>((release) => resolve(() => release()));
      })
      .catch(reject);
  });
}

/**
 * Deletes chunks that belong to no database record and are not being written (an import that
 * died with its tab). Runs in the background when the store opens.
 */
export async function deleteOrphanChunks(idb: WorkbenchIdb): Promise<number> {
  const orphans: string[] = [];
  const recorded = new Set(await idb.getAllKeys('databases'));
  let cursor = await idb.transaction('chunks').store.openKeyCursor();
  while (cursor) {
    const sha = cursor.key[0];
    if (!recorded.has(sha)) orphans.push(sha);
    cursor = await cursor.continue([sha, Infinity]);
  }
  let deleted = 0;
  for (const sha of orphans) {
    const release = await holdLock(dbWriteLock(sha), true);
    if (!release) continue;
    try {
      const tx = idb.transaction(['databases', 'chunks'], 'readwrite');
      if (!(await tx.objectStore('databases').get(sha))) {
        await tx.objectStore('chunks').delete(chunkRange(sha));
        deleted++;
      }
      await tx.done;
    } finally {
      release();
    }
  }
  return deleted;
}
