import { deleteDB, openDB } from 'idb';
import { afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION, openWorkbenchDb } from '../../src/adapters/store/schema.ts';
import { allSamples } from '../../src/adapters/store/sample-blocks.ts';

const name = `wb-schema-${crypto.randomUUID()}`;
afterEach(() => deleteDB(name));

describe('IndexedDB schema upgrades keep the user\'s records', () => {
  it('version 1 samples (one record per sample) are migrated to version 2 blocks, each run apart', async () => {
    const v1 = await openDB(name, 1, {
      upgrade(db) {
        for (const s of ['datasets', 'databases', 'runs']) db.createObjectStore(s, { keyPath: s === 'databases' ? 'sha256' : 'id' });
        db.createObjectStore('chunks');
        db.createObjectStore('runInputs', { keyPath: 'runId' });
        db.createObjectStore('samples', { keyPath: ['runId', 'index', 'sample'] }).createIndex('byRun', 'runId');
      },
    });
    for (const [runId, index] of [['a', 1], ['a', 0], ['b', 0]] as const) await v1.put('samples', { runId, index, sample: 0, ex: 1 });
    v1.close();

    const db = await openWorkbenchDb(name);
    expect(db.version).toBe(SCHEMA_VERSION);
    expect([...db.objectStoreNames]).not.toContain('samples');
    expect((await allSamples(db, 'a')).map((s) => [s.index, (s as { runId?: string }).runId])).toEqual([[0, undefined], [1, undefined]]);
    expect(await allSamples(db, 'b')).toHaveLength(1);
    db.close();
  });

  it('version 3 (before overlays and version checks) gains the two stores and keeps its runs, samples and suites', async () => {
    const v1 = await openDB(name, 1, {
      upgrade(db) {
        for (const s of ['datasets', 'databases', 'runs']) db.createObjectStore(s, { keyPath: s === 'databases' ? 'sha256' : 'id' });
        db.createObjectStore('chunks');
        db.createObjectStore('runInputs', { keyPath: 'runId' });
        db.createObjectStore('samples', { keyPath: ['runId', 'index', 'sample'] }).createIndex('byRun', 'runId');
      },
    });
    v1.close();
    // Up to version 3 with the product's own steps, then records stored as a version-3 user had them.
    const v3 = await openDB(name, 3, {
      upgrade(db, oldVersion, _n, tx) {
        if (oldVersion < 2) {
          db.createObjectStore('sampleBlocks', { keyPath: ['runId', 'block'] });
          db.createObjectStore('sampleMeta', { keyPath: 'runId' });
          db.deleteObjectStore('samples');
        }
        if (oldVersion < 3) db.createObjectStore('suites', { keyPath: 'key' });
        void tx;
      },
    });
    await v3.put('runs', { id: 'r1', name: 'kept' });
    await v3.put('sampleBlocks', { runId: 'r1', block: 0, samples: [{ index: 0, sample: 0, ex: 1 }] });
    await v3.put('suites', { key: 'k', suite: {}, createdAt: 'then' });
    v3.close();

    const db = await openWorkbenchDb(name);
    expect(db.version).toBe(4);
    expect([...db.objectStoreNames]).toEqual(expect.arrayContaining(['overlays', 'versionChecks', 'runs', 'sampleBlocks', 'suites']));
    expect(await db.get('runs', 'r1')).toMatchObject({ name: 'kept' });
    expect(await allSamples(db, 'r1')).toHaveLength(1);
    expect(await db.get('suites', 'k')).toMatchObject({ createdAt: 'then' });
    expect(await db.count('overlays')).toBe(0);
    db.close();
  });
});
