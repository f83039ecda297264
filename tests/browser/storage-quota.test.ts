import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, builtAppDir, launchChromium, serveStatic, suiteTitle, watchPage, type PageWatch, type StaticServer } from './harness.ts';
import { idbCounts, spiderOneDbFolder } from './offline-helpers.ts';
import { importDataset, laptopPage, officialCells, startRun } from './workbench-helpers.ts';

/**
 * A full disk, simulated by the store's test double (real QuotaExceededError DOMExceptions after
 * N bytes of an import or N samples of a run, chosen by a test-only address parameter): a clear
 * message, nothing half-written, earlier data intact, and the app goes on working.
 */
describe.skipIf(browserSkipReason())(suiteTitle('storage limits (test double: simulated quota)'), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let runId: string;
  let exTotal: string;
  let before: Awaited<ReturnType<typeof idbCounts>>;

  async function storedIsIntact(): Promise<void> {
    expect(await idbCounts(page)).toMatchObject({ datasets: before.datasets, databases: before.databases, chunkShas: before.chunkShas });
    await page.getByTestId('nav-runs').click();
    await page.goto(page.url().replace(/#.*$/, '') + `#/run/${runId}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    expect((await officialCells(page)).ex!.total).toBe(exTotal);
  }

  beforeAll(async () => {
    server = await serveStatic(builtAppDir());
    browser = await launchChromium();
    page = await laptopPage(browser);
    watch = watchPage(page);
    await page.goto(server.url + '#/datasets');
    expect((await importDataset(page, { kind: 'spider', name: 'Spider one db', folder: spiderOneDbFolder() })).ok).toBe(true);
    const run = await startRun(page, { datasetName: 'Spider one db', predictions: sharedData('spider', 'dev_gold.sql'), name: 'gold', onlyStored: true });
    expect(run.error).toBeNull();
    runId = run.runId!;
    exTotal = (await officialCells(page)).ex!.total!;
    before = await idbCounts(page);
    expect(before).toMatchObject({ datasets: 1, databases: 1, runs: 1 });
  }, 180_000);

  afterEach(() => {
    expect(watch.problems).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows what the site stores against its quota, and asks the browser to keep the data', async () => {
    const line = page.getByTestId('storage-line');
    await expect.poll(async () => (await line.textContent())?.replace(/\s+/g, ' ')).toMatch(/Storage: [\d.]+ (?:B|KiB|MiB|GiB) of [\d.]+ (?:MiB|GiB|TiB) \((?:<0\.1|[\d.]+) %\)/);
    const persisted = await page.evaluate(() => navigator.storage.persisted());
    if (persisted) expect(await page.getByTestId('persisted').count()).toBe(1);
    else {
      await page.getByTestId('keep-data').click();
      await expect.poll(async () => (await line.locator('[role="status"]').textContent()) ?? '').toMatch(/will keep this data|declined for now/);
    }
  });

  it('an import that fills the quota (test double after 3 MB) says so, stores nothing of it and changes nothing stored before', async () => {
    await page.goto(server.url + '?test-quota-after-bytes=3000000#/datasets');
    expect(await page.getByTestId('test-double').textContent()).toContain('simulated as exhausted after 3000000 bytes');
    // BIRD's three databases are 5.5 MB: the first fits under the double, the second does not.
    const r = await importDataset(page, { kind: 'bird', name: 'BIRD mini-dev', folder: sharedData('bird') });
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/Browser storage is full: dataset "BIRD mini-dev" was not imported/);
    expect(r.message).toContain('Nothing stored before was changed');
    expect(r.message).toMatch(/Free space by deleting datasets or runs/);
    await storedIsIntact();
  });

  it('the app stays usable: a small import and a run still work on the same page', async () => {
    const root = path.join(mkdtempSync(path.join(tmpdir(), 'wb-quota-')), 'spider');
    cpSync(sharedData('spider', 'dev.json'), path.join(root, 'dev.json'));
    cpSync(sharedData('spider', 'dev_gold.sql'), path.join(root, 'dev_gold.sql'));
    cpSync(sharedData('spider', 'pets_1', 'pets_1.sqlite'), path.join(root, 'database', 'pets_1', 'pets_1.sqlite'));
    const r = await importDataset(page, { kind: 'spider', name: 'Spider pets', folder: root });
    expect(r.ok).toBe(true);
    const run = await startRun(page, { datasetName: 'Spider pets', predictions: sharedData('spider', 'dev_gold.sql'), name: 'pets gold', onlyStored: true });
    expect(run.error).toBeNull();
    expect((await officialCells(page)).ex!.total).toBe('100.00');
    expect(await idbCounts(page)).toMatchObject({ datasets: 2, databases: 2, runs: 2 });
  });

  it('a run that fills the quota (test double after 10 samples) stops with a message naming it; its stored samples are kept and nothing else changes', async () => {
    await page.goto(server.url + '?test-quota-after-samples=10#/runs');
    const run = await startRun(page, { datasetName: 'Spider one db', predictions: sharedData('spider', 'dev_gold.sql'), name: 'too big', onlyStored: true });
    expect(run.runId).toBeNull();
    expect(run.error).toMatch(/Browser storage is full: run "too big" stopped after \d+ of 45 samples were stored\. The stored samples are kept\./);
    const li = page.getByTestId('run-list').locator('li[data-run-id]').filter({ hasText: 'too big' });
    await expect.poll(() => li.getAttribute('data-status')).toBe('failed');
    before = { ...before, datasets: 2, databases: 2 };
    before.chunkShas = (await idbCounts(page)).chunkShas;
    await storedIsIntact();
  });
});
