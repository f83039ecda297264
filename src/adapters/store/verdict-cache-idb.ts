/**
 * The app's verdict cache (src/core/run/verdict-cache.ts) in IndexedDB, store `verdicts`
 * (schema version 4): one record per key with its last use. Bounded: past `maxEntries` the
 * least recently used records are deleted (index `byUsed`). A record that is not a verdict
 * (another version's, damaged) is not trusted: it reads as a miss and is replaced by the next
 * verdict of its key. Databases are named by the sha256 the app stores them under, so the key
 * needs no hashing here.
 */
import { validVerdict, type VerdictStore } from '../../core/run/verdict-cache.ts';
import type { WorkbenchIdb } from './schema.ts';

export const DEFAULT_IDB_MAX_VERDICTS = 200_000;

export function idbVerdictStore(
  idb: WorkbenchIdb,
  options: { maxEntries?: number; now?: () => number } = {},
): VerdictStore & { count(): Promise<number> } {
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
          if (!rec || rec.key !== k || !validVerdict(rec.verdict)) return undefined;
          void tx.store.put({ ...rec, used });
          return rec.verdict;
        }),
      );
      await tx.done;
      return out;
    },
    async put(entries) {
      if (entries.length === 0) return;
      const tx = idb.transaction('verdicts', 'readwrite');
      const used = now();
      for (const [key, verdict] of entries) void tx.store.put({ key, verdict, used });
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
    },
  };
}
