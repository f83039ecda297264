/**
 * The rubrics database moves from version 1 (rubrics, judge cache, scores) to version 2 (plus
 * RaR datasets, runs and samples) without losing what version 1 stored: real IndexedDB in
 * Chromium, a version-1 database written with the version-1 schema, then opened by the app's code.
 */
import { openDB } from 'idb';
import { afterEach, describe, expect, it } from 'vitest';
import { RubricRepository, openRubricDb } from '../../src/adapters/judge/idb-judge-cache.ts';
import { IdbLabelRepository } from '../../src/adapters/judge/label-store.ts';
import { RarRepository } from '../../src/adapters/judge/rar-store.ts';
import type { HumanLabel } from '../../src/core/rubric/labels.ts';
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
    expect(db.version).toBe(3);
    expect([...db.objectStoreNames].sort()).toEqual([
      'judgeCache',
      'labelProgress',
      'labels',
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

  it('version 2 data (rubrics, judge cache, RaR datasets, runs, samples) is kept when version 3 adds the label stores', async () => {
    const v2 = await openDB(name, 2, {
      upgrade(db) {
        db.createObjectStore('rubrics', { keyPath: 'rubric.id' });
        db.createObjectStore('judgeCache', { keyPath: 'key' });
        db.createObjectStore('scores', { keyPath: ['runId', 'rubricId'] });
        db.createObjectStore('rarDatasets', { keyPath: 'id' });
        db.createObjectStore('rarRuns', { keyPath: 'id' });
        db.createObjectStore('rarSamples', { keyPath: ['runId', 'index', 'sample'] });
      },
    });
    const records = {
      rubrics: { rubric: EX_ONLY_RUBRIC, updatedAt: '2026-11-01T00:00:00.000Z' },
      judgeCache: { key: 'k1', text: '{"score": 7, "explanation": "x"}', finishReason: 'stop' },
      scores: { runId: 'run-1', rubricId: 'ex-only', rubric: EX_ONLY_RUBRIC, scoredAt: 'then', samples: [] },
      rarDatasets: { id: 'ds-1', name: 'd', file: { name: 'd.jsonl', sha256: 'a'.repeat(64), bytes: 3 }, rows: [] },
      rarRuns: { id: 'rar-1', name: 'r', status: 'done' },
      rarSamples: { runId: 'rar-1', index: 0, sample: 1, completion: 'kept' },
    } as const;
    for (const [store, value] of Object.entries(records)) await v2.put(store as never, value as never);
    v2.close();

    const db = await openRubricDb(name);
    expect(db.version).toBe(3);
    for (const [store, value] of Object.entries(records))
      expect(await db.getAll(store as never), store).toEqual([value]);
    // The new stores work: a label goes in, a merge keeps the later of one labeller's two labels, progress is kept.
    const labels = new IdbLabelRepository(db);
    const l: HumanLabel = {
      labeller: 'ann',
      dataset: 'a'.repeat(64),
      question: 'q1',
      sample: 0,
      response: 'b'.repeat(64),
      criterion: null,
      value: true,
      at: '2026-12-07T10:00:00.000Z',
    };
    await labels.put(l);
    const m = await labels.merge([
      { ...l, value: false, at: '2026-12-07T11:00:00.000Z' },
      { ...l, criterion: 'c1' },
    ]);
    expect([m.added, m.replaced, m.ignored]).toEqual([1, 1, 0]);
    expect((await labels.list('a'.repeat(64))).map((x) => [x.criterion, x.value])).toEqual([
      [null, false],
      ['c1', true],
    ]);
    await labels.setPosition('ann', 'rar-1', 'criteria', 7);
    expect(await labels.position('ann', 'rar-1', 'criteria')).toBe(7);
    expect(await labels.position('ann', 'rar-1', 'responses')).toBe(0);
    db.close();
  });
});
