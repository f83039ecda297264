import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.ts';
import { browserSkipReason, suiteTitle, type PageWatch, type StaticServer } from './harness.ts';
import { spiderOneDbFolder, waitForServiceWorker } from './offline-helpers.ts';
import { closeAppAfter, importDataset, officialCells, openApp, startSpiderGoldRun } from './workbench-helpers.ts';

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
      void this.cdp!.send('Target.sendMessageToTarget', {
        sessionId: e.sessionId,
        message: JSON.stringify({ id: this.nextId++, method: 'Network.enable' }),
      }).catch(() => undefined);
      void this.cdp!.send('Target.sendMessageToTarget', {
        sessionId: e.sessionId,
        message: JSON.stringify({ id: this.nextId++, method: 'Runtime.runIfWaitingForDebugger' }),
      }).catch(() => undefined);
    });
    this.cdp.on('Target.receivedMessageFromTarget', (e: { message: string }) => {
      const msg = JSON.parse(e.message) as { method?: string; params?: { request?: { url: string } } };
      if (msg.method === 'Network.requestWillBeSent' && msg.params?.request)
        this.push({ source: 'worker-cdp', url: msg.params.request.url });
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
    ({ server, browser, page, watch } = await openApp());
    origin = new URL(server.url).origin;
    context = page.context();
    await log.attach(context, page);
    await page.goto(server.url + '#/datasets');
    await waitForServiceWorker(page);
    expect((await importDataset(page, { kind: 'spider', name: 'Spider one db', folder: spiderOneDbFolder() })).ok).toBe(
      true,
    );

    log.clear();
    const before = server.requests.length;
    const run = await startSpiderGoldRun(page, 'Spider one db', 'replay');
    expect(run.error).toBeNull();
    expect(Number((await officialCells(page)).count!.total)).toBeGreaterThan(0);
    during = [...log.entries];
    serverDuring = server.requests.slice(before);
  }, 180_000);

  closeAppAfter(() => ({ server, browser, watch }));
  afterAll(() => {
    process.stderr.write(
      `[traffic] ${during.length} requests logged during the evaluation: ${JSON.stringify([...new Set(during.map((e) => `${e.source} ${new URL(e.url).pathname}`))])}\n`,
    );
  });

  it('logs the workers’ own requests, so the log can see them (the SQL worker fetching its WebAssembly)', () => {
    // Over the whole session: the app may have started its SQL workers before the run began.
    expect(
      log.all.some((e) => e.source === 'worker-cdp' && /\/assets\/sql-wasm-browser-[\w-]+\.wasm$/.test(e.url)),
    ).toBe(true);
    expect(log.all.some((e) => /\/assets\/sql\.worker-[\w-]+\.js$/.test(e.url))).toBe(true);
  });

  it('every request of the page, its workers and the service worker stays on the app’s origin', () => {
    const outside = during.filter(
      (e) => !e.url.startsWith('blob:') && !e.url.startsWith('data:') && new URL(e.url).origin !== origin,
    );
    expect(outside).toEqual([]);
  });

  it('the service worker served the whole evaluation from its cache: the server saw only its update checks', () => {
    // Starting a Web Worker makes the browser check for a new service worker (a same-origin
    // fetch of sw.js and its Workbox runtime); every file of the app itself came from the cache.
    expect(serverDuring.filter((p) => p !== '/sw.js' && !/^\/workbox-[\w-]+\.js$/.test(p))).toEqual([]);
  });
});

/**
 * A TEST DOUBLE FOR A MODEL: the tests' loopback OpenAI server on its own port (so its own
 * origin), answering every chat completion with the same canned SQL (n choices when asked). It
 * records each request it receives, and allows the app's origin by CORS as a real server must.
 */
const CANNED_MODEL = 'canned-sql-test-double';
const CANNED_ANSWER = 'Here is the query:\n```sql\nSELECT count(*) FROM singer\n```';

const startCannedModelServer = (): Promise<OpenAiServer> =>
  startOpenAiServer({
    models: [{ id: CANNED_MODEL, object: 'model', max_model_len: 8192 }],
    tokenize: false,
    streams: false,
    usage: (n) => ({ prompt_tokens: 100, completion_tokens: 12 * n }),
    text: () => CANNED_ANSWER,
  });

describe.skipIf(browserSkipReason())(
  suiteTitle(
    'no request leaves the origin or the configured endpoint during a generation run (OpenAI-compatible engine on a canned-completions test double for a model)',
  ),
  () => {
    let server: StaticServer;
    let model: OpenAiServer;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let watch: PageWatch;
    const log = new RequestLog();
    let during: Logged[] = [];
    let serverDuring: string[] = [];
    let origin: string;
    let endpointOrigin: string;

    beforeAll(async () => {
      model = await startCannedModelServer();
      ({ server, browser, page, watch } = await openApp());
      origin = new URL(server.url).origin;
      endpointOrigin = new URL(model.url).origin;
      expect(endpointOrigin).not.toBe(origin);
      context = page.context();
      await log.attach(context, page);
      await page.goto(server.url + '#/datasets');
      await waitForServiceWorker(page);
      expect(
        (await importDataset(page, { kind: 'spider', name: 'Spider one db', folder: spiderOneDbFolder() })).ok,
      ).toBe(true);

      // From choosing the engine to the finished run's dashboard.
      log.clear();
      const before = server.requests.length;
      await page.getByTestId('nav-generate').click();
      await page.getByTestId('generate-page').waitFor();
      await page.locator('input[name="engine"][value="openai"]').check();
      await page.getByTestId('openai-url').fill(model.url);
      await page.getByTestId('openai-model').fill(CANNED_MODEL);
      await page.getByTestId('engine-load').click();
      await page
        .getByTestId('engine-loaded')
        .filter({ hasText: `openai · ${CANNED_MODEL}` })
        .waitFor({ timeout: 30_000 });
      await page.getByTestId('gen-subset').selectOption('first');
      await page.getByTestId('gen-first-n').fill('5');
      await page.getByTestId('gen-n').fill('2');
      await page.getByTestId('gen-name').fill('canned generation');
      await page.getByTestId('gen-start').click();
      await page.waitForURL(/#\/run\/[^/]+$/, { timeout: 120_000 });
      await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
      during = [...log.entries];
      serverDuring = server.requests.slice(before);
    }, 180_000);

    closeAppAfter(() => ({ server, browser, watch }));
    afterAll(async () => {
      process.stderr.write(
        `[traffic] ${during.length} requests logged during the generation run: ${JSON.stringify([...new Set(during.map((e) => `${e.source} ${e.url.startsWith(origin) ? '' : new URL(e.url).origin}${new URL(e.url).pathname}`))])}\n`,
      );
      await model?.close();
    });

    it('the run was generated by the configured endpoint: it received the model check and one completion request per question', () => {
      expect(model.requests.filter((r) => r.method === 'GET').map((r) => r.path)).toEqual(['/v1/models']);
      expect(model.requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(
        Array(5).fill('/v1/chat/completions'),
      );
      expect(model.requests.every((r) => ['/v1/models', '/v1/chat/completions'].includes(r.path))).toBe(true);
      // The log sees those cross-origin requests too: it would see any other.
      expect(during.some((e) => e.url === `${model.url}/v1/chat/completions`)).toBe(true);
    });

    it('every request of the page, its workers and the service worker goes to the app’s origin or the configured endpoint', () => {
      const outside = during.filter(
        (e) =>
          !e.url.startsWith('blob:') &&
          !e.url.startsWith('data:') &&
          ![origin, endpointOrigin].includes(new URL(e.url).origin),
      );
      expect(outside).toEqual([]);
      const toEndpoint = during
        .filter((e) => new URL(e.url).origin === endpointOrigin)
        .map((e) => new URL(e.url).pathname);
      expect([...new Set(toEndpoint)].sort()).toEqual(['/v1/chat/completions', '/v1/models']);
    });

    it('the app itself came from the service worker’s cache: the app’s server saw only its update checks', () => {
      expect(serverDuring.filter((p) => p !== '/sw.js' && !/^\/workbox-[\w-]+\.js$/.test(p))).toEqual([]);
    });
  },
);
