/**
 * The report of a training run and the result rows of a replay report (docs/report.md), opened
 * from disk (`file://`) in Chromium with the network blocked. The training run's report (the
 * CLI's, of a three-step verl series on BIRD mini-dev) opens on the app's series view: its best
 * step, buckets, warnings, steps table and a question across the steps have the numbers the core
 * computes from the same series file, and a step's dashboard opens from it. The replay report
 * made by the app's "Export report" (the demo library's run, its databases stored) shows a wrong
 * item's first rows of each side as the app's explorer shows them. Each states its size.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import initSqlJs from 'sql.js';
import { describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { BUCKETS, seriesReport, trainerDisagreements } from '../../src/core/series/stats.ts';
import { runFileJson } from '../../src/core/runfile/export.ts';
import { formatCount } from '../../src/ui/shell/format.ts';
import { cellText } from '../../src/ui/cell-text.ts';
import { readReportFile } from '../../src/core/report/report-file.ts';
import { streamGzip } from '../../src/adapters/gzip-stream.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS, writeVerlDumps } from '../helpers/series-dumps.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { DEMO_ROOT } from './node-reference.ts';
import { cli } from './report-fixtures.ts';
import { openReport, otherRequests, type OpenedReport } from './report-helpers.ts';
import {
  downloadFrom,
  importBirdMiniDev,
  importDemoLibrary,
  runStored,
  screenshot,
  type AppSession,
  useApp,
} from './workbench-helpers.ts';

const common = ['--gold', MINIDEV_GOLD, '--dataset', MINIDEV_QUESTIONS, '--db-root', DB_ROOT];
const PHONE = { width: 390, height: 844 };
const dir = mkdtempSync(path.join(tmpdir(), 'wb-report-training-'));
const at = (f: string) => path.join(dir, f);
/** As the series view writes a number that may be absent. */
const f2 = (x: number | null) => (x === null ? '–' : formatFixed2(x));

async function expectNoRequest(r: OpenedReport): Promise<void> {
  expect(otherRequests(r)).toEqual([]);
  expect(r.aborted).toEqual([]);
  expect(await r.violations()).toEqual([]);
  expect(r.watch.problems).toEqual([]);
}

/** The report states its size: the file's, to the byte. */
async function expectSize(r: OpenedReport, file: string): Promise<void> {
  const size = r.page.getByTestId('prov-size');
  expect(await size.getAttribute('data-bytes')).toBe(String(statSync(file).size));
}

describe.skipIf(browserSkipReason())(suiteTitle('the report of a training run, and result rows'), () => {
  let { browser, page, server } = {} as AppSession;
  useApp((s) => ({ browser, page, server } = s));

  it('a training run: the series view is its home, with the core numbers of the same series; a question across steps; a step dashboard', async () => {
    writeVerlDumps(at('val'), [0, 1, 2]);
    await cli(['series', '--completions', at('val'), ...common, '--series-out', at('three.series.json')]);
    const series = parseSeriesFile(readFileSync(at('three.series.json'), 'utf8'), 'three.series.json');
    const last = series.steps.at(-1)!.run;
    writeFileSync(at('last.run.json'), runFileJson(last));
    await cli([
      'report',
      '--run',
      at('last.run.json'),
      '--series',
      at('three.series.json'),
      '--out',
      at('series.html'),
    ]);
    const want = seriesReport(series);

    for (const viewport of [{ width: 1400, height: 1000 }, PHONE]) {
      const wide = viewport.width > PHONE.width;
      const r = await openReport(browser, at('series.html'), { viewport });
      const p = r.page;
      await p.locator('[data-testid="series-page"][data-loaded="true"]').waitFor({ timeout: 120_000 });
      // The home: the training run, not the last step's dashboard.
      expect(p.url()).toBe(`${r.url}#/series/${encodeURIComponent(series.id)}`);
      expect(await p.getByTestId('report-nav-series').getAttribute('aria-current')).toBe('page');
      expect(await p.getByTestId('series-title').textContent()).toBe(series.name);
      // The best step with its interval, as the core chooses it.
      const best = want.best!;
      expect(await p.getByTestId('best-step').getAttribute('data-step')).toBe(String(best.step));
      expect(await p.getByTestId('best-earned').textContent()).toBe(formatFixed2(best.earned));
      expect(await p.getByTestId('best-step').textContent()).toContain(
        `95% bootstrap interval ${formatFixed2(best.ciLow)} to ${formatFixed2(best.ciHigh)}`,
      );
      // Warnings: the core's rules, or the line saying there is none.
      const rules = await p
        .locator('[data-testid="series-warnings"] li[data-rule]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-rule')));
      expect(rules).toEqual(want.warnings.map((w) => w.rule));
      // Each step's EX and trainer-vs-EX disagreements.
      const rows = p.locator('[data-testid="series-steps"] tbody tr');
      expect(await rows.count()).toBe(want.steps.length);
      for (const [i, s] of want.steps.entries()) {
        expect(await rows.nth(i).getAttribute('data-step')).toBe(String(s.step));
        expect(await rows.nth(i).locator('[data-col="ex"]').textContent()).toBe(f2(s.ex));
        expect(await rows.nth(i).locator('[data-col="earned"]').textContent()).toBe(f2(s.earned));
        const d = trainerDisagreements(s);
        expect(await rows.nth(i).locator('[data-col="disagree"]').getAttribute('data-count')).toBe(
          d === null ? '' : String(d),
        );
      }
      for (const b of BUCKETS)
        expect(await p.getByTestId(`bucket-${b}`).textContent()).toBe(formatCount(want.buckets[b]));
      await expectSize(r, at('series.html'));
      await screenshot(p, `report-training-${wide ? 1400 : 390}.png`);

      // A question across the steps, from the grid: each step's right / samples as counted directly.
      const q = want.questions.find((x) => x.flips > 0) ?? want.questions[0]!;
      await p.locator(`[data-testid="question-grid"] a[data-index="${q.index}"]`).first().click();
      await p.locator(`[data-testid="series-question-page"][data-index="${q.index}"][data-loaded="true"]`).waitFor();
      for (const s of series.steps) {
        const mine = s.run.samples.filter((x) => x.index === q.index);
        expect(
          await p.locator(`[data-testid="series-question-steps"] [data-step="${s.step}"] .rate`).textContent(),
        ).toBe(mine.length === 0 ? '–' : `${mine.filter((x) => x.ex === 1).length}/${mine.length}`);
      }
      await screenshot(p, `report-training-question-${wide ? 1400 : 390}.png`);
      // A step's dashboard from there: every step's run is in the report.
      const first = series.steps[0]!;
      await p
        .locator(`[data-testid="series-question-steps"] [data-step="${first.step}"] a`, { hasText: 'dashboard' })
        .click();
      await p.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
      expect(p.url()).toBe(`${r.url}#/run/${encodeURIComponent(first.run.run.id)}`);
      expect(await p.getByTestId('run-title').textContent()).toBe(first.run.run.name);
      await expectNoRequest(r);
      await r.context.close();
    }
  }, 900_000);

  it("a training run's report from the app: a step's wrong item shows the rows sql.js gives for its prediction and gold; the report states their budget", async () => {
    // Two steps on superhero (52 questions each), imported into the app as a training run.
    writeVerlDumps(at('superhero'), [0, 1], ['superhero']);
    await page.goto(`${server.url}#/datasets`);
    await importBirdMiniDev(page);
    await page.getByTestId('nav-series').click();
    const select = page.getByTestId('series-dataset');
    await select.selectOption(
      (await select.locator('option', { hasText: 'BIRD mini-dev' }).first().getAttribute('value'))!,
    );
    await page.getByTestId('series-folder').setInputFiles(at('superhero'));
    await page.getByTestId('series-preview').waitFor();
    await page.getByTestId('series-name').fill('superhero, 2 checkpoints');
    // Far above any superhero query (all run in well under a second): nothing times out.
    await page.getByTestId('run-timeout').fill('120');
    await page.getByTestId('series-start').click();
    await page.waitForURL(/#\/series\/[^/?]+$/, { timeout: 600_000 });
    await page.locator('[data-testid="series-page"][data-loaded="true"][data-steps="2"]').waitFor({ timeout: 600_000 });
    const html = await downloadFrom(page, '[data-testid="export-report"]');
    writeFileSync(at('training-rows.html'), html.text);
    const back = await readReportFile(html.text, html.name, streamGzip);
    const steps = back.series!.steps;
    expect(steps).toHaveLength(2);
    const wrongAll = steps.flatMap((s) => s.run.samples.filter((x) => x.ex !== 1 && x.status !== 'missing-db'));
    // A wrong item of the first step (not the report's own run, the last step's) whose both sides have rows.
    const first = steps[0]!.run;
    const w = first.samples.find(
      (x) => x.ex === 0 && x.status === 'ok' && (x.predRowCount ?? 0) > 0 && (x.goldRowCount ?? 0) > 0,
    )!;
    expect(w).toBeDefined();
    // What sql.js gives for that prediction and gold on the database, outside the app: first 20 rows of each side.
    const SQL = await initSqlJs();
    const db = new SQL.Database(readFileSync(path.join(DB_ROOT, w.dbId, `${w.dbId}.sqlite`)));
    const firstRows = (sql: string): { columns: string[]; cells: string[][] } => {
      const st = db.prepare(sql);
      const cells: string[][] = [];
      try {
        while (cells.length < 20 && st.step()) cells.push(st.get().map(cellText));
        return { columns: st.getColumnNames(), cells };
      } finally {
        st.free();
      }
    };
    const want = { pred: firstRows(w.sql!), gold: firstRows(w.goldSql) };
    db.close();
    expect(want.pred.cells.length).toBeGreaterThan(0);

    const hash = `#/run/${encodeURIComponent(first.run.id)}/items/${w.index}.${w.sample}?outcome=wrong`;
    for (const viewport of [{ width: 1400, height: 1000 }, PHONE]) {
      const wide = viewport.width > PHONE.width;
      const r = await openReport(browser, at('training-rows.html'), { viewport, hash });
      const p = r.page;
      const side = async (id: string) => {
        const t = p.locator(`[data-testid="item-detail"] [data-testid="${id}"]`);
        await t.waitFor({ timeout: 120_000 });
        return {
          columns: await t.locator('thead th').evaluateAll((els) => els.map((e) => e.getAttribute('title') ?? '')),
          cells: await t
            .locator('tbody tr')
            .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.title))),
        };
      };
      expect({ pred: await side('pred-rows'), gold: await side('gold-rows') }).toEqual(want);
      await p.locator('[data-testid="item-detail"] [data-testid="result-tables"]').scrollIntoViewIfNeeded();
      await screenshot(p, `report-training-rows-${wide ? 1400 : 390}.png`);
      // The budget and what was kept, counted over every step's wrong samples.
      await p.evaluate((h) => (location.hash = h), `#/run/${encodeURIComponent(first.run.id)}`);
      await p.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
      expect(await p.getByTestId('prov-rows').textContent()).toMatch(
        new RegExp(
          `^Result rows: first 20 rows of each side for \\d+ wrong samples? of ${wrongAll.length}, [^(]+ \\(budget: 2,000 samples, 4\\.0 MiB\\)`,
        ),
      );
      await expectSize(r, at('training-rows.html'));
      await expectNoRequest(r);
      await r.context.close();
    }
  }, 900_000);

  it('a replay report from the app: a wrong item shows its first rows of each side, as the app shows them', async () => {
    await page.goto(server.url);
    await importDemoLibrary(page);
    const runId = await runStored(page, 'Demo library', path.join(DEMO_ROOT, 'predictions.json'), 'demo replay');
    const report = await downloadFrom(page, '[data-testid="export-report"]');
    writeFileSync(at('replay.html'), report.text);
    const file = JSON.parse(
      await (async () => {
        await page.goto(`${server.url}#/runs`);
        return (await downloadFrom(page, `[data-run-id="${runId}"] [data-testid="export-run"]`)).text;
      })(),
    ) as { samples: Array<{ index: number; sample: number; ex: number; status: string; predRowCount: number | null }> };
    const wrong = file.samples.filter((s) => s.ex === 0 && s.status === 'ok' && (s.predRowCount ?? 0) > 0);
    expect(wrong.length).toBeGreaterThan(0);
    const w = wrong[0]!;
    const hash = `#/run/${encodeURIComponent(runId)}/items/${w.index}.${w.sample}?outcome=wrong`;
    // The app's own result tables of that item.
    await page.goto(server.url + hash);
    const appPred = page.locator('[data-testid="item-detail"] [data-testid="pred-rows"]');
    await appPred.waitFor({ timeout: 60_000 });
    const appText = [
      await appPred.textContent(),
      await page.locator('[data-testid="item-detail"] [data-testid="gold-rows"]').textContent(),
    ];

    for (const viewport of [{ width: 1400, height: 1000 }, PHONE]) {
      const wide = viewport.width > PHONE.width;
      const r = await openReport(browser, at('replay.html'), { viewport, hash });
      const p = r.page;
      const pred = p.locator('[data-testid="item-detail"] [data-testid="pred-rows"]');
      await pred.waitFor({ timeout: 120_000 });
      expect([
        await pred.textContent(),
        await p.locator('[data-testid="item-detail"] [data-testid="gold-rows"]').textContent(),
      ]).toEqual(appText);
      await p.locator('[data-testid="item-detail"]').scrollIntoViewIfNeeded();
      await screenshot(p, `report-rows-${wide ? 1400 : 390}.png`);
      await p.evaluate((h) => (location.hash = h), `#/run/${encodeURIComponent(runId)}`);
      await p.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
      const wrongAll = file.samples.filter((s) => s.ex !== 1 && s.status !== 'missing-db').length;
      expect(await p.getByTestId('prov-rows').textContent()).toMatch(
        new RegExp(`^Result rows: first 20 rows of each side for \\d+ wrong samples? of ${wrongAll}, `),
      );
      await expectSize(r, at('replay.html'));
      await expectNoRequest(r);
      await r.context.close();
    }
  }, 600_000);
});
