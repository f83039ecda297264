/**
 * Browser test harness: serves the built app over HTTP on 127.0.0.1 and drives Debian's
 * headless Chromium with playwright-core. Page errors, console errors and dialogs are
 * collected, and the tests fail on them.
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium-flags.ts';
import { serveLoopback } from './loopback-http.ts';

export { CHROMIUM_PATH };

/**
 * Why the browser tests cannot run here, or null when they can. A missing Chromium skips them
 * on a development machine; under CI it does not (launching then fails with a clear error).
 */
export function browserSkipReason(): string | null {
  if (existsSync(CHROMIUM_PATH) || process.env.CI) return null;
  return `${CHROMIUM_PATH} not found (apt-get install -y chromium); browser tests are skipped outside CI`;
}

/** A describe-block title that says why it was skipped. */
export function suiteTitle(title: string): string {
  const reason = browserSkipReason();
  return reason ? `${title} (skipped: ${reason})` : title;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}, and CI is set, so the browser tests cannot be skipped: apt-get install -y chromium`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
  });
}

/** The folder built by global-setup.ts. */
export function builtAppDir(): string {
  const { dir, error } = inject('browserDist');
  if (error) throw new Error(`the app could not be built for the browser tests: ${error}`);
  if (!dir) throw new Error('no built app: tests/browser/global-setup.ts must be registered as a Vitest globalSetup');
  return dir;
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.sql': 'text/plain; charset=utf-8',
  '.sqlite': 'application/vnd.sqlite3',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.jsonl': 'application/jsonl; charset=utf-8',
};

export interface StaticServer {
  /** Base URL ending in '/'. */
  url: string;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** A static file server for `root` on 127.0.0.1 and a free port. GET and HEAD only; `headers` go on every file. */
export async function serveStatic(root: string, headers: Record<string, string> = {}): Promise<StaticServer> {
  const base = path.resolve(root);
  const requests: string[] = [];
  const server = await serveLoopback(
    async (req, res, url) => {
      let file = path.resolve(base, '.' + decodeURIComponent(url.pathname));
      if (file !== base && !file.startsWith(base + path.sep)) {
        res.writeHead(403).end();
        return;
      }
      const info = await stat(file).catch(() => null);
      if (info?.isDirectory()) file = path.join(file, 'index.html');
      const body = await readFile(file).catch(() => null);
      if (!body) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`not found: ${url.pathname}`);
        return;
      }
      res.writeHead(200, {
        'Content-Type': MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': body.length,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
        ...headers,
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
    (url) => requests.push(url.pathname),
  );
  return { ...server, requests };
}

export interface PageWatch {
  /** Uncaught exceptions, console errors, dialogs and crashes, in order. */
  problems: string[];
  dialogs: string[];
  /** URLs of the Web Workers the page started. */
  workers: string[];
}

/** Starts collecting what must never happen on a page. Dialogs are recorded and dismissed. */
export function watchPage(page: Page): PageWatch {
  const watch: PageWatch = { problems: [], dialogs: [], workers: [] };
  page.on('pageerror', (err) => watch.problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') watch.problems.push(`console error: ${msg.text()}`);
  });
  page.on('dialog', (dialog) => {
    watch.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    watch.problems.push(`dialog opened: ${dialog.type()} ${JSON.stringify(dialog.message())}`);
    void dialog.dismiss().catch(() => undefined);
  });
  page.on('crash', () => watch.problems.push('the page crashed'));
  page.on('worker', (worker) => watch.workers.push(worker.url()));
  return watch;
}

/**
 * Waits until the first page shows the embedded demo's run, evaluated and stored, on its
 * dashboard; resolves with the run's id.
 */
export async function waitForDemo(page: Page, timeoutMs = 90_000): Promise<string> {
  await page.waitForSelector('[data-testid="demo"][data-phase="done"] [data-testid="dashboard"][data-loaded="true"]', {
    timeout: timeoutMs,
  });
  const runId = await page.getByTestId('dashboard').getAttribute('data-run-id');
  if (!runId) throw new Error('the demo dashboard names no run');
  return runId;
}

/** Goes to a route of the app by its hash (a same-document navigation, as a link does). */
export async function gotoHash(page: Page, hash: string): Promise<void> {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
}

/** What the item explorer's list says about each item, by index. */
export interface ShownItem {
  index: number;
  status: string;
  ex: string;
  mutated: boolean;
  verdict: string;
}

/**
 * Opens the run's item explorer and reads every row of its list. The list is virtual: the page
 * must be tall enough to render every row (20 demo items need about 1,200 px).
 */
export async function shownItems(page: Page, runId: string): Promise<ShownItem[]> {
  await gotoHash(page, `#/run/${encodeURIComponent(runId)}/items`);
  await page.waitForSelector('[data-testid="explorer"][data-complete="true"] [role="option"][data-index]');
  const items = await page.$$eval('[data-testid="item-list"] [role="option"][data-index]', (els) =>
    els.map((el) => {
      const e = el as HTMLElement;
      return {
        index: Number(e.dataset.index),
        status: e.dataset.status ?? '',
        ex: e.dataset.ex ?? '',
        mutated: e.dataset.mutated === 'true',
        verdict: e.querySelector('[data-testid="verdict"]')?.textContent?.trim() ?? '',
      };
    }),
  );
  return items.sort((a, b) => a.index - b.index);
}

/** Opens one item (sample 0) in the explorer and resolves with its detail pane. */
export async function openItem(page: Page, runId: string, index: number): Promise<Locator> {
  await gotoHash(page, `#/run/${encodeURIComponent(runId)}/items/${index}.0`);
  const detail = page.locator(`[data-testid="item-detail"][data-index="${index}"]`);
  await detail.waitFor();
  return detail;
}

/**
 * Evaluates the demo's hostile predictions from the first page (timeout per item in seconds) and
 * resolves with the new run's id once its dashboard shows.
 */
export async function runHostileDemo(
  page: Page,
  opts: { timeoutS: number; readOnly?: boolean; whileRunning?: () => Promise<void> },
): Promise<string> {
  await gotoHash(page, '#/');
  await page.getByTestId('hostile-timeout').fill(String(opts.timeoutS));
  await page.getByTestId('hostile-readonly').setChecked(opts.readOnly ?? false);
  await page.getByTestId('run-hostile').click();
  if (opts.whileRunning) await opts.whileRunning();
  await page.waitForURL(/#\/run\/[^/]+$/, { timeout: 90_000 });
  const runId = decodeURIComponent(/#\/run\/([^/]+)$/.exec(page.url())![1]!);
  await page
    .locator(`[data-testid="dashboard"][data-loaded="true"][data-run-id="${runId}"]`)
    .waitFor({ timeout: 90_000 });
  return runId;
}
