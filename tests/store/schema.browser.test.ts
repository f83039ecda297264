import { deleteDB, openDB } from 'idb';
import { afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION, openWorkbenchDb } from '../../src/adapters/store/schema.ts';
import { allSamples } from '../../src/adapters/store/sample-blocks.ts';

const name = `wb-schema-${crypto.randomUUID()}`;
afterEach(() => deleteDB(name));

/**
 * A version-4 database as a user has it: the stores of versions 1 to 4 (the sample blocks of
 * version 2, the suites of 3, the verdicts of 4), empty.
 */
const openVersion4 = () =>
  openDB(name, 4, {
    upgrade(db) {
      for (const s of ['datasets', 'databases', 'runs'])
        db.createObjectStore(s, { keyPath: s === 'databases' ? 'sha256' : 'id' });
      db.createObjectStore('chunks');
      db.createObjectStore('runInputs', { keyPath: 'runId' });
      db.createObjectStore('sampleBlocks', { keyPath: ['runId', 'block'] });
      db.createObjectStore('sampleMeta', { keyPath: 'runId' });
      db.createObjectStore('suites', { keyPath: 'key' });
      db.createObjectStore('verdicts', { keyPath: 'key' }).createIndex('byUsed', 'used');
    },
  });

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

  it('version 4 (the verdict cache) gains the overlay and version-check stores of version 5 (and the series stores of 6) and keeps every record', async () => {
    // A version-4 database as a user has it, with records in each store.
    const v4 = await openVersion4();
    await v4.put('datasets', { id: 'd1', name: 'mini-dev' });
    await v4.put('runs', { id: 'r1', name: 'kept' });
    await v4.put('runInputs', { runId: 'r1', items: [] });
    await v4.put('sampleBlocks', { runId: 'r1', block: 0, samples: [{ index: 0, sample: 0, ex: 1 }] });
    await v4.put('suites', { key: 'k', suite: {}, createdAt: 'then' });
    await v4.put('verdicts', { key: 'v', verdict: { status: 'ok', ex: 1 }, used: 7 });
    v4.close();

    const db = await openWorkbenchDb(name);
    expect(db.version).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBe(7);
    expect([...db.objectStoreNames].sort()).toEqual(
      [
        'chunks',
        'databases',
        'datasets',
        'exclusions',
        'overlays',
        'runInputs',
        'runs',
        'sampleBlocks',
        'sampleMeta',
        'series',
        'seriesFolders',
        'seriesScores',
        'suites',
        'verdicts',
        'versionChecks',
      ].sort(),
    );
    expect(await db.get('datasets', 'd1')).toMatchObject({ name: 'mini-dev' });
    expect(await db.get('runs', 'r1')).toMatchObject({ name: 'kept' });
    expect(await db.get('runInputs', 'r1')).toMatchObject({ items: [] });
    expect(await allSamples(db, 'r1')).toHaveLength(1);
    expect(await db.get('suites', 'k')).toMatchObject({ createdAt: 'then' });
    expect(await db.get('verdicts', 'v')).toMatchObject({ used: 7 });
    expect(await db.countFromIndex('verdicts', 'byUsed')).toBe(1);
    // The new stores start empty and hold one record per run.
    expect(await db.count('overlays')).toBe(0);
    expect(await db.count('versionChecks')).toBe(0);
    await db.put('overlays', { runId: 'r1' } as never);
    await db.put('overlays', { runId: 'r1', name: 'again' } as never);
    expect(await db.count('overlays')).toBe(1);
    db.close();
  });
});

describe('version 6 (training runs) only adds stores', () => {
  it('upgrades a version-4 database with data: every record kept, the series stores empty and usable', async () => {
    const v4 = await openVersion4();
    await v4.put('datasets', { id: 'd1', name: 'mini-dev' });
    await v4.put('chunks', new Blob(['bytes']), ['abc', 0]);
    await v4.put('runs', { id: 'r1', name: 'step 100' });
    await v4.put('sampleBlocks', { runId: 'r1', block: 0, samples: [{ index: 0, sample: 0, ex: 1 }] });
    await v4.put('sampleMeta', { runId: 'r1', sorted: true, count: 1, blockSize: 100 });
    await v4.put('verdicts', { key: 'k', verdict: { ex: 1 }, used: 1 });
    v4.close();

    const db = await openWorkbenchDb(name);
    expect(db.version).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBe(7);
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

describe('version 7 (exclusions) only adds a store', () => {
  it('upgrades a version-6 database with data: every record kept, the exclusions store empty and usable', async () => {
    // Version 6 as it shipped: version 4's stores, then 5's and 6's.
    const v4 = await openVersion4();
    v4.close();
    const v6 = await openDB(name, 6, {
      upgrade(db) {
        db.createObjectStore('overlays', { keyPath: 'runId' });
        db.createObjectStore('versionChecks', { keyPath: 'runId' });
        db.createObjectStore('series', { keyPath: 'id' }).createIndex('byRun', 'runIds', { multiEntry: true });
        db.createObjectStore('seriesScores', { keyPath: ['seriesId', 'step'] });
        db.createObjectStore('seriesFolders', { keyPath: 'seriesId' });
      },
    });
    await v6.put('datasets', { id: 'd1', name: 'mini-dev' });
    await v6.put('runs', { id: 'r1', name: 'step 100' });
    await v6.put('sampleBlocks', { runId: 'r1', block: 0, samples: [{ index: 0, sample: 0, ex: 1 }] });
    await v6.put('overlays', { runId: 'r1', name: 'fix.jsonl' });
    await v6.put('series', { id: 's1', name: 'grpo', runIds: ['r1'] });
    await v6.put('seriesScores', { seriesId: 's1', step: 100, scores: [1] });
    await v6.put('seriesFolders', { seriesId: 's1', name: 'dumps' });
    v6.close();

    const db = await openWorkbenchDb(name);
    expect(db.version).toBe(7);
    expect(await db.get('datasets', 'd1')).toMatchObject({ name: 'mini-dev' });
    expect(await db.get('runs', 'r1')).toMatchObject({ name: 'step 100' });
    expect(await allSamples(db, 'r1')).toEqual([{ index: 0, sample: 0, ex: 1 }]);
    expect(await db.get('overlays', 'r1')).toMatchObject({ name: 'fix.jsonl' });
    expect((await db.getAllFromIndex('series', 'byRun', 'r1')).map((s) => s.id)).toEqual(['s1']);
    expect(await db.get('seriesScores', ['s1', 100])).toMatchObject({ scores: [1] });
    expect(await db.get('seriesFolders', 's1')).toMatchObject({ name: 'dumps' });
    expect(await db.count('exclusions')).toBe(0);
    const e = { questionId: 7, reason: 'gold is wrong', author: 'ana', date: '2026-12-07T11:00:00.000Z' };
    await db.put('exclusions', { ownerId: 'r1', owner: 'run', exclusions: [e] });
    await db.put('exclusions', { ownerId: 's1', owner: 'series', exclusions: [e] });
    expect(await db.get('exclusions', 'r1')).toEqual({ ownerId: 'r1', owner: 'run', exclusions: [e] });
    expect(await db.count('exclusions')).toBe(2);
    db.close();
  });
});
