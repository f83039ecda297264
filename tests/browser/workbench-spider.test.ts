import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BlobReader, BlobWriter, ZipWriter, configure } from '@zip.js/zip.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { selectSubset } from '../../src/core/views/subset.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { sharedData, spiderFlags } from '../helpers/shared-data.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import {
  type AppSession,
  downloadFrom,
  importDataset,
  officialCells,
  screenshot,
  startRun,
  useApp,
} from './workbench-helpers.ts';

const DBS = ['concert_singer', 'pets_1', 'car_1', 'flight_2'];

/** A Spider download with a few of its databases: dev.json, dev_gold.sql and `<db>/<db>.sqlite` folders. */
function spiderFolder(): string {
  const root = path.join(mkdtempSync(path.join(tmpdir(), 'wb-spider-')), 'spider');
  for (const f of ['dev.json', 'dev_gold.sql']) cpSync(sharedData('spider', f), path.join(root, f));
  for (const db of DBS)
    cpSync(sharedData('spider', db, `${db}.sqlite`), path.join(root, 'database', db, `${db}.sqlite`));
  return root;
}

/** The same files as a .zip (as a release download), with the folder inside it. */
async function spiderZip(root: string): Promise<string> {
  configure({ useWebWorkers: false });
  const zip = new ZipWriter(new BlobWriter('application/zip'));
  const files = ['dev.json', 'dev_gold.sql', ...DBS.map((db) => `database/${db}/${db}.sqlite`)];
  for (const f of files) await zip.add(`spider/${f}`, new BlobReader(new Blob([readFileSync(path.join(root, f))])));
  const out = path.join(path.dirname(root), 'spider.zip');
  writeFileSync(out, Buffer.from(await (await zip.close()).arrayBuffer()));
  return out;
}

describe.skipIf(browserSkipReason())(suiteTitle('the workbench on a few Spider databases'), () => {
  let { page } = {} as AppSession;
  useApp((s) => ({ page } = s), { hash: '#/datasets' });
  let folder: string;
  const questions = parseQuestions(readFileSync(sharedData('spider', 'dev.json'), 'utf8'), 'dev.json');
  const withDb = questions.filter((q) => DBS.includes(q.dbId)).length;

  beforeAll(async () => {
    folder = spiderFolder();
  });

  it('imports dev.json, dev_gold.sql and four databases as a Spider dataset', async () => {
    const imported = await importDataset(page, { kind: 'spider', name: 'Spider dev (4 dbs)', folder });
    expect(imported).toEqual({ ok: true, message: 'Imported "Spider dev (4 dbs)": 1,034 questions, 4 databases.' });
    const card = page.getByTestId('dataset-card');
    await card.getByTestId('db-table').waitFor();
    for (const db of DBS)
      expect(await card.locator(`tr[data-db="${db}"] td.sha`).textContent()).toMatch(/^[0-9a-f]{64}$/);
    // The text as shown (the template's line breaks collapse to one space on the page).
    expect(await card.getByTestId('without-db').innerText()).toContain(`${1034 - withDb} questions have no database`);
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

  it("lists the gold checks beside the self-test, the CLI's gold-check figures on these four databases (flight_2's empty golds, car_1's count by group)", async () => {
    const out = tempFile('gold-check.json');
    const cli = await runCli(['gold-check', ...spiderFlags(), '--workers', '1', '--out', out]);
    expect(cli.code).toBe(0);
    const expected = (readJson(out).items as { index: number; db_id: string; issues: { kind: string }[] }[]).filter(
      (i) => DBS.includes(i.db_id),
    );
    const card = page.getByTestId('dataset-card');
    const summary = card.getByTestId('gold-check-summary');
    expect(await summary.getAttribute('data-issues')).toBe(String(expected.length));
    expect(expected.some((i) => i.issues.some((g) => g.kind === 'no-rows'))).toBe(true);
    const rows = card.locator('[data-testid="gold-check-issues"] tbody tr');
    expect(await rows.count()).toBe(expected.reduce((a, i) => a + i.issues.length, 0));
    expect(
      await card.locator('[data-testid="gold-check-issues"] tr[data-kind="count-as-list"]').first().textContent(),
    ).toContain('the question asks for a count ("How many")');
    await screenshot(page, 'workbench-spider-gold-checks.png', true);
  });

  it('evaluates a seeded random sample of the stored databases, the same questions the core draws', async () => {
    await page.getByTestId('nav-runs').click();
    await page.getByTestId('subset-stored').click();
    await page.getByTestId('subset-sample').check();
    await page.getByLabel('Sample size').fill('50');
    await page.getByLabel('seed').fill('7');
    const run = await startRun(page, {
      datasetName: 'Spider dev (4 dbs)',
      predictions: sharedData('spider', 'dev_gold.sql'),
      name: 'gold sample',
    });
    expect(run.error).toBeNull();
    const cells = await officialCells(page);
    expect(cells.count!.total).toBe('50');
    expect(cells.ex!.total).toBe('100.00');
    await page.getByTestId('nav-runs').click();
    const file = JSON.parse(
      (await downloadFrom(page, `[data-run-id="${run.runId}"] [data-testid="export-run"]`)).text,
    ) as RunFile;
    const expected = selectSubset(questions, {
      dbIds: [...DBS].sort(),
      difficulties: [],
      questionIds: [],
      sample: { n: 50, seed: 7 },
    });
    expect(file.run.subset.indices).toEqual(expected.indices);
  });

  it('imports the same dataset from a .zip (streamed in the import worker), with the same database fingerprints', async () => {
    const imported = await importDataset(page, {
      kind: 'spider',
      name: 'Spider from zip',
      files: [await spiderZip(folder)],
    });
    // The same files as the folder imported first: stored under its own name, and the note names the other.
    expect(imported).toEqual({
      ok: true,
      message:
        'Imported "Spider from zip": 1,034 questions, 4 databases. It has the same files as "Spider dev (4 dbs)"; delete one of them if you need only one.',
    });
    const card = page.getByTestId('dataset-card');
    await card.getByTestId('db-table').waitFor();
    expect(await card.textContent()).toContain('spider/dev.json');
    const shas = await card.locator('td.sha').allTextContents();
    await page.getByTestId('dataset-list').locator('a', { hasText: 'Spider dev (4 dbs)' }).click();
    await page.locator('[data-testid="dataset-card"] h2', { hasText: 'Spider dev (4 dbs)' }).waitFor();
    expect(await page.getByTestId('dataset-card').locator('td.sha').allTextContents()).toEqual(shas);
  });

  it('renames and deletes runs from the runs list', async () => {
    await page.getByTestId('nav-runs').click();
    const rows = page.getByTestId('run-list').locator('li[data-run-id]');
    // The click changes the route's hash; the runs page is drawn after its hashchange, not by the click.
    await expect.poll(() => rows.count()).toBe(2);
    const id = await rows.filter({ hasText: 'gold sample' }).getAttribute('data-run-id');
    const sample = page.locator(`li[data-run-id="${id}"]`);
    await sample.getByTestId('rename').click();
    await sample.getByTestId('rename-input').fill('gold sample, renamed');
    await sample.getByRole('button', { name: 'Save' }).click();
    await rows.filter({ hasText: 'gold sample, renamed' }).waitFor();
    const selfTest = rows.filter({ hasText: 'gold self-test' });
    await selfTest.getByTestId('delete-run').click();
    await selfTest.getByTestId('delete-run-confirm').click();
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="run-list"] li[data-run-id]').length === 1,
    );
    await page.reload();
    await page.getByTestId('run-list').locator('li[data-run-id]').first().waitFor();
    expect(
      await page.getByTestId('run-list').locator('li[data-run-id] [data-testid="run-link"]').allTextContents(),
    ).toEqual(['gold sample, renamed']);
  });

  it('imports a custom dataset dropped on the page', async () => {
    await page.getByTestId('nav-datasets').click();
    // The datasets page is drawn after the route's hashchange, not by the click.
    await page.locator('[aria-label="Choose or drop the dataset\'s files"]').waitFor();
    const db = readFileSync(sharedData('spider', 'concert_singer', 'concert_singer.sqlite')).toString('base64');
    const questions = JSON.stringify([
      { db_id: 'concert_singer', question: 'How many singers are there?', query: 'SELECT count(*) FROM singer' },
    ]);
    await page.evaluate(
      ([dbB64, qText]) => {
        const dt = new DataTransfer();
        dt.items.add(new File([qText!], 'questions.json', { type: 'application/json' }));
        dt.items.add(new File([Uint8Array.from(atob(dbB64!), (c) => c.charCodeAt(0))], 'concert_singer.sqlite'));
        const zone = document.querySelector('[aria-label="Choose or drop the dataset\'s files"]')!;
        zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
        zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      },
      [db, questions],
    );
    await page.getByTestId('import-review').waitFor();
    await page.locator('input[name="kind"][value="custom"]').check();
    await page.getByTestId('import-name').fill('dropped');
    await page.getByTestId('import-start').click();
    expect(await page.getByTestId('import-done').textContent()).toBe('Imported "dropped": 1 question, 1 database.');
  });

  it('cancels a run of queries that never end: the items that timed out are kept and counted', async () => {
    const never = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
    const preds = path.join(path.dirname(folder), 'never.sql');
    writeFileSync(preds, Array.from({ length: questions.length }, () => never).join('\n') + '\n');
    await page.getByTestId('nav-runs').click();
    await page.getByTestId('run-dataset').selectOption({ label: 'Spider dev (4 dbs) (1,034 questions)' });
    await page.getByTestId('run-predictions').setInputFiles(preds);
    await page.getByTestId('subset-stored').click();
    await page.getByTestId('run-timeout').fill('1');
    await page.getByTestId('run-name').fill('never ends');
    await page.getByTestId('run-start').click();
    await page.waitForFunction(
      () => Number(document.querySelector('[data-testid="run-done"]')?.textContent ?? 0) >= 2,
      undefined,
      { timeout: 30_000 },
    );
    await page.getByTestId('run-cancel').click();
    const note = page.getByRole('status').filter({ hasText: 'was cancelled' });
    await note.waitFor({ timeout: 30_000 });
    await note.getByRole('link', { name: 'Open its dashboard' }).click();
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    const timeouts = Number(await page.locator('[data-count="timeout"]').textContent());
    expect(timeouts).toBeGreaterThanOrEqual(2);
    expect(timeouts).toBeLessThan(withDb);
    expect((await officialCells(page)).count!.total).toBe(String(timeouts));
  });

  it('deletes a dataset after asking, and keeps the others', async () => {
    await page.getByTestId('nav-datasets').click();
    const list = page.getByTestId('dataset-list').locator('li');
    await expect.poll(() => list.count()).toBe(3);
    await list.filter({ hasText: 'dropped' }).locator('a').click();
    await page.locator('[data-testid="dataset-card"] h2', { hasText: 'dropped' }).waitFor();
    await page.getByTestId('delete-dataset').click();
    await page.getByTestId('delete-dataset-confirm').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="dataset-list"] li').length === 2);
    expect(await page.getByTestId('dataset-list').textContent()).not.toContain('dropped');
    expect(page.url()).toMatch(/#\/datasets$/);
  });
});
