/**
 * The report of a training run and a replay report's result rows in Firefox (Debian's Firefox
 * ESR over WebDriver BiDi, tests/browser/firefox.ts), from disk with every request but the
 * report's own document refused and counted. The training run's report (the CLI's, three verl
 * steps on BIRD mini-dev) opens on the series view with the core's numbers for the same series
 * file; a replay report of the demo library run, its wrong samples' rows gathered as the app
 * gathers them (the explorer's re-execution, here over the Node SQL pool), shows a wrong item's
 * rows. Each states its size.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamGzip } from '../../src/adapters/gzip-stream.ts';
import { createNodeSqlPool, folderDbSource } from '../../src/adapters/node/sql-worker-host.ts';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import { RESULT_ROWS_BUDGET } from '../../src/core/report/limits.ts';
import { reportPayload } from '../../src/core/report/payload.ts';
import { buildReportHtml } from '../../src/core/report/report-file.ts';
import { collectResultRows } from '../../src/core/report/result-rows.ts';
import { runFileJson } from '../../src/core/runfile/export.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { BUCKETS, seriesReport } from '../../src/core/series/stats.ts';
import { createPreviewService } from '../../src/app/preview-service.ts';
import { formatCount } from '../../src/ui/shell/format.ts';
import { ROOT } from '../helpers/cli.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS, writeVerlDumps } from '../helpers/series-dumps.ts';
import {
  firefoxScreenshot,
  firefoxSkipReason,
  launchFirefox,
  openReportInFirefox,
  type FirefoxReport,
} from './firefox.ts';
import { DEMO_ROOT } from './node-reference.ts';
import { cli } from './report-fixtures.ts';

const PHONE = { width: 390, height: 844 };
const dir = mkdtempSync(path.join(tmpdir(), 'wb-report-training-ff-'));
const at = (f: string) => path.join(dir, f);
const title = (t: string) => (firefoxSkipReason() ? `${t} (skipped: ${firefoxSkipReason()})` : t);
const text = (page: Page, selector: string) => page.$eval(selector, (e) => e.textContent?.trim() ?? '');
const waitFor = (page: Page, selector: string, timeout = 120_000) => page.waitForSelector(selector, { timeout });
const f2 = (x: number | null) => (x === null ? '–' : formatFixed2(x));

async function expectClean(r: FirefoxReport, file: string): Promise<void> {
  expect(await r.page.$eval('[data-testid="prov-size"]', (e) => e.getAttribute('data-bytes'))).toBe(
    String(statSync(file).size),
  );
  expect(r.others).toEqual([]);
  expect(await r.violations()).toEqual([]);
  expect(r.problems).toEqual([]);
}

describe.skipIf(firefoxSkipReason())(title('the report of a training run, and result rows, in Firefox'), () => {
  let browser: Browser;

  beforeAll(async () => {
    writeVerlDumps(at('val'), [0, 1, 2]);
    await cli([
      'series',
      '--completions',
      at('val'),
      '--gold',
      MINIDEV_GOLD,
      '--dataset',
      MINIDEV_QUESTIONS,
      '--db-root',
      DB_ROOT,
      '--series-out',
      at('three.series.json'),
    ]);
    const series = parseSeriesFile(readFileSync(at('three.series.json'), 'utf8'), 'three.series.json');
    writeFileSync(at('last.run.json'), runFileJson(series.steps.at(-1)!.run));
    await cli([
      'report',
      '--run',
      at('last.run.json'),
      '--series',
      at('three.series.json'),
      '--out',
      at('series.html'),
    ]);
    await cli([
      'eval',
      '--predictions',
      path.join(DEMO_ROOT, 'predictions.json'),
      '--gold',
      path.join(DEMO_ROOT, 'gold.sql'),
      '--dataset',
      path.join(DEMO_ROOT, 'questions.json'),
      '--db-root',
      DEMO_ROOT,
      '--run-out',
      at('demo.run.json'),
    ]);
    browser = await launchFirefox();
  }, 900_000);

  afterAll(() => browser?.close());

  it('a training run: the series view is its home with the core numbers; a question across steps', async () => {
    const series = parseSeriesFile(readFileSync(at('three.series.json'), 'utf8'), 'three.series.json');
    const want = seriesReport(series);
    for (const viewport of [{ width: 1400, height: 1000 }, PHONE]) {
      const r = await openReportInFirefox(browser, at('series.html'), { viewport });
      const { page } = r;
      await waitFor(page, '[data-testid="series-page"][data-loaded="true"]');
      expect(page.url()).toBe(`${r.url}#/series/${encodeURIComponent(series.id)}`);
      expect(await page.$eval('[data-testid="best-step"]', (e) => e.getAttribute('data-step'))).toBe(
        String(want.best!.step),
      );
      expect(await text(page, '[data-testid="best-earned"]')).toBe(formatFixed2(want.best!.earned));
      expect(
        await page.$$eval('[data-testid="series-warnings"] li[data-rule]', (els) =>
          els.map((e) => e.getAttribute('data-rule')),
        ),
      ).toEqual(want.warnings.map((w) => w.rule));
      expect(
        await page.$$eval('[data-testid="series-steps"] tbody tr [data-col="ex"]', (els) =>
          els.map((e) => e.textContent?.trim()),
        ),
      ).toEqual(want.steps.map((s) => f2(s.ex)));
      for (const b of BUCKETS)
        expect(await text(page, `[data-testid="bucket-${b}"]`)).toBe(formatCount(want.buckets[b]));
      await firefoxScreenshot(page, `report-firefox-training-${viewport.width}.png`);
      const q = want.questions.find((x) => x.flips > 0) ?? want.questions[0]!;
      await page.evaluate((h) => (location.hash = h), `#/series/${encodeURIComponent(series.id)}/question/${q.index}`);
      await waitFor(page, `[data-testid="series-question-page"][data-index="${q.index}"][data-loaded="true"]`);
      for (const s of series.steps) {
        const mine = s.run.samples.filter((x) => x.index === q.index);
        expect(await text(page, `[data-testid="series-question-steps"] [data-step="${s.step}"] .rate`)).toBe(
          mine.length === 0 ? '–' : `${mine.filter((x) => x.ex === 1).length}/${mine.length}`,
        );
      }
      await page.evaluate((h) => (location.hash = h), `#/series/${encodeURIComponent(series.id)}`);
      await waitFor(page, '[data-testid="series-page"][data-loaded="true"]');
      await expectClean(r, at('series.html'));
      await page.browserContext().close();
    }
  }, 600_000);

  it("a replay report with its wrong samples' rows: a wrong item shows them", async () => {
    const file = parseRunFile(readFileSync(at('demo.run.json'), 'utf8'), 'demo.run.json');
    const previews = createPreviewService({
      dbSource: () => folderDbSource(DEMO_ROOT),
      createExecutor: () => createNodeSqlPool({ dbRoot: DEMO_ROOT, workers: 1 }),
    });
    const resultRows = await collectResultRows(
      [file],
      (f, samples, n) => previews.previewMany(f.run, samples, n),
      RESULT_ROWS_BUDGET,
    );
    await previews.release();
    expect(resultRows.items.length).toBeGreaterThan(0);
    const template = readFileSync(path.join(ROOT, 'dist-cli', 'report.html'), 'utf8');
    const html = await buildReportHtml(
      template,
      reportPayload({
        runs: [file],
        compare: false,
        resultRows,
        product: 'rlvr-workbench test',
        createdAt: '2026-12-07T00:00:00.000Z',
      }),
      streamGzip,
    );
    writeFileSync(at('demo.html'), html);
    const item = resultRows.items.find((x) => x.predRows.length > 0)!;
    const r = await openReportInFirefox(browser, at('demo.html'), {
      hash: `#/run/${encodeURIComponent(file.run.id)}/items/${item.index}.${item.sample}?outcome=wrong`,
    });
    const { page } = r;
    await waitFor(page, '[data-testid="item-detail"] [data-testid="pred-rows"]');
    const cells = await page.$$eval('[data-testid="item-detail"] [data-testid="pred-rows"] tbody tr', (rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')),
    );
    expect(cells.length).toBe(item.predRows.length);
    expect(cells[0]!.join(' ')).toContain(String(item.predRows[0]![0]));
    await firefoxScreenshot(page, 'report-firefox-rows-1400.png');
    await page.evaluate((h) => (location.hash = h), `#/run/${encodeURIComponent(file.run.id)}`);
    await waitFor(page, '[data-testid="dashboard"][data-loaded="true"]');
    expect(await text(page, '[data-testid="prov-rows"]')).toMatch(
      /^Result rows: first 20 rows of each side for \d+ wrong/,
    );
    await expectClean(r, at('demo.html'));
  }, 600_000);
});
