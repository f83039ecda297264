import { afterEach, describe, expect, it } from 'vitest';
import { spiderFiles } from './browser-data.ts';
import { testStore, type TestStore } from './store-helpers.ts';

let t: TestStore;
afterEach(() => t?.dispose());

const DBS = ['concert_singer', 'pets_1', 'poker_player'] as const;

describe('Spider dataset', () => {
  it('imports Spider dev with a few databases (tables.json ignored) and runs its gold self-test', async () => {
    t = testStore();
    const ds = await t.store.datasets.import({ kind: 'spider', name: 'Spider dev', files: await spiderFiles(DBS) });
    expect(ds.kind).toBe('spider');
    expect(ds.questions).toHaveLength(1034);
    expect(ds.goldFile?.name).toBe('spider/dev_gold.sql');
    expect(Object.keys(ds.databases).sort()).toEqual([...DBS]);
    const card = await t.store.datasets.card(ds.id);
    expect(card.byDifficulty).toEqual({ easy: 248, medium: 446, hard: 174, extra: 166 });
    expect(card.byDb.concert_singer).toMatchObject({ questions: 45, knownAs: null });
    expect(card.questionsWithoutDb).toHaveLength(1034 - 45 - 42 - 40);

    const { run, failures } = await t.store.service.goldSelfTest(ds.id);
    expect(run.status).toBe('done');
    expect(run.subset.indices).toHaveLength(45 + 42 + 40);
    expect(failures).toEqual([]);
    // A Spider dataset's run is scored by Spider's own rule (docs/spider-rules.md).
    expect(run.config.exRule).toBe('spider');
  });
});
