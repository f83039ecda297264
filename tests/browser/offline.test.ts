import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserSkipReason,
  builtAppDir,
  suiteTitle,
  waitForDemo,
  type PageWatch,
  type StaticServer,
} from './harness.ts';
import { cachedBytes, waitForServiceWorker } from './offline-helpers.ts';
import { closeAppAfter, officialCells, openApp, spiderGoldRun, startSpiderGoldRun } from './workbench-helpers.ts';

/**
 * Offline after one visit: the service worker precaches the app, its workers and sql.js's
 * WebAssembly; then, with the server stopped and the browser offline, the app reloads, shows a
 * stored run, evaluates a stored dataset again and adds and evaluates the demo.
 */
describe.skipIf(browserSkipReason())(suiteTitle('offline after one visit (service worker)'), () => {
  let server: StaticServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watch: PageWatch;
  let runId: string;
  let exTotal: string;
  let precache: Awaited<ReturnType<typeof cachedBytes>>;
  let offlineLoadMs = 0;

  beforeAll(async () => {
    ({ server, browser, page, watch } = await openApp({ viewport: { width: 1366, height: 768 } }));
    context = page.context();
    await page.goto(server.url + '#/datasets');
    await waitForServiceWorker(page);
    precache = await cachedBytes(page);

    ({ runId, exTotal } = await spiderGoldRun(page, 'online'));

    // Network off: the server is gone and the browser is offline.
    await server.close();
    await context.setOffline(true);
    // A full load (not a same-document hash change): from about:blank to the app.
    await page.goto('about:blank');
    const t0 = Date.now();
    await page.goto(server.url + '#/runs');
    await page.getByTestId('run-list').locator(`li[data-run-id="${runId}"]`).waitFor();
    offlineLoadMs = Date.now() - t0;
  }, 240_000);

  // Offline, the browser reports failed fetches nowhere else: any error here is a real one.
  // (The server was stopped by the test; closing it again is harmless.)
  closeAppAfter(() => ({ server, browser, watch }));
  afterAll(() => {
    process.stderr.write(
      `[offline] precache ${JSON.stringify(Object.fromEntries(Object.entries(precache ?? {}).map(([k, v]) => [k, { entries: v.entries, bytes: v.bytes }])))}; offline reload to the runs list ${offlineLoadMs} ms\n`,
    );
  });

  it('precaches the app shell, the worker bundles, sql.js and wllama WebAssembly and the demo, but not web-llm or source maps', () => {
    const name = Object.keys(precache).find((n) => n.startsWith('workbox-precache'))!;
    const urls = precache[name]!.urls;
    for (const re of [
      /\/index\.html$/,
      /\/assets\/index-[\w-]+\.js$/,
      /\/assets\/sql\.worker-[\w-]+\.js$/,
      /\/assets\/import\.worker-[\w-]+\.js$/,
      /\/assets\/sql-wasm-browser-[\w-]+\.wasm$/,
      /\/assets\/DashboardPage-[\w-]+\.js$/,
      /\/demo\/city_library\/city_library\.sqlite$/,
      /\/manifest\.webmanifest$/,
      /\/icons\/icon-512\.png$/,
    ]) {
      expect(
        urls.some((u) => re.test(u)),
        String(re),
      ).toBe(true);
    }
    expect(urls.some((u) => u.endsWith('.map'))).toBe(false);
    // wllama's WebAssembly and worker when the app bundles them; JavaScript over 2 MiB (web-llm) is cached on first use instead.
    const built = readdirSync(path.join(builtAppDir(), 'assets'));
    for (const f of built.filter((f) => /^wllama.*\.(wasm|js)$/.test(f) || /^sql-wasm.*\.wasm$/.test(f)))
      expect(urls, f).toContain(`/assets/${f}`);
    const big = built.filter(
      (f) => f.endsWith('.js') && statSync(path.join(builtAppDir(), 'assets', f)).size > 2 * 1024 * 1024,
    );
    for (const f of big) expect(urls, f).not.toContain(`/assets/${f}`);
    expect(precache[name]!.bytes).toBeLessThan(16 * 1024 * 1024);
  });

  it('reloads with the network off and lists the stored runs', async () => {
    expect(await page.evaluate(() => navigator.onLine)).toBe(false);
    expect(await page.evaluate(() => performance.getEntriesByType('navigation')[0]?.name)).toBe(server.url + '#/runs');
    expect(await page.getByTestId('run-list').locator('li[data-run-id]').count()).toBe(1);
  });

  it('opens the stored run offline, with the same scores', async () => {
    await page.goto(server.url + `#/run/${runId}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    expect((await officialCells(page)).ex!.total).toBe(exTotal);
  });

  it('opens the stored dataset and evaluates it again offline, in the sql.js workers, with the same result', async () => {
    await page.getByTestId('nav-datasets').click();
    await page.getByTestId('dataset-list').locator('li a').first().click();
    await page.getByTestId('dataset-card').getByTestId('db-table').waitFor();
    const run = await startSpiderGoldRun(page, 'Spider one db', 'offline');
    expect(run.error).toBeNull();
    expect(run.runId).not.toBe(runId);
    expect((await officialCells(page)).ex!.total).toBe(exTotal);
  });

  it('adds and evaluates the embedded demo offline, on its first visit to the first page', async () => {
    await page.goto(server.url + '#/');
    await waitForDemo(page);
    expect((await officialCells(page)).count!.total).toBe('20');
    expect(await page.getByTestId('run-title').textContent()).toBe('Demo model on the city library');
  });

  it('is installable: a manifest with a name, a start URL, standalone display and 192/512 px icons', async () => {
    const manifest = await page.evaluate(async () =>
      (await fetch(document.querySelector<HTMLLinkElement>('link[rel="manifest"]')!.href)).json(),
    );
    expect(manifest).toMatchObject({
      name: expect.any(String),
      short_name: expect.any(String),
      start_url: './',
      display: 'standalone',
    });
    const sizes = (manifest.icons as Array<{ sizes: string; purpose?: string }>).map((i) => i.sizes);
    expect(sizes).toEqual(expect.arrayContaining(['192x192', '512x512']));
    expect(manifest.icons.some((i: { purpose?: string }) => i.purpose === 'maskable')).toBe(true);
    expect(path.basename(manifest.icons[1].src)).toBe('icon-192.png');
  });
});
