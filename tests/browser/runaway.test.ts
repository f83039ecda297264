import type { Browser, Page } from 'playwright-core';
import { closeAppAfter, openApp } from './workbench-helpers.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE } from '../../scripts/demo/predictions.ts';
import {
  browserSkipReason,
  openItem,
  runHostileDemo,
  shownItems,
  suiteTitle,
  waitForDemo,
  type PageWatch,
  type StaticServer,
} from './harness.ts';

/**
 * The demo's hostile predictions, evaluated from the first page with a 2 s timeout: the
 * recursive CTE that never ends must cost one worker and one item, nothing else.
 */
describe.skipIf(browserSkipReason())(suiteTitle('a runaway query in the hostile predictions'), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let runId: string;
  /** The page's event loop ran while the run was held up by the runaway query. */
  let tickedWhilePending = false;

  beforeAll(async () => {
    // Tall enough for the explorer's virtual list to render all 20 items.
    ({ server, browser, page, watch } = await openApp({ viewport: { width: 1400, height: 1800 } }));
    await page.goto(server.url);
    await waitForDemo(page);

    runId = await runHostileDemo(page, {
      timeoutS: 2,
      whileRunning: async () => {
        // While the runaway query spins in its worker (2 s), the page's own event loop must keep
        // ticking. Ordering, not timing: the page runs five timer turns and the run is still in
        // progress afterwards, with items left. On the main thread the query would hold the loop
        // until its timeout ended it, so no turn could run while it is pending.
        await page.getByTestId('run-progress').waitFor();
        tickedWhilePending = await page.evaluate(async () => {
          const left = () => {
            const done = Number(document.querySelector('[data-testid="run-done"]')?.textContent ?? NaN);
            return document.querySelector('[data-testid="run-progress"]') !== null && done < 20;
          };
          if (!left()) return false;
          for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
          return left();
        });
      },
    });
  });

  closeAppAfter(() => ({ server, browser, watch }));

  it('marks the never-ending recursive CTE as a timeout with score 0', async () => {
    const item = await openItem(page, runId, HOSTILE.runaway);
    expect(await item.getAttribute('data-status')).toBe('timeout');
    expect(await item.getAttribute('data-ex')).toBe('0');
    expect(await item.getByTestId('pred-sql').textContent()).toContain('WITH RECURSIVE');
    expect(await item.getByTestId('item-error').textContent()).toBe(
      'timed out after 2 s (prediction and gold together)',
    );
  });

  it('evaluates the item after the runaway one normally, on a fresh worker', async () => {
    const items = await shownItems(page, runId);
    const next = items.find((i) => i.index === HOSTILE.runaway + 1)!;
    expect(next).toMatchObject({ status: 'ok', ex: '1', verdict: 'right' });
    // Every other item finished too, and only one timed out.
    expect(items).toHaveLength(20);
    expect(items.filter((i) => i.status === 'timeout').map((i) => i.index)).toEqual([HOSTILE.runaway]);
    expect(items.every((i) => i.status !== 'pending' && i.status !== '')).toBe(true);
  });

  it('scores the DELETE as the official evaluator does, and flags that it wrote to the database', async () => {
    const item = await openItem(page, runId, HOSTILE.deleteRows);
    expect(await item.getAttribute('data-mutated')).toBe('true');
    expect(await item.getAttribute('data-ex')).toBe('1');
    const flag = item.getByTestId('mutated-flag');
    expect(await flag.isVisible()).toBe(true);
    expect(await flag.textContent()).toContain('modified the database');
    // The write stayed in its item: no other item saw a changed database.
    const items = await shownItems(page, runId);
    expect(items.filter((i) => i.mutated).map((i) => i.index)).toEqual([HOSTILE.deleteRows]);
    // The dashboard counts it and warns.
    await page.goto(server.url + `#/run/${runId}`);
    await page.locator(`[data-testid="dashboard"][data-loaded="true"][data-run-id="${runId}"]`).waitFor();
    expect(await page.locator('[data-testid="counts"] [data-count="modified"]').textContent()).toBe('1');
    expect(await page.getByTestId('dashboard').textContent()).toContain(
      'changed the database before the gold query ran',
    );
  });

  it('refuses two statements with the message of Python sqlite3', async () => {
    const item = await openItem(page, runId, HOSTILE.twoStatements);
    expect(await item.getAttribute('data-status')).toBe('error');
    expect(await item.getByTestId('item-error').textContent()).toBe(
      'prediction: You can only execute one statement at a time.',
    );
    expect(await item.getAttribute('data-mutated')).toBe('false');
  });

  it('keeps the page responsive while a query runs away', async () => {
    // Run on the main thread, the query would freeze the page until its timeout.
    expect(tickedWhilePending).toBe(true);
    // The first page still works after the run, and a read-only run turns the DELETE into an error.
    const readOnlyRun = await runHostileDemo(page, { timeoutS: 2, readOnly: true });
    expect(readOnlyRun).not.toBe(runId);
    const item = await openItem(page, readOnlyRun, HOSTILE.deleteRows);
    expect(await item.getAttribute('data-status')).toBe('error');
    expect(await item.getAttribute('data-ex')).toBe('0');
    expect(await item.getByTestId('item-error').textContent()).toMatch(/read-?only/);
    // Both hostile runs are listed on the first page.
    await page.goto(server.url + '#/');
    await page.getByTestId('hostile').locator('li').nth(1).waitFor();
    expect(await page.getByTestId('hostile').locator('li').count()).toBe(2);
  });

  it('names the item a quiet progress bar waits for: the runaway query, its database and for how long', async () => {
    let slow = '';
    const run = await runHostileDemo(page, {
      timeoutS: 6,
      whileRunning: async () => {
        // Shown once an item has run for 3 s, or at once when it is all the run waits for
        // (the slow item holding the tail is named): read it until it says 3 s or more, which only
        // the runaway query (6 s timeout) reaches.
        const line = page.getByTestId('run-slow');
        await line.waitFor({ timeout: 30_000 });
        const until = Date.now() + 20_000;
        do {
          slow = (await line.textContent({ timeout: 5_000 }).catch(() => slow))?.replace(/\s+/g, ' ').trim() ?? '';
          if (Number(/for (\d+) s$/.exec(slow)?.[1] ?? 0) >= 3) break;
          await page.waitForTimeout(250);
        } while (Date.now() < until);
      },
    });
    const m = /^· running item #(\d+)(?: s\d+)? \((\w+)\) for (\d+) s$/.exec(slow);
    expect(m, slow).not.toBeNull();
    expect(Number(m![3])).toBeGreaterThanOrEqual(3);
    const item = await openItem(page, run, HOSTILE.runaway);
    expect(await item.getAttribute('data-status')).toBe('timeout');
    expect(await item.locator('h2').textContent()).toContain(`Question ${m![1]}`);
    expect(await item.locator('h2').textContent()).toContain(m![2]);
  });
});
