import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import type { Summary } from '../../src/core/eval/summary.ts';
import type { ItemResult } from '../../src/core/types.ts';
import {
  browserSkipReason,
  gotoHash,
  openItem,
  shownItems,
  suiteTitle,
  waitForDemo,
  type PageWatch,
  type StaticServer,
} from './harness.ts';
import { evaluateDemoInNode } from './node-reference.ts';
import { closeAppAfter, officialCells, openApp } from './workbench-helpers.ts';

/**
 * The first page: the embedded demo becomes a stored dataset and a replay run of its demo model
 * on the first visit, shown on the workbench's own dashboard and item explorer, and checked item
 * by item against the same files evaluated in Node.
 */
describe.skipIf(browserSkipReason())(suiteTitle('the demo on the first page, built and served'), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let node: { results: ItemResult[]; summary: Summary };
  let runId: string;
  /** Load to the demo's dashboard: first visit (import + run) and a later one (found), reported, not asserted. */
  let firstVisitMs = 0;
  let laterVisitMs = 0;
  const wasmRequests: string[] = [];

  beforeAll(async () => {
    const reference = evaluateDemoInNode('predictions.json', { timeoutS: 30 });
    // Tall enough for the explorer's virtual list to render all 20 items.
    ({ server, browser, page, watch } = await openApp({ viewport: { width: 1400, height: 1800 } }));
    page.on('request', (req) => {
      if (req.url().endsWith('.wasm')) wasmRequests.push(req.url());
    });
    const t0 = Date.now();
    await page.goto(server.url);
    runId = await waitForDemo(page);
    firstVisitMs = Date.now() - t0;
    node = await reference;
  });

  closeAppAfter(() => ({ server, browser, watch }));
  afterAll(() => {
    process.stderr.write(
      `[demo] load to the demo dashboard: first visit ${firstVisitMs} ms, later visit ${laterVisitMs} ms\n`,
    );
  });

  it('stores the demo as a dataset and a run of the demo model on the first visit, and shows its dashboard', async () => {
    expect(await page.getByTestId('run-title').textContent()).toBe('Demo model on the city library');
    expect(await page.getByTestId('dashboard').textContent()).toContain('predictions predictions.json');
    await gotoHash(page, '#/runs');
    await page.getByTestId('run-list').locator(`li[data-run-id="${runId}"]`).waitFor();
    expect(await page.getByTestId('run-list').locator('li[data-run-id]').count()).toBe(1);
    await gotoHash(page, '#/datasets');
    await page.getByTestId('dataset-list').locator('li[data-dataset-id]', { hasText: 'City library (demo)' }).waitFor();
    expect(await page.getByTestId('dataset-list').locator('li[data-dataset-id]').count()).toBe(1);
  });

  it('shows every item in the explorer with the same verdict, status and write flag as the Node evaluation', async () => {
    const shown = await shownItems(page, runId);
    const expected = node.results.map((r) => ({
      index: r.index,
      status: r.status,
      ex: String(r.ex),
      mutated: r.mutatedDb,
      // The explorer names a failed query by its status, a scored one by its verdict.
      verdict: r.status === 'ok' ? (r.ex === 1 ? 'right' : 'wrong') : r.status,
    }));
    expect(shown).toHaveLength(20);
    expect(shown).toEqual(expected);
    // The demo is meant to contain both kinds of verdict and at least one SQLite error.
    expect(new Set(shown.map((s) => s.verdict))).toEqual(new Set(['right', 'wrong', 'error']));
  });

  it("shows SQLite's message for the item that fails to parse", async () => {
    const failed = node.results.filter((r) => r.status === 'error');
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) {
      const detail = await openItem(page, runId, r.index);
      expect(await detail.getByTestId('item-error').textContent()).toBe(r.error);
      expect(await detail.getByTestId('item-status').textContent()).toBe('error');
    }
  });

  it('shows the official table of the Node summary on the first page, formatted like the official printout', async () => {
    await gotoHash(page, '#/');
    await waitForDemo(page);
    const cells = await officialCells(page);
    const expected: Record<string, Record<string, string>> = { count: {}, ex: {}, 'soft-f1': {} };
    for (const col of ['simple', 'moderate', 'challenging', 'total'] as const) {
      const b = node.summary.byDifficulty[col]!;
      expected.count![col] = String(b.count);
      expected.ex![col] = formatFixed2(b.ex!);
      expected['soft-f1']![col] = formatFixed2(b.softF1!);
    }
    expect(cells).toEqual(expected);
    expect(cells.ex!.total).toBe('65.00');
    expect(await page.locator('[data-testid="counts"] [data-count="error"]').textContent()).toBe(
      String(node.summary.statusCounts.error),
    );
  });

  it('shows both result tables of an item, with the row counts of the Node evaluation', async () => {
    // Question 13 (members who borrowed in March 2024) has more than 5 rows on both sides.
    const r = node.results.find((x) => x.index === 13)!;
    expect(r.predRowCount).toBeGreaterThan(5);
    const detail = await openItem(page, runId, 13);
    await detail.getByTestId('pred-rows').locator('tbody tr').first().waitFor();
    expect(await detail.locator('table.rows').count()).toBe(2);
    expect(await detail.getByTestId('pred-rows').getAttribute('data-row-count')).toBe(String(r.predRowCount));
    expect(await detail.getByTestId('gold-rows').getAttribute('data-row-count')).toBe(String(r.goldRowCount));
    expect(await detail.getByTestId('pred-rows').locator('tbody tr').count()).toBe(r.predRowCount);
  });

  it('evaluated in Web Workers running sql.js', async () => {
    expect(watch.workers.some((url) => /\/assets\/sql\.worker-[\w-]+\.js$/.test(url))).toBe(true);
    expect(wasmRequests.some((url) => /\/assets\/sql-wasm-browser-[\w-]+\.wasm$/.test(url))).toBe(true);
    await gotoHash(page, `#/run/${runId}`);
    await page.locator(`[data-testid="dashboard"][data-loaded="true"][data-run-id="${runId}"]`).waitFor();
    expect(await page.getByTestId('dashboard').textContent()).toContain('sql.js in Web Workers');
  });

  it('finds the stored demo on a later visit instead of adding it again', async () => {
    // A full load of the first page (not a hash change).
    await page.goto('about:blank');
    const t0 = Date.now();
    await page.goto(server.url);
    expect(await waitForDemo(page)).toBe(runId);
    laterVisitMs = Date.now() - t0;
    await gotoHash(page, '#/runs');
    await page.getByTestId('run-list').locator(`li[data-run-id="${runId}"]`).waitFor();
    expect(await page.getByTestId('run-list').locator('li[data-run-id]').count()).toBe(1);
    await gotoHash(page, '#/datasets');
    await page.getByTestId('dataset-list').locator('li[data-dataset-id]').first().waitFor();
    expect(await page.getByTestId('dataset-list').locator('li[data-dataset-id]').count()).toBe(1);
  });

  it('loaded only its own files, from relative URLs under the served folder', async () => {
    expect(server.requests).toContain('/demo/gold.sql');
    expect(server.requests).toContain('/demo/city_library/city_library.sqlite');
    expect(server.requests).not.toContain('/favicon.ico');
  });
});
