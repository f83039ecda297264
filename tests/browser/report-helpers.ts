/**
 * Opening an offline report (docs/report.md) the way a reader does: from disk (`file://`), in a
 * context whose network is blocked (offline, and every request but the report's own document
 * aborted and counted), with the page's Content-Security-Policy violations recorded from before
 * its first script. Used by the report's browser tests and the bench (report_open_ms_100k).
 */
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { watchPage, type PageWatch } from './harness.ts';

export interface OpenedReport {
  context: BrowserContext;
  page: Page;
  watch: PageWatch;
  url: string;
  /** Every request the page made (`request` events), the report's own document included. */
  requests: string[];
  /** Requests that reached the network layer and were aborted (anything but the report file). */
  aborted: string[];
  /** The page's CSP violations so far (`securitypolicyviolation` events: directive and blocked URI). */
  violations(): Promise<string[]>;
}

declare global {
  interface Window {
    __cspViolations?: string[];
  }
}

/** Plain JavaScript (an init script runs before any of the page's). */
export const VIOLATIONS = `(() => {
  const seen = [];
  Object.defineProperty(window, '__cspViolations', { value: seen });
  document.addEventListener('securitypolicyviolation', (e) => seen.push(e.violatedDirective + ' ' + e.blockedURI));
})();`;

export async function openReport(
  browser: Browser,
  file: string,
  opts: { hash?: string; viewport?: { width: number; height: number }; initScript?: string } = {},
): Promise<OpenedReport> {
  const url = pathToFileURL(file).href;
  const context = await browser.newContext({
    viewport: opts.viewport ?? { width: 1400, height: 1000 },
    offline: true,
    acceptDownloads: true,
  });
  const aborted: string[] = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u === url || u.startsWith(url + '#')) return route.continue();
    aborted.push(u);
    return route.abort('blockedbyclient');
  });
  await context.addInitScript({ content: VIOLATIONS });
  if (opts.initScript) await context.addInitScript({ content: opts.initScript });
  const page = await context.newPage();
  const watch = watchPage(page);
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(url + (opts.hash ?? ''));
  return {
    context,
    page,
    watch,
    url,
    requests,
    aborted,
    violations: () => page.evaluate(() => [...(window.__cspViolations ?? [])]),
  };
}

/** The requests other than the report's own document (hash changes are not requests). */
export function otherRequests(r: OpenedReport): string[] {
  return r.requests.filter((u) => u !== r.url && !u.startsWith(r.url + '#'));
}
