/**
 * The app's verdict cache (src/core/run/verdict-cache.ts) in IndexedDB, store `verdicts`
 * (schema version 4): one record per key with its last use. Bounded: past `maxEntries` the
 * least recently used records are deleted (index `byUsed`). A record that is not a verdict
 * (another version's, damaged) is not trusted: it reads as a miss and is replaced by the next
 * verdict of its key. Databases are named by the sha256 the app stores them under, so the key
 * needs no hashing here. The databases' facts (FactsStore) are records of the same store under
 * keys of their own (`facts NUL ...`; a verdict's key is a JSON array), bounded with the rest.
 */
import { validFacts, validVerdict, type FactsStore, type VerdictStore } from '../../core/run/verdict-cache.ts';
import type { StoredFacts, StoredVerdict, WorkbenchIdb } from './schema.ts';

export const DEFAULT_IDB_MAX_VERDICTS = 200_000;

/** The prefix of the facts' keys (a verdict's key starts with `[`). */
const FACTS = 'facts\u0000';

export function idbVerdictStore(
  idb: WorkbenchIdb,
  options: { maxEntries?: number; now?: () => number } = {},
): VerdictStore & FactsStore & { count(): Promise<number> } {
  const maxEntries = options.maxEntries ?? DEFAULT_IDB_MAX_VERDICTS;
  // Two uses in the same millisecond keep their order.
  let last = 0;
  const now = () => (last = Math.max(last + 1, (options.now ?? Date.now)()));
  return {
    count: () => idb.count('verdicts'),
    async get(keys) {
      const tx = idb.transaction('verdicts', 'readwrite');
      const used = now();
      const out = await Promise.all(
        keys.map(async (k) => {
          const rec = await tx.store.get(k);
          if (!rec || rec.key !== k || !('verdict' in rec) || !validVerdict(rec.verdict)) return undefined;
          void tx.store.put({ ...rec, used });
          return rec.verdict;
        }),
      );
      await tx.done;
      return out;
    },
    async getFacts(key) {
      const k = FACTS + key;
      const rec = await idb.get('verdicts', k);
      if (!rec || rec.key !== k || !('facts' in rec) || !validFacts(rec.facts)) return undefined;
      await idb.put('verdicts', { ...rec, used: now() });
      return rec.facts;
    },
    async putFacts(key, facts) {
      await write([{ key: FACTS + key, facts }]);
    },
    async put(entries) {
      await write(entries.map(([key, verdict]) => ({ key, verdict })));
    },
  };

  /** Stores records, then deletes the least recently used past the bound, in one transaction. */
  async function write(records: Array<Omit<StoredVerdict, 'used'> | Omit<StoredFacts, 'used'>>): Promise<void> {
    if (records.length === 0) return;
    const tx = idb.transaction('verdicts', 'readwrite');
    const used = now();
    for (const r of records) void tx.store.put({ ...r, used });
    let over = (await tx.store.count()) - maxEntries;
    if (over > 0) {
      let cursor = await tx.store.index('byUsed').openCursor();
      while (cursor && over > 0) {
        void cursor.delete();
        over--;
        cursor = await cursor.continue();
      }
    }
    await tx.done;
  }
}
