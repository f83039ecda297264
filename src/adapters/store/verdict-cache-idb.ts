/**
 * The app's verdict cache (src/core/run/verdict-cache.ts) in IndexedDB, store `verdicts`
 * (schema version 4, unchanged): one record per key, `{ key, body, mac, used, bytes }`.
 *
 * - Authenticated: `mac` is an HMAC-SHA256 of the record's kind, key and JSON (`body`) under a
 *   non-extractable WebCrypto key generated once and kept in the same store (record
 *   `meta NUL hmac`; a CryptoKey is structured-cloneable, and a non-extractable one cannot be
 *   read back out of the browser). A record whose MAC does not check (edited, copied from
 *   another key, of an older shape, not a verdict) reads as a miss, is counted (`failedMacs`)
 *   and deleted; the next verdict of its key replaces it.
 * - Bounded in entries (200,000) and in bytes (64 MiB, counted as the length of each record's
 *   key and JSON plus ROW_OVERHEAD, kept as a running total in record `meta NUL totals`, updated
 *   in the transaction that writes or deletes): past either bound the least recently used
 *   records go first (index `byUsed`; the meta records have no last use, so they are neither
 *   counted nor deleted).
 *
 * Databases are named by the sha256 the app stores them under, so the key needs no hashing
 * here. The databases' facts (FactsStore) are records of the same store under keys of their
 * own (`facts NUL ...`; a verdict's key is a JSON array), authenticated and bounded with the rest.
 * Without WebCrypto (a page not served from a secure origin) nothing can be authenticated: every
 * lookup and write fails, which costs executions, never a run (cachingExecutor).
 */
import { validFacts, validVerdict, type FactsStore, type VerdictStore } from '../../core/run/verdict-cache.ts';
import type { IDBPTransaction } from 'idb';
import type { StoredVerdict, StoredVerdictMeta, WorkbenchDB, WorkbenchIdb } from './schema.ts';
import { WorkbenchError } from '../../core/errors.ts';

type IdbTx = IDBPTransaction<WorkbenchDB, ['verdicts'], 'readwrite'>;

const DEFAULT_IDB_MAX_VERDICTS = 200_000;
const DEFAULT_IDB_MAX_BYTES = 64 * 1024 * 1024;
/** What a record costs besides its key and JSON in the byte bound (MAC, last use, size, framing). */
export const ROW_OVERHEAD = 80;

/** The prefix of the facts' keys (a verdict's key starts with `[`). */
const FACTS = 'facts\u0000';
/** The store's own records: the HMAC key and the byte total. */
export const HMAC_KEY_RECORD = 'meta\u0000hmac';
export const TOTALS_RECORD = 'meta\u0000totals';
const MAC_CONTEXT = 'rlvr-workbench verdict cache idb 1';

type Kind = 'v' | 'f';
const kindOf = (key: string): Kind => (key.startsWith(FACTS) ? 'f' : 'v');

/** The bytes a record counts for in the bound, whatever its shape (an older one has no `bytes`). */
function bytesOf(rec: Record<string, unknown>): number {
  if (typeof rec.bytes === 'number' && Number.isFinite(rec.bytes) && rec.bytes >= 0) return rec.bytes;
  const { used: _u, mac: _m, ...rest } = rec;
  return JSON.stringify(rest).length + ROW_OVERHEAD;
}

const macInput = (kind: Kind, key: string, body: string) =>
  new TextEncoder().encode(`${MAC_CONTEXT}\u0000${kind}\u0000${key.length}\u0000${key}\u0000${body}`);

interface IdbVerdictStore extends VerdictStore, FactsStore {
  /** Verdicts and facts held (the store's own records not counted). */
  count(): Promise<number>;
  /** Their bytes as the bound counts them (the running total). */
  bytes(): Promise<number>;
  /** Records whose MAC did not check since this store was made (each read as a miss). */
  readonly failedMacs: number;
}

export function idbVerdictStore(
  idb: WorkbenchIdb,
  options: { maxEntries?: number; maxBytes?: number; now?: () => number } = {},
): IdbVerdictStore {
  const maxEntries = options.maxEntries ?? DEFAULT_IDB_MAX_VERDICTS;
  const maxBytes = options.maxBytes ?? DEFAULT_IDB_MAX_BYTES;
  // Two uses in the same millisecond keep their order.
  let last = 0;
  const now = () => (last = Math.max(last + 1, (options.now ?? Date.now)()));
  let failedMacs = 0;
  let key: Promise<CryptoKey> | null = null;
  const hmacKey = () => (key ??= loadKey(idb).catch((err: unknown) => ((key = null), Promise.reject(err))));

  /** The JSON of each record whose MAC checks; the others counted and deleted. */
  async function read(keys: readonly string[]): Promise<Array<unknown>> {
    const k = await hmacKey();
    const recs = await (async () => {
      const tx = idb.transaction('verdicts', 'readonly');
      const out = await Promise.all(keys.map((id) => tx.store.get(id)));
      await tx.done;
      return out;
    })();
    const good: Array<{ key: string; mac: ArrayBuffer }> = [];
    const bad: string[] = [];
    const values = await Promise.all(
      recs.map(async (rec, i) => {
        if (!rec) return undefined;
        const id = keys[i]!;
        const r = rec as Partial<StoredVerdict>;
        const ok =
          r.key === id &&
          typeof r.body === 'string' &&
          r.mac instanceof ArrayBuffer &&
          (await crypto.subtle.verify('HMAC', k, r.mac, macInput(kindOf(id), id, r.body)));
        if (!ok) {
          bad.push(id);
          return undefined;
        }
        try {
          const value: unknown = JSON.parse(r.body!);
          good.push({ key: id, mac: r.mac! });
          return value;
        } catch {
          bad.push(id);
          return undefined;
        }
      }),
    );
    failedMacs += bad.length;
    if (good.length > 0 || bad.length > 0) {
      const tx = idb.transaction('verdicts', 'readwrite');
      // The total first: counted from the records, when missing, before any of them changes.
      const before = await totalBytes(tx);
      const used = now();
      let removed = 0;
      for (const g of good) {
        const rec = (await tx.store.get(g.key)) as StoredVerdict | undefined;
        // Another tab may have replaced it since: only the record that was read is touched.
        if (rec && rec.mac instanceof ArrayBuffer && sameBytes(rec.mac, g.mac)) void tx.store.put({ ...rec, used });
      }
      for (const id of bad) {
        const rec = await tx.store.get(id);
        if (!rec) continue;
        removed += bytesOf(rec as unknown as Record<string, unknown>);
        void tx.store.delete(id);
      }
      if (removed > 0) await setBytes(tx, before - removed);
      await tx.done;
    }
    return values;
  }

  /** Stores records (kind, key, JSON), then deletes the least recently used past the bounds, in one transaction. */
  async function write(records: Array<[string, string]>): Promise<void> {
    if (records.length === 0) return;
    const k = await hmacKey();
    const signed = await Promise.all(
      records.map(async ([id, body]) => ({
        key: id,
        body,
        mac: await crypto.subtle.sign('HMAC', k, macInput(kindOf(id), id, body)),
        bytes: id.length + body.length + ROW_OVERHEAD,
      })),
    );
    const tx = idb.transaction('verdicts', 'readwrite');
    // The total first: counted from the records, when missing, before any of them changes.
    let total = await totalBytes(tx);
    const used = now();
    for (const r of signed) {
      const old = await tx.store.get(r.key);
      if (old) total -= bytesOf(old as unknown as Record<string, unknown>);
      void tx.store.put({ ...r, used });
      total += r.bytes;
    }
    let over = (await tx.store.index('byUsed').count()) - maxEntries;
    if (over > 0 || total > maxBytes) {
      let cursor = await tx.store.index('byUsed').openCursor();
      while (cursor && (over > 0 || total > maxBytes)) {
        total -= bytesOf(cursor.value as unknown as Record<string, unknown>);
        void cursor.delete();
        over--;
        cursor = await cursor.continue();
      }
    }
    await setBytes(tx, total);
    await tx.done;
  }

  return {
    count: () => idb.countFromIndex('verdicts', 'byUsed'),
    async bytes() {
      const tx = idb.transaction('verdicts', 'readwrite');
      const b = await totalBytes(tx);
      await tx.done;
      return b;
    },
    get failedMacs() {
      return failedMacs;
    },
    async get(keys) {
      const values = await read(keys);
      return values.map((v) => (validVerdict(v) ? v : undefined));
    },
    async getFacts(factsKey) {
      const [v] = await read([FACTS + factsKey]);
      return validFacts(v) ? v : undefined;
    },
    async putFacts(factsKey, facts) {
      await write([[FACTS + factsKey, JSON.stringify(facts)]]);
    },
    async put(entries) {
      await write(entries.map(([k, verdict]) => [k, JSON.stringify(verdict)]));
    },
  };
}

function sameBytes(a: ArrayBuffer, b: ArrayBuffer): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  return x.every((v, i) => v === y[i]);
}

/** The running byte total; counted from the records once when it is missing (a store of an older version). */
async function totalBytes(tx: IdbTx): Promise<number> {
  const rec = (await tx.store.get(TOTALS_RECORD)) as StoredVerdictMeta | undefined;
  if (rec && typeof rec.bytes === 'number' && Number.isFinite(rec.bytes) && rec.bytes >= 0) return rec.bytes;
  let sum = 0;
  let cursor = await tx.store.index('byUsed').openCursor();
  while (cursor) {
    sum += bytesOf(cursor.value as unknown as Record<string, unknown>);
    cursor = await cursor.continue();
  }
  await tx.store.put({ key: TOTALS_RECORD, bytes: sum });
  return sum;
}

async function setBytes(tx: IdbTx, bytes: number): Promise<void> {
  await tx.store.put({ key: TOTALS_RECORD, bytes: Math.max(0, bytes) });
}

/** The store's HMAC key: read, or generated (non-extractable) and kept, the first writer's kept when two tabs race. */
async function loadKey(idb: WorkbenchIdb): Promise<CryptoKey> {
  const isKey = (x: unknown): x is CryptoKey =>
    typeof CryptoKey !== 'undefined' && x instanceof CryptoKey && x.algorithm.name === 'HMAC';
  const existing = (await idb.get('verdicts', HMAC_KEY_RECORD)) as StoredVerdictMeta | undefined;
  if (isKey(existing?.hmacKey)) return existing.hmacKey;
  if (!globalThis.crypto?.subtle)
    throw new WorkbenchError('UNSUPPORTED', 'WebCrypto is not available (the page is not a secure origin)');
  const made = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  const tx = idb.transaction('verdicts', 'readwrite');
  const now = (await tx.store.get(HMAC_KEY_RECORD)) as StoredVerdictMeta | undefined;
  const kept = isKey(now?.hmacKey) ? now.hmacKey : made;
  if (kept === made) await tx.store.put({ key: HMAC_KEY_RECORD, hmacKey: made });
  await tx.done;
  return kept;
}
