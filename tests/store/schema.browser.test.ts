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

describe('version 6 (training runs) only adds stores', () => {
  it('upgrades a version-4 database with data: every record kept, the series stores empty and usable', async () => {
    const v4 = await openDB(name, 4, {
      upgrade(db) {
        db.createObjectStore('datasets', { keyPath: 'id' });
        db.createObjectStore('databases', { keyPath: 'sha256' });
        db.createObjectStore('chunks');
        db.createObjectStore('runs', { keyPath: 'id' });
        db.createObjectStore('runInputs', { keyPath: 'runId' });
        db.createObjectStore('sampleBlocks', { keyPath: ['runId', 'block'] });
        db.createObjectStore('sampleMeta', { keyPath: 'runId' });
        db.createObjectStore('suites', { keyPath: 'key' });
        db.createObjectStore('verdicts', { keyPath: 'key' }).createIndex('byUsed', 'used');
      },
    });
    await v4.put('datasets', { id: 'd1', name: 'mini-dev' });
    await v4.put('chunks', new Blob(['bytes']), ['abc', 0]);
    await v4.put('runs', { id: 'r1', name: 'step 100' });
    await v4.put('sampleBlocks', { runId: 'r1', block: 0, samples: [{ index: 0, sample: 0, ex: 1 }] });
    await v4.put('sampleMeta', { runId: 'r1', sorted: true, count: 1, blockSize: 100 });
    await v4.put('verdicts', { key: 'k', verdict: { ex: 1 }, used: 1 });
    v4.close();

    const db = await openWorkbenchDb(name);
    expect(db.version).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBe(6);
    expect(await db.get('datasets', 'd1')).toMatchObject({ name: 'mini-dev' });
    expect(await (await db.get('chunks', ['abc', 0]))!.text()).toBe('bytes');
    expect(await db.get('runs', 'r1')).toMatchObject({ name: 'step 100' });
    expect(await allSamples(db, 'r1')).toEqual([{ index: 0, sample: 0, ex: 1 }]);
    expect(await db.get('verdicts', 'k')).toMatchObject({ used: 1 });
    for (const s of ['series', 'seriesScores', 'seriesFolders'] as const) expect(await db.count(s)).toBe(0);
    await db.put('series', { id: 's1', runIds: ['r1', 'r2'] } as never);
    expect((await db.getAllFromIndex('series', 'byRun', 'r2')).map((s) => s.id)).toEqual(['s1']);
    db.close();
  });
});
