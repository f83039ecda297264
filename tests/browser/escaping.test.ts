import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE } from '../../scripts/demo/predictions.ts';
import {
  browserSkipReason,
  builtAppDir,
  launchChromium,
  serveStatic,
  suiteTitle,
  waitForPhase,
  watchPage,
  type PageWatch,
  type StaticServer,
} from './harness.ts';

/** Predicted SQL and result rows come from a model: the page must show them as text, never run them as HTML. */
describe.skipIf(browserSkipReason())(suiteTitle('markup in predictions'), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;

  beforeAll(async () => {
    server = await serveStatic(builtAppDir());
    browser = await launchChromium();
    page = await browser.newPage();
    watch = watchPage(page);
    await page.goto(server.url);
    await waitForPhase(page, 'done');
    await page.getByTestId('preset').selectOption('hostile');
    await page.getByTestId('timeout').fill('2');
    await page.getByTestId('run').click();
    await waitForPhase(page, 'done');
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows <img onerror> and <script> in the predicted SQL as text', async () => {
    const item = page.locator(`li[data-index="${HOSTILE.markup}"]`);
    const sql = await item.getByTestId('pred-sql').textContent();
    expect(sql).toContain('<img src=x onerror=alert(1)>');
    expect(sql).toContain('<script>alert("pwned")</script>');
    // ...and in the result rows of the preview.
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
