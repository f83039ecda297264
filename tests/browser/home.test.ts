import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  browserSkipReason,
  gotoHash,
  suiteTitle,
  waitForDemo,
  watchPage,
  type PageWatch,
  type StaticServer,
} from './harness.ts';
import { closeAppAfter, openApp, screenshot } from './workbench-helpers.ts';

const GROUPS = ['Data', 'Runs and results', 'Generation', 'Rubrics', 'Analysis'];

/**
 * The first page and the grouped navigation, at a laptop's and a phone's width: what the
 * workbench is for, the three ways in, the journey's groups, keyboard use, and a deleted demo
 * offered again (never stored twice). Screenshots go to test-artifacts/ (home-*.png, nav-*.png).
 */
describe.skipIf(browserSkipReason())(suiteTitle('the first page and the grouped navigation'), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let phone: Page;
  let watch: PageWatch;
  let phoneWatch: PageWatch;
  let runId: string;

  beforeAll(async () => {
    ({ server, browser, page, watch } = await openApp({ viewport: { width: 1400, height: 1000 } }));
    await page.goto(server.url);
    runId = await waitForDemo(page);
    // Its own context, so its own storage: a first visit on a phone.
    phone = await (
      await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })
    ).newPage();
    phoneWatch = watchPage(phone);
    await phone.goto(server.url);
    await waitForDemo(phone);
  });

  closeAppAfter(() => ({ server, browser, watch }), { watches: () => [phoneWatch] });

  it('says what the workbench is for and offers the three ways in, above the demo run', async () => {
    const home = page.getByTestId('home');
    expect(await home.locator('h1').first().textContent()).toBe('Text-to-SQL evaluation workbench');
    const ways = home.getByRole('list', { name: 'Three ways in' }).getByRole('listitem');
    expect(await ways.count()).toBe(3);
    expect(await page.getByTestId('start-import').getAttribute('href')).toBe('#/datasets');
    expect(await page.getByTestId('start-generate').getAttribute('href')).toBe('#/generate');
    expect(await page.getByTestId('start-run').getAttribute('href')).toBe('#/runs');
    expect(await page.getByTestId('dashboard').getAttribute('data-run-id')).toBe(runId);
    await screenshot(page, 'home-1400x1000.png');
    await screenshot(page, 'home-1400x1000-full.png', true);
  });

  it('groups the navigation in the order of the journey, each group a labelled list of links', async () => {
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const label of GROUPS)
      expect(await nav.getByRole('list', { name: label, exact: true }).count(), label).toBe(1);
    expect(await nav.getByRole('list', { name: 'Data', exact: true }).getByRole('link').allTextContents()).toEqual([
      'Datasets',
    ]);
    expect(await nav.getByRole('list', { name: 'Analysis' }).getByRole('link').allTextContents()).toEqual([
      'RL',
      'Compare',
      'Reward hacking',
      'Playground',
    ]);
    // Every link is visible on a laptop, and the page shown is marked.
    await page.getByTestId('nav-runs').click();
    // The mark follows the route change (a render after the click), so it is waited for.
    await expect.poll(() => page.getByTestId('nav-runs').getAttribute('aria-current')).toBe('page');
    expect(
      await nav.getByRole('link').evaluateAll((links) => links.every((a) => (a as HTMLElement).offsetParent !== null)),
    ).toBe(true);
    await page.locator('header.bar').screenshot({
      path: await screenshot(page, 'nav-1400x1000.png').then((f) => f.replace('nav-1400x1000.png', 'nav-bar-1400.png')),
    });
    await gotoHash(page, '#/');
  });

  it('folds the navigation into a menu on a phone, opened and followed by keyboard', async () => {
    await screenshot(phone, 'home-390x844.png');
    await screenshot(phone, 'home-390x844-full.png', true);
    const nav = phone.getByRole('navigation', { name: 'Main' });
    const menu = phone.getByTestId('nav-menu');
    expect(await nav.isVisible()).toBe(false);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    // Nothing wider than the phone's screen.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await menu.focus();
    await phone.keyboard.press('Enter');
    // Each state follows a render after the key press (or the route change): waited for, not read at once.
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('true');
    expect(await nav.isVisible()).toBe(true);
    for (const label of GROUPS)
      expect(await nav.getByRole('list', { name: label, exact: true }).isVisible(), label).toBe(true);
    await screenshot(phone, 'nav-390x844.png');
    // The next Tab is the first group's link (Datasets); following it closes the menu and shows that screen.
    await phone.keyboard.press('Tab');
    expect(await phone.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('nav-datasets');
    await phone.keyboard.press('Enter');
    await phone.waitForURL(/#\/datasets$/);
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');
    await expect.poll(() => phone.getByRole('heading', { level: 1 }).first().textContent()).toContain('Datasets');
  });

  it('adds the demo once when two tabs open the first page at the same time', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    try {
      const [a, b] = await Promise.all([context.newPage(), context.newPage()]);
      const watches = [watchPage(a), watchPage(b)];
      await Promise.all([a.goto(server.url), b.goto(server.url)]);
      const [runA, runB] = await Promise.all([waitForDemo(a), waitForDemo(b)]);
      expect(runA).toBe(runB);
      await gotoHash(a, '#/runs');
      await a.getByTestId('run-list').locator('li[data-run-id]').first().waitFor();
      expect(await a.getByTestId('run-list').locator('li[data-run-id]').count()).toBe(1);
      await gotoHash(a, '#/datasets');
      await a.getByTestId('dataset-list').locator('li[data-dataset-id]').first().waitFor();
      expect(await a.getByTestId('dataset-list').locator('li[data-dataset-id]').count()).toBe(1);
      expect(watches.flatMap((w) => w.problems)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('offers a deleted demo again instead of adding it unasked, and adds it once', async () => {
    await gotoHash(page, '#/runs');
    const row = page.getByTestId('run-list').locator(`li[data-run-id="${runId}"]`);
    await row.getByTestId('delete-run').click();
    await row.getByTestId('delete-run-confirm').click();
    await row.waitFor({ state: 'detached' });
    await page.goto('about:blank');
    await page.goto(server.url);
    await page.locator('[data-testid="demo"][data-phase="absent"]').waitFor();
    expect(await page.getByTestId('dashboard').count()).toBe(0);
    await page.getByTestId('demo-add').click();
    const again = await waitForDemo(page);
    expect(again).not.toBe(runId);
    await gotoHash(page, '#/runs');
    await page.getByTestId('run-list').locator(`li[data-run-id="${again}"]`).waitFor();
    expect(await page.getByTestId('run-list').locator('li[data-run-id]').count()).toBe(1);
    // The dataset was still there: it was reused, not imported a second time.
    await gotoHash(page, '#/datasets');
    await page.getByTestId('dataset-list').locator('li[data-dataset-id]').first().waitFor();
    expect(await page.getByTestId('dataset-list').locator('li[data-dataset-id]').count()).toBe(1);
  });
});
