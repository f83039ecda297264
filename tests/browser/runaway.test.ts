import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE } from '../../scripts/demo/predictions.ts';
import {
  browserSkipReason,
  builtAppDir,
  launchChromium,
  serveStatic,
  shownItems,
  suiteTitle,
  waitForPhase,
  watchPage,
  type PageWatch,
  type StaticServer,
} from './harness.ts';

/**
 * The hostile preset with a 2 s timeout: the recursive CTE that never ends must cost one
 * worker and one item, nothing else.
 */
describe.skipIf(browserSkipReason())(suiteTitle('a runaway query in the hostile predictions'), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  /** Longest main-thread stall (ms) measured in the page while the runaway item was running. */
  let tickedWhilePending = false;

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
    // While the runaway query spins in its worker, the page's own event loop must keep ticking.
    await page.waitForSelector(`li[data-index="${HOSTILE.runaway}"][data-status="pending"]`);
    // Ordering, not timing: the page's event loop runs five timer turns and the item is still
    // pending afterwards. On the main thread the query would hold the loop until its timeout
    // ended it, so no turn could run while it is pending.
    tickedWhilePending = await page.evaluate(async (index) => {
      for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
      return document.querySelector<HTMLElement>(`li[data-index="${index}"]`)?.dataset.status === 'pending';
    }, HOSTILE.runaway);
    await waitForPhase(page, 'done');
  });

  afterEach(() => {
    expect(watch.problems).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('marks the never-ending recursive CTE as a timeout with score 0', async () => {
    const item = page.locator(`li[data-index="${HOSTILE.runaway}"]`);
    await expect.poll(() => item.getAttribute('data-status')).toBe('timeout');
    expect(await item.getAttribute('data-ex')).toBe('0');
    expect(await item.getByTestId('pred-sql').textContent()).toContain('WITH RECURSIVE');
    expect(await item.getByTestId('error').textContent()).toBe('timed out after 2 s (prediction and gold together)');
  });

  it('evaluates the item after the runaway one normally, on a fresh worker', async () => {
    const next = page.locator(`li[data-index="${HOSTILE.runaway + 1}"]`);
    expect(await next.getAttribute('data-status')).toBe('ok');
    expect(await next.getAttribute('data-ex')).toBe('1');
    expect(await next.getByTestId('verdict').textContent()).toBe('right');
    // Every other item finished too, and only one timed out.
    const items = await shownItems(page);
    expect(items).toHaveLength(20);
    expect(items.filter((i) => i.status === 'timeout').map((i) => i.index)).toEqual([HOSTILE.runaway]);
    expect(items.every((i) => i.status !== 'pending')).toBe(true);
  });

  it('scores the DELETE as the official evaluator does, and flags that it wrote to the database', async () => {
    const item = page.locator(`li[data-index="${HOSTILE.deleteRows}"]`);
    expect(await item.getAttribute('data-mutated')).toBe('true');
    expect(await item.getAttribute('data-ex')).toBe('1');
    const flag = item.getByTestId('mutated-flag');
    expect(await flag.isVisible()).toBe(true);
    expect(await flag.textContent()).toContain('wrote to the database');
    expect(await page.getByTestId('mutated-warning').isVisible()).toBe(true);
    // The write stayed in its item: no other item saw a changed database.
    const items = await shownItems(page);
    expect(items.filter((i) => i.mutated).map((i) => i.index)).toEqual([HOSTILE.deleteRows]);
  });

  it('refuses two statements with the message of Python sqlite3', async () => {
    const item = page.locator(`li[data-index="${HOSTILE.twoStatements}"]`);
    expect(await item.getAttribute('data-status')).toBe('error');
    expect(await item.getByTestId('error').textContent()).toBe('prediction: You can only execute one statement at a time.');
    expect(await item.getAttribute('data-mutated')).toBe('false');
  });

  it('keeps the page responsive while a query runs away', async () => {
    // Run on the main thread, the query would freeze the page until its timeout.
    expect(tickedWhilePending).toBe(true);
    // One timeout, not one per worker or per item.
    expect(await page.locator('li[data-status="timeout"]').count()).toBe(1);
    // The controls still work after the run, and a read-only rerun turns the DELETE into an error.
    await page.getByTestId('read-only').check();
    await page.getByTestId('run').click();
    await waitForPhase(page, 'done');
    const item = page.locator(`li[data-index="${HOSTILE.deleteRows}"]`);
    expect(await item.getAttribute('data-status')).toBe('error');
    expect(await item.getAttribute('data-ex')).toBe('0');
    expect(await item.getByTestId('error').textContent()).toMatch(/read-?only/);
  });
});
