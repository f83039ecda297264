import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE } from '../../scripts/demo/predictions.ts';
import {
  browserSkipReason,
  openItem,
  runHostileDemo,
  suiteTitle,
  waitForDemo,
  type PageWatch,
  type StaticServer,
} from './harness.ts';
import { closeAppAfter, openApp } from './workbench-helpers.ts';

/** Predicted SQL and result rows come from a model: the page must show them as text, never run them as HTML. */
describe.skipIf(browserSkipReason())(suiteTitle('markup in predictions'), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let runId: string;

  beforeAll(async () => {
    ({ server, browser, page, watch } = await openApp({}));
    await page.goto(server.url);
    await waitForDemo(page);
    runId = await runHostileDemo(page, { timeoutS: 2 });
  });

  closeAppAfter(() => ({ server, browser, watch }));

  it('shows <img onerror> and <script> in the predicted SQL as text', async () => {
    const item = await openItem(page, runId, HOSTILE.markup);
    const sql = await item.getByTestId('pred-sql').textContent();
    expect(sql).toContain('<img src=x onerror=alert(1)>');
    expect(sql).toContain('<script>alert("pwned")</script>');
    // ...and in the result rows of the preview.
    await item.getByTestId('pred-rows').locator('tbody td').first().waitFor();
    const cells = await item.locator('table.rows td').allTextContents();
    expect(cells).toEqual(expect.arrayContaining(['<img src=x onerror=alert(1)>', '<script>alert("pwned")</script>']));
  });

  it('creates no element from it and opens no dialog', async () => {
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.locator('main script').count()).toBe(0);
    expect(await page.locator('#app img, #app script, #app iframe').count()).toBe(0);
    expect(watch.dialogs).toEqual([]);
    expect(watch.problems).toEqual([]);
  });
});
