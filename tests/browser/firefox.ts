/**
 * Firefox for the offline report's test (the report must open from disk in
 * Chromium and Firefox). Debian's `firefox-esr`, installed by `scripts/test-all.sh` as it installs
 * Chromium, driven by puppeteer-core over WebDriver BiDi, the protocol stock Firefox speaks
 * (Playwright drives only its own patched Firefox build, which cannot be downloaded here).
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { VIOLATIONS } from './report-helpers.ts';
import { ARTIFACTS } from './workbench-helpers.ts';

export const FIREFOX_PATH = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';

/** Why the Firefox tests are skipped, or null: never skipped in CI, where a missing Firefox fails them. */
export function firefoxSkipReason(): string | null {
  if (existsSync(FIREFOX_PATH) || process.env.CI) return null;
  return `${FIREFOX_PATH} not found (apt-get install -y firefox-esr); Firefox tests are skipped outside CI`;
}

export async function launchFirefox(): Promise<Browser> {
  if (!existsSync(FIREFOX_PATH))
    throw new Error(`Firefox not found at ${FIREFOX_PATH}: apt-get install -y firefox-esr (or set FIREFOX_PATH)`);
  return puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX_PATH, headless: true });
}

/** A report opened in Firefox from disk, every request but its own document refused and counted. */
export interface FirefoxReport {
  page: Page;
  url: string;
  /** Requests other than the report's own document (all refused). `data:` URLs are not requests. */
  others: string[];
  /** Page errors and console errors. */
  problems: string[];
  /** The page's CSP violations so far. */
  violations(): Promise<string[]>;
}

export async function openReportInFirefox(
  browser: Browser,
  file: string,
  opts: { hash?: string; viewport?: { width: number; height: number } } = {},
): Promise<FirefoxReport> {
  const url = pathToFileURL(file).href;
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport(opts.viewport ?? { width: 1400, height: 1000 });
  const others: string[] = [];
  const problems: string[] = [];
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const u = req.url();
    if (u === url || u.startsWith(url + '#') || u.startsWith('data:')) return void req.continue();
    others.push(u);
    void req.abort('blockedbyclient');
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err instanceof Error ? err.message : String(err)}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });
  await page.evaluateOnNewDocument(VIOLATIONS);
  await page.goto(url + (opts.hash ?? ''));
  return {
    page,
    url,
    others,
    problems,
    violations: () => page.evaluate(() => [...((window as { __cspViolations?: string[] }).__cspViolations ?? [])]),
  };
}

export async function firefoxScreenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, name) as `${string}.png` });
}
