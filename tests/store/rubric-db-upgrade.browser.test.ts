/**
 * The rubrics database moves from version 1 (rubrics, judge cache, scores) to version 2 (plus
 * RaR datasets, runs and samples) without losing what version 1 stored: real IndexedDB in
 * Chromium, a version-1 database written with the version-1 schema, then opened by the app's code.
 */
import { openDB } from 'idb';
import { afterEach, describe, expect, it } from 'vitest';
import { RubricRepository, openRubricDb } from '../../src/adapters/judge/idb-judge-cache.ts';
import { RarRepository } from '../../src/adapters/judge/rar-store.ts';
import { EX_ONLY_RUBRIC } from '../../src/core/rubric/bird-rubric.ts';

const name = `rubrics-upgrade-${crypto.randomUUID()}`;
afterEach(() => indexedDB.deleteDatabase(name));

describe('rubrics database upgrade', () => {
  it('version 1 data is kept when version 2 adds the RaR stores', async () => {
    const v1 = await openDB(name, 1, {
      upgrade(db) {
        db.createObjectStore('rubrics', { keyPath: 'rubric.id' });
        db.createObjectStore('judgeCache', { keyPath: 'key' });
        db.createObjectStore('scores', { keyPath: ['runId', 'rubricId'] });
      },
    });
    await v1.put('rubrics', { rubric: EX_ONLY_RUBRIC, updatedAt: '2026-11-01T00:00:00.000Z' });
    await v1.put('judgeCache', { key: 'k1', text: '{"criteria_met": true, "explanation": "x"}', finishReason: 'stop' });
    v1.close();

    const db = await openRubricDb(name);
    expect(db.version).toBe(2);
    expect([...db.objectStoreNames].sort()).toEqual([
      'judgeCache',
      'rarDatasets',
      'rarRuns',
      'rarSamples',
      'rubrics',
      'scores',
    ]);
    const repo = new RubricRepository(db);
    expect((await repo.list()).map((r) => r.rubric)).toEqual([EX_ONLY_RUBRIC]);
    expect(await repo.cache().get('k1')).toEqual({
      text: '{"criteria_met": true, "explanation": "x"}',
      finishReason: 'stop',
    });
    // The new stores work: a RaR dataset goes in, a bad one is refused naming its line, nothing else changes.
    const rar = new RarRepository(db);
    const d = await rar.importDataset(
      '{"question": "Why?", "rubric": [{"title": "Because", "description": "Essential Criteria: says why", "weight": 5}]}\n',
      'one.jsonl',
    );
    expect(d.rows).toHaveLength(1);
    await expect(rar.importDataset('{"question": "Why?", "rubric": "none"}\n', 'bad.jsonl')).rejects.toThrow(
      /bad\.jsonl:1: "rubric" must be an array/,
    );
    expect((await rar.listDatasets()).map((x) => x.file.name)).toEqual(['one.jsonl']);
    db.close();
  });
});
