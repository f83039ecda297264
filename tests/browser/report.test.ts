/**
 * The offline report (docs/report.md) opened as a reader opens it: from disk
 * (`file://`) in Chromium with the network blocked. Reports made by the CLI of the BIRD mini-dev
 * gpt-4o CoT replay run (`eval --run-out`), of that run compared with gpt-4-turbo plus a
 * three-step training run, of a 100,000-sample RL-shaped run, and of a run full of hostile
 * content. The numbers shown are checked against the core (EX) and the CLI (`stats`, `compare`,
 * `series`) on the same files; no request leaves the page and no string becomes markup.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import { summarize } from '../../src/core/eval/summary.ts';
import { pct } from '../../src/core/rl/explanations.ts';
import { compareRuns } from '../../src/core/rl/compare.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { REPORT_DATA_PLACEHOLDER } from '../../src/core/report/report-file.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { matchesOutcome } from '../../src/core/views/item-query.ts';
import { mulberry32 } from '../../src/core/util/rng.ts';
import { readJson, ROOT } from '../helpers/cli.ts';
import { largeRunFile } from '../helpers/large-run.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS, writeVerlDumps } from '../helpers/series-dumps.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, launchChromium, suiteTitle } from './harness.ts';
import {
  HOSTILE_DB,
  HOSTILE_NAME,
  HOSTILE_QUESTION,
  HOSTILE_SQL,
  cli,
  expectLeaksBlocked,
  hostileDomCensus,
  makeReportFiles,
  tryLeaks,
} from './report-fixtures.ts';
import { openReport, otherRequests, type OpenedReport } from './report-helpers.ts';
import { officialCells, screenshot } from './workbench-helpers.ts';
import { formatCount } from '../../src/ui/shell/format.ts';

const PRED = (dir: string, f: string) => sharedData('bird', 'predictions', dir, f);
const GPT4T = PRED('TA_output', 'predict_mini_dev_gpt-4-turbo_cot_SQLite.json');
const common = ['--gold', MINIDEV_GOLD, '--dataset', MINIDEV_QUESTIONS, '--db-root', DB_ROOT];
const PHONE = { width: 390, height: 844 };

const dir = mkdtempSync(path.join(tmpdir(), 'wb-report-browser-'));
const at = (f: string) => path.join(dir, f);
const readRun = (f: string): RunFile => parseRunFile(readFileSync(f, 'utf8'), path.basename(f));

/** The page's report is on screen, made no request and broke no rule of its policy. */
async function expectNoRequest(r: OpenedReport): Promise<void> {
  expect(otherRequests(r)).toEqual([]);
  expect(r.aborted).toEqual([]);
  expect(await r.violations()).toEqual([]);
  expect(r.watch.problems).toEqual([]);
}

async function rlRowsEqualStats(page: Page, statsFile: string): Promise<number> {
  await page.locator('[data-testid="rl-page"][data-loaded="true"]').waitFor({ timeout: 240_000 });
  const want = readJson<{ pass_at_k: Record<string, number>; maj_at_k: Record<string, number> }>(statsFile);
  const ks = Object.keys(want.pass_at_k);
  expect(ks.length).toBeGreaterThan(0);
  for (const k of ks) {
    const row = page.locator(`[data-testid="passk-table"] tr[data-k="${k}"]`);
    expect(await row.locator('[data-col="pass"]').textContent(), `pass@${k}`).toBe(pct(want.pass_at_k[k]!));
    expect(await row.locator('[data-col="maj"]').textContent(), `maj@${k}`).toBe(pct(want.maj_at_k[k]!));
  }
  return ks.length;
}

/** From the dashboard: the wrong answers in the explorer (the dashboard's link), then the first one opened. */
async function openFirstWrong(page: Page, file: RunFile): Promise<void> {
  const wrong = file.samples.filter((s) => matchesOutcome(s, 'wrong'));
  expect(wrong.length).toBeGreaterThan(0);
  expect(await page.locator('[data-count="wrong"]').textContent()).toBe(String(wrong.length));
  await page.getByTestId('wrong-link').click();
  await page.locator('[data-testid="explorer"][data-complete="true"]').waitFor({ timeout: 120_000 });
  expect(page.url()).toContain('?outcome=wrong');
  await expect
    .poll(async () => (await page.getByTestId('filter-count').textContent())?.trim())
    .toMatch(new RegExp(`^${wrong.length.toLocaleString('en')} of ${file.samples.length.toLocaleString('en')} items`));
  const first = page.locator('[data-testid="item-list"] [role="option"]').first();
  expect(await first.getAttribute('data-ex')).toBe('0');
  await first.click();
  const w = wrong[0]!;
  const detail = page.locator(`[data-testid="item-detail"][data-index="${w.index}"]`);
  await detail.waitFor();
  expect(await detail.getAttribute('data-ex')).toBe('0');
  expect(await detail.getByTestId('pred-sql').textContent()).toBe(w.sql);
  expect(await detail.getByTestId('gold-sql').textContent()).toBe(w.goldSql);
  // The run keeps verdicts and row counts, not rows: said so, not shown as a failure.
  if (w.status === 'ok') await detail.getByTestId('results-note').waitFor();
}

describe.skipIf(browserSkipReason())(suiteTitle('the offline report from file://, network blocked'), () => {
  let browser: Browser;
  const opened: OpenedReport[] = [];
  const open = async (file: string, opts: Parameters<typeof openReport>[2] = {}) => {
    const r = await openReport(browser, file, opts);
    opened.push(r);
    return r;
  };

  beforeAll(async () => {
    await makeReportFiles(at);
    await cli(['eval', '--predictions', GPT4T, ...common, '--run-out', at('gpt4t.run.json')]);
    writeVerlDumps(at('val'), [0, 1, 2]);
    await cli([
      'series',
      '--completions',
      at('val'),
      ...common,
      '--out',
      at('series.json'),
      '--series-out',
      at('three.series.json'),
    ]);
    await cli([
      'report',
      '--run',
      at('gpt4o.run.json'),
      '--compare',
      at('gpt4t.run.json'),
      '--series',
      at('three.series.json'),
      '--out',
      at('compare.html'),
    ]);
    writeFileSync(at('large.run.json'), JSON.stringify(largeRunFile()));
    await cli(['stats', '--run', at('large.run.json'), '--out', at('large.stats.json')]);
    await cli(['report', '--run', at('large.run.json'), '--out', at('large.html')]);
    browser = await launchChromium();
  }, 900_000);

  afterAll(async () => {
    for (const r of opened) await r.context.close().catch(() => undefined);
    await browser?.close();
  });

  it('the gpt-4o replay run: provenance and the official EX on the dashboard, the explorer on the wrong answers, pass@k = stats', async () => {
    const file = readRun(at('gpt4o.run.json'));
    const summary = summarize(file.samples, file.run.config.metrics);
    const r = await open(at('gpt4o.html'));
    const { page } = r;
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    expect(page.url()).toBe(`${r.url}#/run/${file.run.id}`);
    expect((await officialCells(page)).ex!.total).toBe(formatFixed2(summary.byDifficulty.total.ex!));
    expect(await page.getByTestId('run-title').textContent()).toBe(file.run.name);
    // The provenance is on the first screen: dataset and database hashes, settings, engine, who made it.
    const prov = page.getByTestId('provenance');
    expect(await prov.getByTestId('prov-questions-sha').textContent()).toBe(file.run.dataset.questions.sha256);
    for (const [db, sha] of Object.entries(file.run.dataset.databases))
      expect(await prov.getByTestId('prov-databases').textContent()).toContain(`${db} ${sha}`);
    expect(await prov.getByTestId('prov-report').textContent()).toMatch(/made by rlvr-workbench \d+\.\d+\.\d+ \(CLI\)/);
    expect(await prov.getByTestId('prov-engine').textContent()).toContain(file.run.executor);
    expect((await prov.boundingBox())!.y).toBeLessThan(1000);
    await screenshot(page, 'report-dashboard-1400.png');

    await openFirstWrong(page, file);
    await screenshot(page, 'report-explorer-1400.png');

    await page.getByTestId('report-nav-rl').click();
    expect(await rlRowsEqualStats(page, at('gpt4o.stats.json'))).toBe(1);
    await screenshot(page, 'report-rl-1400.png');
    await expectNoRequest(r);
  }, 600_000);

  it('on a phone (390 x 844): the same dashboard, an item open, the RL view', async () => {
    const file = readRun(at('gpt4o.run.json'));
    const r = await open(at('gpt4o.html'), { viewport: PHONE });
    const { page } = r;
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    await screenshot(page, 'report-dashboard-390.png');
    const w = file.samples.find((s) => s.status === 'ok' && s.ex === 0)!;
    await page.evaluate((h) => (location.hash = h), `#/run/${file.run.id}/items/${w.index}.0?outcome=wrong`);
    await page.locator(`[data-testid="item-detail"][data-index="${w.index}"]`).waitFor();
    await page.locator('[data-testid="item-detail"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'report-explorer-390.png');
    await page.getByTestId('report-nav-rl').click();
    await page.locator('[data-testid="rl-page"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    await screenshot(page, 'report-rl-390.png');
    // Nothing wider than the phone's screen but what scrolls inside its panel.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await expectNoRequest(r);
  }, 300_000);

  it('the comparison with gpt-4-turbo (as compare computes it) and the three-step training run (as series --out)', async () => {
    const [a, b] = [readRun(at('gpt4o.run.json')), readRun(at('gpt4t.run.json'))];
    const want = compareRuns(a, b, { resamples: 10_000, makeRng: () => mulberry32(0) });
    for (const viewport of [{ width: 1400, height: 1000 }, PHONE]) {
      const r = await open(at('compare.html'), { viewport });
      const { page } = r;
      await page
        .locator('[data-testid="compare-page"][data-ready="true"] [data-testid="compare-result"][data-drawn="true"]')
        .waitFor({ timeout: 240_000 });
      expect(page.url()).toBe(`${r.url}#/compare/${a.run.id}/${b.run.id}`);
      const total = page.locator('[data-testid="compare-by-difficulty"] tr[data-bucket="total"]');
      for (const c of ['fixed', 'broken', 'both_right', 'both_wrong'] as const)
        expect(await total.locator(`[data-col="${c}"]`).textContent()).toBe(String(want.overall.counts[c]));
      const wide = viewport.width > PHONE.width;
      await screenshot(page, `report-compare-${wide ? 1400 : 390}.png`);

      await page.getByTestId('report-nav-series').click();
      const steps = page.locator('[data-testid="series-steps"] tbody tr');
      await steps.first().waitFor();
      const series = readJson<{ steps: { step: number; ex: number }[]; buckets: Record<string, number> }>(
        at('series.json'),
      );
      expect(await steps.count()).toBe(3);
      for (const [i, s] of series.steps.entries()) {
        expect(await steps.nth(i).getAttribute('data-step')).toBe(String(s.step));
        expect(await steps.nth(i).locator('[data-col="ex"]').textContent()).toBe(formatFixed2(s.ex));
      }
      // The app's series view now (its bucket counts as it writes them).
      for (const [bucket, n] of Object.entries(series.buckets))
        expect(await page.getByTestId(`bucket-${bucket}`).textContent()).toBe(formatCount(n));
      await screenshot(page, `report-series-${wide ? 1400 : 390}.png`);
      await expectNoRequest(r);
    }
  }, 600_000);

  it('a report made with --exclude: the dashboard, the RL view and the comparison leave the questions out, as a recomputation says, and list them', async () => {
    const [a, b] = [readRun(at('gpt4o.run.json')), readRun(at('gpt4t.run.json'))];
    // One question gpt-4o got wrong and one it got right: the EX moves either way.
    const ids = [a.samples.find((x) => x.ex === 0)!.questionId, a.samples.find((x) => x.ex === 1)!.questionId];
    writeFileSync(
      at('ex.jsonl'),
      ids
        .map((id) => JSON.stringify({ question_id: id, reason: 'gold is wrong', author: 'Ana', date: '2026-12-07' }))
        .join('\n'),
    );
    await cli([
      'report',
      '--run',
      at('gpt4o.run.json'),
      '--compare',
      at('gpt4t.run.json'),
      '--exclude',
      at('ex.jsonl'),
      '--out',
      at('ex.html'),
    ]);
    const gone = new Set(ids);
    const kept = (f: RunFile) => f.samples.filter((x) => !gone.has(x.questionId));
    const r = await open(at('ex.html'));
    const { page } = r;
    await page.goto(`${r.url}#/run/${a.run.id}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    await page.locator('[data-testid="excluded-count"][data-count="2"]').waitFor({ timeout: 60_000 });
    expect((await officialCells(page)).ex!.total).toBe(
      formatFixed2(summarize(kept(a), a.run.config.metrics).byDifficulty.total.ex!),
    );
    expect(await page.locator('[data-testid="exclusions"] [data-testid="exclusion"]').count()).toBe(2);
    await screenshot(page, 'report-excluded-1400.png');
    await page.goto(`${r.url}#/run/${a.run.id}/rl`);
    await page.locator('[data-testid="rl-excluded"][data-count="2"]').waitFor({ timeout: 120_000 });
    await page.goto(`${r.url}#/compare/${a.run.id}/${b.run.id}`);
    await page.locator('[data-testid="compare-excluded"][data-count="2"]').waitFor({ timeout: 240_000 });
    const want = compareRuns(
      { ...a, samples: kept(a) },
      { ...b, samples: kept(b) },
      { resamples: 10_000, makeRng: () => mulberry32(0) },
    );
    const total = page.locator('[data-testid="compare-by-difficulty"] tr[data-bucket="total"]');
    await total.waitFor();
    for (const c of ['fixed', 'broken', 'both_right', 'both_wrong'] as const)
      expect(await total.locator(`[data-col="${c}"]`).textContent()).toBe(String(want.overall.counts[c]));
    await expectNoRequest(r);
  }, 600_000);

  it('a 100,000-sample run: dashboard EX, the explorer on the wrong answers, pass@k = stats', async () => {
    const file = readRun(at('large.run.json'));
    expect(file.samples).toHaveLength(100_000);
    const summary = summarize(file.samples, file.run.config.metrics);
    const r = await open(at('large.html'));
    const { page } = r;
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 240_000 });
    expect((await officialCells(page)).ex!.total).toBe(formatFixed2(summary.byDifficulty.total.ex!));
    expect((await officialCells(page)).samples!.total).toBe('100000');
    await screenshot(page, 'report-100k-dashboard-1400.png');
    await openFirstWrong(page, file);
    await page.getByTestId('report-nav-rl').click();
    expect(await rlRowsEqualStats(page, at('large.stats.json'))).toBeGreaterThan(5);
    await screenshot(page, 'report-100k-rl-1400.png');
    await expectNoRequest(r);
  }, 600_000);

  it('hostile run content is text, never markup: <script>, </script> in SQL and question, javascript: links, <!--, U+202E', async () => {
    // Nothing of the run is in the HTML as text: the file is the template (the CLI's, dist-cli/report.html)
    // with its placeholder replaced by one base64 element, which no run content can close early.
    const html = readFileSync(at('hostile.html'), 'utf8');
    const template = readFileSync(path.join(ROOT, 'dist-cli', 'report.html'), 'utf8');
    const data = /<script type="application\/octet-stream" id="rlvr-report-data">([A-Za-z0-9+/=]*)<\/script>/.exec(
      html,
    )![1]!;
    expect(html).toBe(
      template.replace(
        REPORT_DATA_PLACEHOLDER,
        `<script type="application/octet-stream" id="rlvr-report-data">${data}</script>`,
      ),
    );

    const r = await open(at('hostile.html'));
    const { page } = r;
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    expect(await page.getByTestId('run-title').textContent()).toBe(HOSTILE_NAME);
    expect(await page.title()).toBe(`${HOSTILE_NAME} · offline report`);
    await page.evaluate(() => (location.hash += '/items/2.0'));
    const detail = page.locator('[data-testid="item-detail"][data-index="2"]');
    await detail.waitFor();
    expect(await detail.getByTestId('pred-sql').textContent()).toBe(HOSTILE_SQL);
    expect(await detail.getByTestId('item-question').textContent()).toBe(HOSTILE_QUESTION);
    expect(await detail.getByTestId('item-error').textContent()).toContain('near "</script>": syntax error <!--');
    await detail.locator('details:has(pre.completion) summary').click();
    expect(await detail.locator('pre.completion').textContent()).toContain(`<think>${HOSTILE_QUESTION}</think>`);
    await page.getByTestId('filter-db').selectOption(HOSTILE_DB);
    await screenshot(page, 'report-hostile-1400.png');
    expect(await page.evaluate(hostileDomCensus)).toEqual({ pwned: null, scripts: 2, injected: 0, bold: 0 });
    await expectNoRequest(r);

    // The watch sees a request when one is tried: an image is a request the policy blocks, a fetch a violation.
    await page.evaluate(tryLeaks);
    await expectLeaksBlocked(r.violations);
    expect(otherRequests(r)).toEqual(['http://127.0.0.1:9/leak.png']);
    r.watch.problems.length = 0; // the blocked requests log their refusal: caused on purpose here
  }, 300_000);
});
