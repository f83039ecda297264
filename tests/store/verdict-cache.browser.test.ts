import { deleteDB, openDB } from 'idb';
import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbenchDb } from '../../src/adapters/store/schema.ts';
import {
  HMAC_KEY_RECORD,
  ROW_OVERHEAD,
  TOTALS_RECORD,
  idbVerdictStore,
} from '../../src/adapters/store/verdict-cache-idb.ts';
import type { CachedVerdict } from '../../src/core/run/verdict-cache.ts';

const name = `wb-verdicts-${crypto.randomUUID()}`;
afterEach(() => deleteDB(name));

const v = (ex: 0 | 1, rows: number): CachedVerdict => ({
  status: 'ok',
  ex,
  softF1: ex,
  error: null,
  predRowCount: rows,
  goldRowCount: rows,
  elapsedMs: 1.5,
  resultKey: `k${rows}`,
});

describe('the verdict cache in IndexedDB (schema version 4)', () => {
  it('a version 3 database gains the verdicts store and keeps its suites; verdicts come back as stored', async () => {
    const v3 = await openDB(name, 3, {
      upgrade(db) {
        db.createObjectStore('suites', { keyPath: 'key' });
      },
    });
    await v3.put('suites', { key: 's', suite: null, createdAt: 'then' });
    v3.close();
    const db = await openWorkbenchDb(name);
    expect([...db.objectStoreNames]).toContain('verdicts');
    expect(await db.get('suites', 's')).toEqual({ key: 's', suite: null, createdAt: 'then' });
    const store = idbVerdictStore(db);
    await store.put([
      ['a', v(1, 3)],
      ['b', v(0, 2)],
    ]);
    expect(await store.get(['b', 'x', 'a'])).toEqual([v(0, 2), undefined, v(1, 3)]);
    db.close();
  });

  it('is bounded: the least recently used go first; a record that is not a verdict reads as a miss', async () => {
    const db = await openWorkbenchDb(name);
    let t = 1000;
    const store = idbVerdictStore(db, { maxEntries: 3, now: () => t++ });
    await store.put([
      ['a', v(1, 1)],
      ['b', v(1, 2)],
      ['c', v(1, 3)],
    ]);
    await store.get(['a']); // a is now the most recently used
    await store.put([['d', v(0, 4)]]);
    expect(await store.count()).toBe(3);
    expect(await store.get(['a', 'b', 'c', 'd'])).toEqual([v(1, 1), undefined, v(1, 3), v(0, 4)]);
    await db.put('verdicts', { key: 'e', verdict: { status: 'ok', ex: 7 }, used: 1 } as never);
    expect(await store.get(['e'])).toEqual([undefined]);
    db.close();
  });

  it("keeps the databases' facts beside the verdicts, under keys of their own; facts that are not valid read as a miss", async () => {
    const db = await openWorkbenchDb(name);
    const store = idbVerdictStore(db);
    const facts = { sqliteVersion: '3.54.1', columnTypes: { t: { a: 'INTEGER', b: 'REAL' } } };
    await store.putFacts('sql.js 1.17.0\u0000' + 'a'.repeat(64), facts);
    await store.put([['["x"]', v(1, 1)]]);
    expect(await store.getFacts('sql.js 1.17.0\u0000' + 'a'.repeat(64))).toEqual(facts);
    expect(await store.getFacts('sql.js 1.17.0\u0000' + 'b'.repeat(64))).toBeUndefined();
    // Neither kind is read as the other.
    expect(await store.get(['facts\u0000sql.js 1.17.0\u0000' + 'a'.repeat(64)])).toEqual([undefined]);
    expect(await store.getFacts('["x"]')).toBeUndefined();
    await db.put('verdicts', { key: 'facts\u0000bad', facts: { sqliteVersion: 3 }, used: 1 } as never);
    expect(await store.count()).toBe(3);
    expect(await store.getFacts('bad')).toBeUndefined();
    // The record that did not check was deleted.
    expect(await store.count()).toBe(2);
    db.close();
  });

  it("authenticated: a record whose verdict was edited in IndexedDB, or given another key's body and MAC, reads as a miss, is counted and deleted; the HMAC key is a non-extractable CryptoKey kept in the store", async () => {
    const db = await openWorkbenchDb(name);
    const store = idbVerdictStore(db);
    await store.put([
      ['a', v(1, 3)],
      ['b', v(1, 4)],
    ]);
    const meta = (await db.get('verdicts', HMAC_KEY_RECORD)) as { hmacKey: CryptoKey };
    expect(meta.hmacKey).toBeInstanceOf(CryptoKey);
    expect(meta.hmacKey.extractable).toBe(false);
    const a = (await db.get('verdicts', 'a')) as { body: string; mac: ArrayBuffer; used: number; bytes: number };
    expect(JSON.parse(a.body)).toEqual(v(1, 3));
    // The attack: EX flipped in place; b given a's body and its (valid, for a) MAC.
    await db.put('verdicts', { ...a, key: 'a', body: a.body.replace('"ex":1', '"ex":0') });
    await db.put('verdicts', { ...a, key: 'b' });
    // A store made later (another session) uses the same key, and sees both as misses.
    const later = idbVerdictStore(db);
    expect(await later.get(['a', 'b'])).toEqual([undefined, undefined]);
    expect(later.failedMacs).toBe(2);
    expect(await later.count()).toBe(0);
    expect(await later.bytes()).toBe(0);
    await later.put([['a', v(1, 3)]]);
    expect(await idbVerdictStore(db).get(['a'])).toEqual([v(1, 3)]);
    db.close();
  });

  it('bounded in bytes (key and JSON plus a fixed cost a record, a running total): long verdicts push out the least recently used', async () => {
    const db = await openWorkbenchDb(name);
    let t = 1000;
    const long = (c: string): CachedVerdict => ({
      ...v(0, 0),
      status: 'error',
      softF1: 0,
      error: `prediction: ${c.repeat(1000)}`,
    });
    const size = 1 + JSON.stringify(long('x')).length + ROW_OVERHEAD;
    const store = idbVerdictStore(db, { maxBytes: 3 * size, now: () => t++ });
    for (const k of ['a', 'b', 'c', 'd']) await store.put([[k, long(k)]]);
    expect(await store.bytes()).toBe(3 * size);
    await store.get(['b']);
    await store.put([['e', long('e')]]);
    expect(await store.count()).toBe(3);
    expect(await store.bytes()).toBe(3 * size);
    expect(await store.get(['a', 'b', 'c', 'd', 'e'])).toEqual([undefined, long('b'), undefined, long('d'), long('e')]);
    // Replacing a record counts its new size, not both.
    await store.put([['e', long('e')]]);
    expect(await store.bytes()).toBe(3 * size);
    expect((await db.get('verdicts', TOTALS_RECORD)) as { bytes: number }).toMatchObject({ bytes: 3 * size });
    db.close();
  });
});
