import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { selectSubset } from '../../src/core/run/subset.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, builtAppDir, launchChromium, serveStatic, suiteTitle, watchPage, type PageWatch, type StaticServer } from './harness.ts';
import { downloadFrom, importDataset, laptopPage, officialCells, screenshot, startRun } from './workbench-helpers.ts';

const DBS = ['concert_singer', 'pets_1', 'car_1', 'flight_2'];

/** A Spider download with a few of its databases: dev.json, dev_gold.sql and `<db>/<db>.sqlite` folders. */
function spiderFolder(): string {
  const root = path.join(mkdtempSync(path.join(tmpdir(), 'wb-spider-')), 'spider');
  for (const f of ['dev.json', 'dev_gold.sql']) cpSync(sharedData('spider', f), path.join(root, f));
  for (const db of DBS) cpSync(sharedData('spider', db, `${db}.sqlite`), path.join(root, 'database', db, `${db}.sqlite`));
  return root;
}

describe.skipIf(browserSkipReason())(suiteTitle('the workbench on a few Spider databases'), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let folder: string;
  const questions = parseQuestions(readFileSync(sharedData('spider', 'dev.json'), 'utf8'), 'dev.json');
  const withDb = questions.filter((q) => DBS.includes(q.dbId)).length;

  beforeAll(async () => {
    folder = spiderFolder();
    server = await serveStatic(builtAppDir());
    browser = await launchChromium();
    page = await laptopPage(browser);
    watch = watchPage(page);
    await page.goto(server.url + '#/datasets');
  });

  afterEach(() => {
    expect(watch.problems).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('imports dev.json, dev_gold.sql and four databases as a Spider dataset', async () => {
    const imported = await importDataset(page, { kind: 'spider', name: 'Spider dev (4 dbs)', folder });
    expect(imported).toEqual({ ok: true, message: 'Imported "Spider dev (4 dbs)": 1034 questions, 4 databases.' });
    const card = page.getByTestId('dataset-card');
    await card.getByTestId('db-table').waitFor();
    for (const db of DBS) expect(await card.locator(`tr[data-db="${db}"] td.sha`).textContent()).toMatch(/^[0-9a-f]{64}$/);
    expect(await card.getByTestId('without-db').textContent()).toContain(`${1034 - withDb} questions have no database`);
  });

  it('runs the gold self-test: every gold with a database passes as its own prediction', async () => {
    const card = page.getByTestId('dataset-card');
    await card.getByTestId('self-test-run').click();
    const summary = card.getByTestId('self-test-summary');
    await summary.waitFor({ timeout: 120_000 });
    expect(await summary.getAttribute('data-tested')).toBe(String(withDb));
    expect(await summary.getAttribute('data-failures')).toBe('0');
    expect(await summary.textContent()).toContain(`All ${withDb} golds with a database pass`);
    await screenshot(page, 'workbench-spider-self-test.png', true);
  });

  it('evaluates a seeded random sample of the stored databases, the same questions the core draws', async () => {
    await page.getByTestId('nav-runs').click();
    await page.getByTestId('subset-stored').click();
    await page.getByTestId('subset-sample').check();
    await page.getByLabel('Sample size').fill('50');
    await page.getByLabel('seed').fill('7');
    const run = await startRun(page, { datasetName: 'Spider dev (4 dbs)', predictions: sharedData('spider', 'dev_gold.sql'), name: 'gold sample' });
    expect(run.error).toBeNull();
    const cells = await officialCells(page);
    expect(cells.count!.total).toBe('50');
    expect(cells.ex!.total).toBe('100.00');
    await page.getByTestId('nav-runs').click();
    const file = JSON.parse((await downloadFrom(page, `[data-run-id="${run.runId}"] [data-testid="export-run"]`)).text) as RunFile;
    const expected = selectSubset(questions, { dbIds: [...DBS].sort(), difficulties: [], questionIds: [], sample: { n: 50, seed: 7 } });
    expect(file.run.subset.indices).toEqual(expected.indices);
  });
});
