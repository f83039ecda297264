import { deleteDB, openDB } from 'idb';
import { afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION, openWorkbenchDb } from '../../src/adapters/store/schema.ts';
import { allSamples } from '../../src/adapters/store/sample-blocks.ts';

const name = `wb-schema-${crypto.randomUUID()}`;
afterEach(() => deleteDB(name));

describe("IndexedDB schema upgrades keep the user's records", () => {
  it('version 1 samples (one record per sample) are migrated to version 2 blocks, each run apart', async () => {
    const v1 = await openDB(name, 1, {
      upgrade(db) {
        for (const s of ['datasets', 'databases', 'runs'])
          db.createObjectStore(s, { keyPath: s === 'databases' ? 'sha256' : 'id' });
        db.createObjectStore('chunks');
        db.createObjectStore('runInputs', { keyPath: 'runId' });
        db.createObjectStore('samples', { keyPath: ['runId', 'index', 'sample'] }).createIndex('byRun', 'runId');
      },
    });
    for (const [runId, index] of [
      ['a', 1],
      ['a', 0],
      ['b', 0],
    ] as const)
      await v1.put('samples', { runId, index, sample: 0, ex: 1 });
    v1.close();

    const db = await openWorkbenchDb(name);
    expect(db.version).toBe(SCHEMA_VERSION);
    expect([...db.objectStoreNames]).not.toContain('samples');
    expect((await allSamples(db, 'a')).map((s) => [s.index, (s as { runId?: string }).runId])).toEqual([
      [0, undefined],
      [1, undefined],
    ]);
    expect(await allSamples(db, 'b')).toHaveLength(1);
    db.close();
  });
});
