import { describe, expect, it } from 'vitest';
import type { DatasetRecord } from '../../../src/app/store-ports.ts';
import type { Question } from '../../../src/core/types.ts';
import { DEFAULT_SUITE_SPEC } from '../../../src/core/ts/suite.ts';
import { LAST_DATASET_KEY, NewRunDraft } from '../../../src/ui/workbench/new-run-draft.svelte.ts';

const q = (questionId: number, dbId: string): Question => ({
  questionId,
  dbId,
  question: 'q',
  evidence: '',
  goldSql: 'SELECT 1',
  difficulty: questionId % 2 ? 'simple' : 'moderate',
});
const dataset: DatasetRecord = {
  id: 'd1',
  name: 'mini',
  kind: 'bird',
  createdAt: '2026-01-01T00:00:00Z',
  questionsFile: { name: 'q.json', sha256: 'a', bytes: 1 },
  goldFile: null,
  questions: [q(1, 'a'), q(2, 'a'), q(3, 'b'), q(4, 'c')],
  gold: [],
  databases: { a: 'sha-a', b: 'sha-b' },
};
const file = (name: string, text: string) => new File([text], name);

describe('the new-run form', () => {
  it('says what is missing, in order, until the run can start', async () => {
    const d = new NewRunDraft();
    expect(d.blocker).toBe('Choose a dataset.');
    d.setDataset(dataset);
    expect(d.blocker).toBe('Choose a predictions file.');
    await d.setPredictionsFile(file('preds.json', '{}'));
    expect(d.blocker).toBeNull();
    expect(d.state.name).toBe('preds on mini');
    d.setIdsText('3, x');
    expect(d.blocker).toContain('"x" is not a question id');
    d.setIdsText('99');
    expect(d.blocker).toBe('The subset is empty: loosen the filters.');
  });

  it('lists stored databases first and builds the request from the chosen subset and configuration', async () => {
    const d = new NewRunDraft();
    d.setDataset(dataset);
    expect(d.dbChoices.map((c) => [c.id, c.questions, c.stored])).toEqual([
      ['a', 2, true],
      ['b', 1, true],
      ['c', 1, false],
    ]);
    d.onlyStoredDbs();
    d.toggleDifficulty('simple', true);
    d.setTimeoutS(5);
    d.setReadOnly(true);
    d.toggleMetric('soft-f1', false);
    d.setFence('first');
    await d.setPredictionsFile(file('p.sql', 'SELECT 1'));
    d.setName('  my run ');
    const req = d.toRequest()!;
    expect(req).toMatchObject({ name: 'my run', datasetId: 'd1', predictions: { name: 'p.sql', text: 'SELECT 1' } });
    expect(req.subset.indices).toEqual([0, 2]);
    expect(req.config).toMatchObject({ metrics: ['ex'], timeoutMs: 5000, readOnly: true, fence: 'first' });
  });

  it('a typed name names one run; the dataset chosen is remembered; TS seed and size go into the run', async () => {
    const map = new Map<string, string>();
    const memory = {
      getItem: (k: string) => map.get(k) ?? null,
      setItem: (k: string, v: string) => void map.set(k, v),
    };
    const d = new NewRunDraft(null, memory);
    // setDataset is the form's default choice, not the user's: nothing remembered yet.
    d.setDataset(dataset);
    expect(map.get(LAST_DATASET_KEY)).toBeUndefined();
    d.chooseDataset(dataset);
    expect(new NewRunDraft(null, memory).rememberedDatasetId).toBe('d1');

    await d.setPredictionsFile(file('a.json', '{}'));
    d.setName('my first run');
    d.toggleMetric('ts', true);
    d.setTsSeed(7);
    d.setTsSize(4);
    expect(d.toRequest()!.config.suite).toEqual({ ...DEFAULT_SUITE_SPEC, seed: 7, size: 4 });
    d.setTsSize(DEFAULT_SUITE_SPEC.candidates + 1);
    expect(d.blocker).toMatch(/test-suite size must be an integer from 1 to 20/);
    d.setTsSize(4);
    d.setTsSeed(-1);
    expect(d.blocker).toMatch(/test-suite seed must be an integer from 0 to 4294967295/);
    d.setTsSeed(7);

    d.started();
    expect(d.state.name).toBe('a on mini');
    await d.setPredictionsFile(file('b.json', '{}'));
    expect(d.state.name).toBe('b on mini');
  });
});
