/**
 * The offline report (docs/report.md) opened in Firefox as a reader opens it: from
 * disk (`file://`), every request but the report's own document refused and counted, its
 * Content-Security-Policy violations recorded from before its first script. Debian's Firefox ESR
 * driven over WebDriver BiDi (tests/browser/firefox.ts). The same reports as the Chromium test
 * (report.test.ts): the BIRD mini-dev gpt-4o CoT replay run made by the CLI, and a run whose
 * every string is hostile. Numbers are checked against the core (summary, item search) and the
 * CLI (`stats`).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import { summarize } from '../../src/core/eval/summary.ts';
import { pct } from '../../src/core/rl/explanations.ts';
import { pct as pctCell } from '../../src/ui/shell/format.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { DEFAULT_QUERY, ItemIndex, matchesOutcome, type ItemQuery } from '../../src/core/views/item-query.ts';
import type { Question } from '../../src/core/types.ts';
import { readJson } from '../helpers/cli.ts';
import {
  firefoxScreenshot,
  firefoxSkipReason,
  launchFirefox,
  openReportInFirefox,
  type FirefoxReport,
} from './firefox.ts';
import {
  expectLeaksBlocked,
  HOSTILE_NAME,
  HOSTILE_SQL,
  hostileDomCensus,
  makeReportFiles,
  tryLeaks,
} from './report-fixtures.ts';
import { readOfficialCells } from './workbench-helpers.ts';

const PHONE = { width: 390, height: 844 };
const dir = mkdtempSync(path.join(tmpdir(), 'wb-report-firefox-'));
const at = (f: string) => path.join(dir, f);
const readRun = (f: string): RunFile => parseRunFile(readFileSync(f, 'utf8'), path.basename(f));
const title = (t: string) => (firefoxSkipReason() ? `${t} (skipped: ${firefoxSkipReason()})` : t);

const text = (page: Page, selector: string) => page.$eval(selector, (e) => e.textContent?.trim() ?? '');
const waitFor = (page: Page, selector: string, timeout = 120_000) => page.waitForSelector(selector, { timeout });

/** The page made no request, broke no rule of its policy and logged no error. */
async function expectNoRequest(r: FirefoxReport): Promise<void> {
  expect(r.others).toEqual([]);
  expect(await r.violations()).toEqual([]);
  expect(r.problems).toEqual([]);
}

/** The explorer's count line once it says what `want` items of `of` are. */
async function expectCount(page: Page, want: number, of: number): Promise<void> {
  await expect
    .poll(() => text(page, '[data-testid="filter-count"]'), { timeout: 60_000 })
    .toMatch(new RegExp(`^${want.toLocaleString('en')} of ${of.toLocaleString('en')} items`));
}

describe.skipIf(firefoxSkipReason())(title('the offline report in Firefox from file://, network blocked'), () => {
  let browser: Browser;
  const open = (file: string, opts: Parameters<typeof openReportInFirefox>[2] = {}) =>
    openReportInFirefox(browser, file, opts);

  beforeAll(async () => {
    await makeReportFiles(at);
    browser = await launchFirefox();
  }, 600_000);

  // Closing the browser closes every report's context.
  afterAll(() => browser?.close());

  it("the gpt-4o replay run: provenance, the official EX, per-database scores and charts; the explorer filtered, searched and an item opened; one question's samples; pass@k = stats", async () => {
    const file = readRun(at('gpt4o.run.json'));
    const summary = summarize(file.samples, file.run.config.metrics);
    const r = await open(at('gpt4o.html'));
    const { page } = r;
    expect(await page.evaluate(() => navigator.userAgent)).toMatch(/Firefox\/\d+/);
    await waitFor(page, '[data-testid="dashboard"][data-loaded="true"]');
    expect(page.url()).toBe(`${r.url}#/run/${file.run.id}`);
    expect((await page.evaluate(readOfficialCells)).ex!.total).toBe(formatFixed2(summary.byDifficulty.total.ex!));
    // Each database's EX as the core computes it; the charts drew something.
    for (const [db, b] of Object.entries(summary.byDb))
      expect(await text(page, `[data-testid="db-scores"] tr[data-db="${db}"] [data-col="ex"]`), db).toBe(pctCell(b.ex));
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('[data-testid="dashboard"] canvas')].filter((c) => {
          const el = c as HTMLCanvasElement;
          const px = el.getContext('2d')?.getImageData(0, 0, el.width, el.height).data;
          return px !== undefined && px.some((v) => v !== 0);
        }).length >= 2,
      { timeout: 60_000 },
    );
    // The provenance on the first screen: hashes, settings, the engine and its SQLite version.
    expect(await text(page, '[data-testid="prov-questions-sha"]')).toBe(file.run.dataset.questions.sha256);
    const dbs = await text(page, '[data-testid="prov-databases"]');
    for (const [db, sha] of Object.entries(file.run.dataset.databases)) expect(dbs).toContain(`${db} ${sha}`);
    const engine = await text(page, '[data-testid="prov-engine"]');
    expect(engine).toContain(file.run.executor);
    expect(engine).toContain(`SQLite ${file.run.sqliteVersion}`);
    expect(await text(page, '[data-testid="prov-settings"]')).toContain(
      `timeout ${file.run.config.timeoutMs / 1000} s`,
    );
    const provTop = await page.$eval('[data-testid="provenance"]', (e) => e.getBoundingClientRect().y);
    expect(provTop).toBeLessThan(1000);
    expect(await page.$$('[data-testid="reward-view"] a')).not.toHaveLength(0);
    expect(await page.$$('[data-testid="reward-probe"]')).toHaveLength(0);
    await firefoxScreenshot(page, 'report-firefox-dashboard-1400.png');

    // The dashboard's link to the wrong answers, then a search within them, as the core filters.
    const rows = file.samples.map((sample) => ({
      sample,
      question: (file.questions?.find((q) => q.index === sample.index) ?? null) as Question | null,
    }));
    const count = (q: Partial<ItemQuery>) => new ItemIndex(rows).query({ ...DEFAULT_QUERY, ...q }).length;
    const wrong = file.samples.filter((s) => matchesOutcome(s, 'wrong'));
    await page.click('[data-testid="wrong-link"]');
    await waitFor(page, '[data-testid="explorer"][data-complete="true"]');
    await expectCount(page, wrong.length, file.samples.length);
    await page.locator('[data-testid="filter-search"]').fill('superhero');
    const searched = count({ outcome: 'wrong', search: 'superhero' });
    expect(searched).toBeGreaterThan(0);
    expect(searched).toBeLessThan(wrong.length);
    await expectCount(page, searched, file.samples.length);
    await page.click('[data-testid="item-list"] [role="option"]');
    await waitFor(page, '[data-testid="item-detail"][data-ex="0"]');
    const index = Number(await page.$eval('[data-testid="item-detail"]', (e) => e.getAttribute('data-index')));
    const w = wrong.find((s) => s.index === index)!;
    expect(w.dbId).toBe('superhero');
    expect(await text(page, '[data-testid="item-detail"] [data-testid="pred-sql"]')).toBe(w.sql.trim());
    expect(await text(page, '[data-testid="item-detail"] [data-testid="gold-sql"]')).toBe(w.goldSql.trim());
    // A report runs no SQL: no link to the playground or the probe, which it could not open.
    expect(await page.$$('[data-testid="open-playground"]')).toHaveLength(0);
    await firefoxScreenshot(page, 'report-firefox-explorer-1400.png');

    // The per-question samples view of that question.
    await page.evaluate((h) => (location.hash = h), `#/run/${file.run.id}/question/${w.index}`);
    await waitFor(page, '[data-testid="question-page"]');
    const q = file.questions!.find((x) => x.index === w.index)!;
    expect(await text(page, '[data-testid="question-text"]')).toBe(q.question.trim());
    expect(await text(page, '[data-testid="question-right"]')).toBe('0 of 1');
    expect(await page.$$('[data-testid="sample-playground"]')).toHaveLength(0);
    await firefoxScreenshot(page, 'report-firefox-question-1400.png');

    await page.click('[data-testid="report-nav-rl"]');
    await waitFor(page, '[data-testid="rl-page"][data-loaded="true"]', 240_000);
    const want = readJson<{ pass_at_k: Record<string, number> }>(at('gpt4o.stats.json'));
    expect(Object.keys(want.pass_at_k)).toEqual(['1']);
    expect(await text(page, '[data-testid="passk-table"] tr[data-k="1"] [data-col="pass"]')).toBe(
      pct(want.pass_at_k['1']!),
    );
    await expectNoRequest(r);
  }, 600_000);

  it('on a phone (390 x 844): the dashboard fits the screen', async () => {
    const r = await open(at('gpt4o.html'), { viewport: PHONE });
    const { page } = r;
    await waitFor(page, '[data-testid="dashboard"][data-loaded="true"]');
    await firefoxScreenshot(page, 'report-firefox-dashboard-390.png');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await expectNoRequest(r);
  }, 300_000);

  it('hostile run content is text, never markup', async () => {
    const r = await open(at('hostile.html'));
    const { page } = r;
    await waitFor(page, '[data-testid="dashboard"][data-loaded="true"]');
    expect(await text(page, '[data-testid="run-title"]')).toBe(HOSTILE_NAME);
    await page.evaluate(() => (location.hash += '/items/2.0'));
    await waitFor(page, '[data-testid="item-detail"][data-index="2"]');
    expect(await text(page, '[data-testid="item-detail"] [data-testid="pred-sql"]')).toBe(HOSTILE_SQL);
    expect(await page.evaluate(hostileDomCensus)).toEqual({ pwned: null, scripts: 2, injected: 0, bold: 0 });
    await expectNoRequest(r);

    // The watch sees a request when one is tried: the policy blocks an image and a fetch, and says so.
    await page.evaluate(tryLeaks);
    await expectLeaksBlocked(r.violations);
    r.problems.length = 0; // the blocked requests log their refusal: caused on purpose here
  }, 300_000);
});
