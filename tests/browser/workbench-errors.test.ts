import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import {
  type AppSession,
  importDataset,
  officialCells,
  startRun,
  useApp,
  startSpiderGoldRun,
} from './workbench-helpers.ts';
import { spiderOneDbFolder } from './offline-helpers.ts';

/**
 * Wrong files get a message that names the file and what is wrong, and change nothing that was
 * stored: the dataset, its database and the run made before are all still there, unchanged.
 */
describe.skipIf(browserSkipReason())(suiteTitle('the workbench refuses wrong files and keeps what it has'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/datasets' });
  let dir: string;
  let runId: string;
  let exTotal: string;
  let sha: string;

  async function storedIsIntact(): Promise<void> {
    await page.getByTestId('nav-datasets').click();
    const items = page.getByTestId('dataset-list').locator('li');
    // The lists render once the store has answered: wait for them, then there must be exactly one.
    await expect.poll(() => items.count(), { timeout: 10_000 }).toBe(1);
    await items.first().locator('a').click();
    await page.getByTestId('dataset-card').getByTestId('db-table').waitFor();
    expect(await page.locator('tr[data-db="concert_singer"] td.sha').textContent()).toBe(sha);
    await page.getByTestId('nav-runs').click();
    await expect
      .poll(() => page.getByTestId('run-list').locator('li[data-run-id]').count(), { timeout: 10_000 })
      .toBe(1);
    await page.goto(`${server.url}#/run/${runId}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    expect((await officialCells(page)).ex!.total).toBe(exTotal);
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'wb-errors-'));
    const spider = spiderOneDbFolder();
    writeFileSync(
      path.join(dir, 'questions.json'),
      '[{"db_id": "concert_singer", "question": "How many singers?", "query": "SELECT count(*) FROM singer"},',
    );
    mkdirSync(path.join(dir, 'fake'));
    writeFileSync(
      path.join(dir, 'fake', 'questions.json'),
      JSON.stringify([{ db_id: 'fake', question: 'How many?', query: 'SELECT 1' }]),
    );
    writeFileSync(path.join(dir, 'fake', 'fake.sqlite'), 'id,name\n1,not a database\n');
    expect((await importDataset(page, { kind: 'spider', name: 'Spider one db', folder: spider })).ok).toBe(true);
    await page.getByTestId('dataset-card').getByTestId('db-table').waitFor();
    sha = (await page.locator('tr[data-db="concert_singer"] td.sha').textContent())!;
    const run = await startSpiderGoldRun(page, 'Spider one db', 'gold');
    expect(run.error).toBeNull();
    runId = run.runId!;
    exTotal = (await officialCells(page)).ex!.total!;
  });

  it('says which questions file is malformed, and stores nothing of it', async () => {
    const files = [path.join(dir, 'questions.json'), sharedData('spider', 'concert_singer', 'concert_singer.sqlite')];
    const r = await importDataset(page, { kind: 'custom', name: 'broken', files });
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/^Import failed: questions\.json.*JSON/);
    await storedIsIntact();
  });

  it('says which database file is not SQLite, and stores nothing of it', async () => {
    const files = [path.join(dir, 'fake', 'questions.json'), path.join(dir, 'fake', 'fake.sqlite')];
    const r = await importDataset(page, { kind: 'custom', name: 'not sqlite', files });
    expect(r.ok).toBe(false);
    expect(r.message).toContain('fake.sqlite');
    expect(r.message).toMatch(/SQLite/);
    await storedIsIntact();
  });

  it('refuses predictions of another dataset with a message naming the file, and starts no run', async () => {
    const bird = sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json');
    const run = await startRun(page, { datasetName: 'Spider one db', predictions: bird, name: 'wrong dataset' });
    expect(run.runId).toBeNull();
    expect(run.error).toContain('predict_mini_dev_gpt-4-o_cot_SQLite.json');
    expect(run.error).toContain('another dataset');
    await storedIsIntact();
  });
});
