import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, builtAppDir, launchChromium, serveStatic, suiteTitle, watchPage, type PageWatch, type StaticServer } from './harness.ts';
import { spiderOneDbFolder, waitForServiceWorker } from './offline-helpers.ts';
import { importDataset, officialCells, startRun } from './workbench-helpers.ts';

interface Logged {
  source: 'page' | 'context' | 'service-worker' | 'worker-cdp';
  url: string;
}

/**
 * Every request the browser makes while the app evaluates a replay run, seen three ways: the
 * page's requests (Playwright), the context's (which include the service worker's own fetches),
 * and the Network domain of each Web Worker through the Chrome DevTools Protocol (a worker's
 * fetch of its WebAssembly, for instance). None may leave the app's origin.
 */
class RequestLog {
  readonly entries: Logged[] = [];
  /** Everything since attach, never cleared: a worker started before the run logged there. */
  readonly all: Logged[] = [];
  private cdp: CDPSession | null = null;
  private nextId = 1;

  async attach(context: BrowserContext, page: Page): Promise<void> {
    page.on('request', (r) => this.push({ source: 'page', url: r.url() }));
    context.on('request', (r) => this.push({ source: r.serviceWorker() ? 'service-worker' : 'context', url: r.url() }));
    // Workers are child targets of the page: attach to each (non-flat sessions) and enable its Network domain.
    this.cdp = await context.newCDPSession(page);
    this.cdp.on('Target.attachedToTarget', (e: { sessionId: string; targetInfo: { type: string } }) => {
      void this.cdp!.send('Target.sendMessageToTarget', { sessionId: e.sessionId, message: JSON.stringify({ id: this.nextId++, method: 'Network.enable' }) }).catch(() => undefined);
      void this.cdp!.send('Target.sendMessageToTarget', { sessionId: e.sessionId, message: JSON.stringify({ id: this.nextId++, method: 'Runtime.runIfWaitingForDebugger' }) }).catch(() => undefined);
    });
    this.cdp.on('Target.receivedMessageFromTarget', (e: { message: string }) => {
      const msg = JSON.parse(e.message) as { method?: string; params?: { request?: { url: string } } };
      if (msg.method === 'Network.requestWillBeSent' && msg.params?.request) this.push({ source: 'worker-cdp', url: msg.params.request.url });
    });
    await this.cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: false });
  }

  private push(e: Logged): void {
    this.entries.push(e);
    this.all.push(e);
  }

  clear(): void {
    this.entries.length = 0;
  }
}

describe.skipIf(browserSkipReason())(suiteTitle('no request leaves the origin during a replay evaluation'), () => {
  let server: StaticServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watch: PageWatch;
  const log = new RequestLog();
  let during: Logged[] = [];
  let serverDuring: string[] = [];
  let origin: string;

  beforeAll(async () => {
    server = await serveStatic(builtAppDir());
    origin = new URL(server.url).origin;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    page = await context.newPage();
    watch = watchPage(page);
    await log.attach(context, page);
    await page.goto(server.url + '#/datasets');
    await waitForServiceWorker(page);
    expect((await importDataset(page, { kind: 'spider', name: 'Spider one db', folder: spiderOneDbFolder() })).ok).toBe(true);

    log.clear();
    const before = server.requests.length;
    const run = await startRun(page, { datasetName: 'Spider one db', predictions: sharedData('spider', 'dev_gold.sql'), name: 'replay', onlyStored: true });
    expect(run.error).toBeNull();
    expect(Number((await officialCells(page)).count!.total)).toBeGreaterThan(0);
    during = [...log.entries];
    serverDuring = server.requests.slice(before);
  }, 180_000);

  afterEach(() => {
    expect(watch.problems).toEqual([]);
  });

  afterAll(async () => {
    process.stderr.write(`[traffic] ${during.length} requests logged during the evaluation: ${JSON.stringify([...new Set(during.map((e) => `${e.source} ${new URL(e.url).pathname}`))])}\n`);
    await browser?.close();
    await server?.close();
  });

  it('logs the workers’ own requests, so the log can see them (the SQL worker fetching its WebAssembly)', () => {
    // Over the whole session: the app may have started its SQL workers before the run began.
    expect(log.all.some((e) => e.source === 'worker-cdp' && /\/assets\/sql-wasm-browser-[\w-]+\.wasm$/.test(e.url))).toBe(true);
    expect(log.all.some((e) => /\/assets\/sql\.worker-[\w-]+\.js$/.test(e.url))).toBe(true);
  });

  it('every request of the page, its workers and the service worker stays on the app’s origin', () => {
    const outside = during.filter((e) => !e.url.startsWith('blob:') && !e.url.startsWith('data:') && new URL(e.url).origin !== origin);
    expect(outside).toEqual([]);
  });

  it('the service worker served the whole evaluation from its cache: the server saw only its update checks', () => {
    // Starting a Web Worker makes the browser check for a new service worker (a same-origin
    // fetch of sw.js and its Workbox runtime); every file of the app itself came from the cache.
    expect(serverDuring.filter((p) => p !== '/sw.js' && !/^\/workbox-[\w-]+\.js$/.test(p))).toEqual([]);
  });
});
