import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import type { Summary } from '../../src/core/eval/summary.ts';
import type { ItemResult } from '../../src/core/types.ts';
import {
  browserSkipReason,
  builtAppDir,
  launchChromium,
  serveStatic,
  shownItems,
  shownSummary,
  suiteTitle,
  waitForPhase,
  watchPage,
  type PageWatch,
  type StaticServer,
} from './harness.ts';
import { evaluateDemoInNode } from './node-reference.ts';

describe.skipIf(browserSkipReason())(suiteTitle('the demo page, built and served'), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let node: { results: ItemResult[]; summary: Summary };
  const wasmRequests: string[] = [];

  beforeAll(async () => {
    server = await serveStatic(builtAppDir());
    const reference = evaluateDemoInNode('predictions.json', { timeoutS: 30 });
    browser = await launchChromium();
    page = await browser.newPage();
    watch = watchPage(page);
    page.on('request', (req) => {
      if (req.url().endsWith('.wasm')) wasmRequests.push(req.url());
    });
    await page.goto(server.url);
    await waitForPhase(page, 'done');
    node = await reference;
  });

  afterEach(() => {
    expect(watch.problems).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('runs the demo model on load and shows every item', async () => {
    const items = await shownItems(page);
    expect(items.map((i) => i.index)).toEqual(node.results.map((r) => r.index));
    expect(items.length).toBe(20);
    expect(await page.locator('[data-testid="preset"]').inputValue()).toBe('model');
  });

  it('shows the same verdict, status and write flag as the Node evaluation, item by item', async () => {
    const shown = await shownItems(page);
    const expected = node.results.map((r) => ({
      index: r.index,
      status: r.status,
      ex: String(r.ex),
      mutated: r.mutatedDb,
      verdict: r.ex === 1 ? 'right' : 'wrong',
    }));
    expect(shown).toEqual(expected);
    // The demo is meant to contain both kinds of verdict and at least one SQLite error.
    expect(new Set(shown.map((s) => s.verdict))).toEqual(new Set(['right', 'wrong']));
    expect(shown.some((s) => s.status === 'error')).toBe(true);
  });

  it("shows SQLite's message for the item that fails to parse", async () => {
    const failed = node.results.filter((r) => r.status === 'error');
    for (const r of failed) {
      const text = await page.locator(`li[data-index="${r.index}"] [data-testid="error"]`).textContent();
      expect(text).toBe(r.error);
    }
  });

  it('shows the summary table of the Node summary, formatted like the official printout', async () => {
    const cells = await shownSummary(page);
    const expected: Record<string, Record<string, string>> = { count: {}, ex: {}, 'soft-f1': {} };
    for (const col of ['simple', 'moderate', 'challenging', 'total'] as const) {
      const b = node.summary.byDifficulty[col]!;
      expected.count![col] = String(b.count);
      expected.ex![col] = formatFixed2(b.ex!);
      expected['soft-f1']![col] = formatFixed2(b.softF1!);
    }
    expect(cells).toEqual(expected);
    expect(cells.ex!.total).toBe('65.00');
  });

  it('shows row previews of at most 5 rows', async () => {
    // Question 13 (members who borrowed in March 2024) has more than 5 rows on both sides.
    const item = page.locator('li[data-index="13"]');
    expect(await item.locator('table.rows').count()).toBe(2);
    expect(await item.locator('table.rows').first().locator('tbody tr').count()).toBe(5);
    expect(await item.textContent()).toContain('first 5 of 8 rows');
  });

  it('evaluated in Web Workers running sql.js', async () => {
    expect(watch.workers.some((url) => /\/assets\/sql\.worker-[\w-]+\.js$/.test(url))).toBe(true);
    expect(wasmRequests.some((url) => /\/assets\/sql-wasm-browser-[\w-]+\.wasm$/.test(url))).toBe(true);
    const diag = await page.evaluate(() => {
      const w = window.__workbench!;
      return { phase: w.phase, workers: w.workers, done: w.done, total: w.total };
    });
    expect(diag).toMatchObject({ phase: 'done', done: 20, total: 20 });
    expect(diag.workers).toBeGreaterThanOrEqual(1);
    expect(await page.getByTestId('engine-note').textContent()).toContain('Web Worker');
    // The diagnostic object cannot be replaced or changed by page scripts.
    const tampered = await page.evaluate(() => {
      try {
        (window as unknown as { __workbench: unknown }).__workbench = { phase: 'x' };
      } catch {
        // strict-mode assignment to a read-only property throws; either way it must not stick
      }
      return window.__workbench!.phase;
    });
    expect(tampered).toBe('done');
  });

  it('loaded only its own files, from relative URLs under the served folder', async () => {
    expect(server.requests).toContain('/demo/gold.sql');
    expect(server.requests).toContain('/demo/city_library/city_library.sqlite');
    expect(server.requests).not.toContain('/favicon.ico');
  });
});
