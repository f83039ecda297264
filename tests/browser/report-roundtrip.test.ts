/**
 * The report's round trip through the app (docs/report.md): a run stored in the app (the
 * gpt-4o replay run from `eval --run-out`, imported on the Runs page) is exported as a run file
 * and as a report (the dashboard's "Export report"); in a browser profile that has never seen
 * it, the Runs page's import takes the report and stores the run exactly as the run file would
 * be: the run file exported from there is byte for byte the first. The same for a comparison
 * exported from the Compare view (two runs) and for the CLI's report of the same run file; the
 * app's report opens from disk like the CLI's.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS } from '../helpers/series-dumps.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle, watchPage, type PageWatch } from './harness.ts';
import { openReport, otherRequests } from './report-helpers.ts';
import { type AppSession, downloadFrom, LAPTOP, useApp } from './workbench-helpers.ts';

const PRED = (dir: string, f: string) => sharedData('bird', 'predictions', dir, f);
const common = ['--gold', MINIDEV_GOLD, '--dataset', MINIDEV_QUESTIONS, '--db-root', DB_ROOT];
const dir = mkdtempSync(path.join(tmpdir(), 'wb-report-trip-'));
const at = (f: string) => path.join(dir, f);

async function importFile(page: Page, file: string): Promise<string> {
  const message = page.getByTestId('import-run-message');
  const shown = async () => ((await message.count()) > 0 ? ((await message.textContent())?.trim() ?? '') : '');
  const before = await shown();
  await page.getByTestId('import-run').setInputFiles(file);
  // The message of this import: a new one (the Runs page keeps the last one shown).
  for (const end = Date.now() + 120_000; Date.now() < end; await page.waitForTimeout(100)) {
    const now = await shown();
    if (now !== before) return now;
  }
  throw new Error(`no message after importing ${file}`);
}

/** The run's run file as the Runs page exports it. */
async function exportRunFile(page: Page, base: string, runId: string): Promise<string> {
  await page.goto(`${base}#/runs`);
  return (await downloadFrom(page, `[data-run-id="${runId}"] [data-testid="export-run"]`)).text;
}

describe.skipIf(browserSkipReason())(suiteTitle('report round trip: export, report, import'), () => {
  let { server, browser, page } = {} as AppSession;
  useApp((s) => ({ server, browser, page } = s), { watches: () => watches });
  const watches: PageWatch[] = [];
  const ids: string[] = [];

  beforeAll(async () => {
    for (const [name, file] of [
      ['gpt4o', PRED('TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json')],
      ['gpt4t', PRED('TA_output', 'predict_mini_dev_gpt-4-turbo_cot_SQLite.json')],
    ] as const) {
      const run = await runCli(['eval', '--predictions', file, ...common, '--run-out', at(`${name}.run.json`)]);
      expect(run.code, run.stderr).toBe(0);
      ids.push((JSON.parse(readFileSync(at(`${name}.run.json`), 'utf8')) as { run: { id: string } }).run.id);
    }
    await page.goto(`${server.url}#/runs`);
    for (const name of ['gpt4o', 'gpt4t'])
      expect(await importFile(page, at(`${name}.run.json`))).toMatch(/^Imported run /);
  }, 600_000);

  /** A page of the app in a browser profile of its own (no stored run). */
  async function freshPage(): Promise<Page> {
    const p = await (await browser.newContext(LAPTOP)).newPage();
    watches.push(watchPage(p));
    await p.goto(`${server.url}#/runs`);
    return p;
  }

  it('a run: export, report from the dashboard, import in a fresh profile: the same run file byte for byte', async () => {
    const [id] = ids;
    const before = await exportRunFile(page, server.url, id!);
    await page.goto(`${server.url}#/run/${id}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    const report = await downloadFrom(page, '[data-testid="export-report"]');
    expect(report.name).toBe('predict_mini_dev_gpt-4-o_cot_SQLite.json.report.html');
    writeFileSync(at('app.report.html'), report.text);

    const fresh = await freshPage();
    expect(await importFile(fresh, at('app.report.html'))).toBe(
      'Imported run "predict_mini_dev_gpt-4-o_cot_SQLite.json" (500 questions).',
    );
    expect(await exportRunFile(fresh, server.url, id!)).toBe(before);
    // Once more: the run is there now, and the import says so instead of storing it twice.
    await fresh.goto(`${server.url}#/runs`);
    expect(await importFile(fresh, at('app.report.html'))).toMatch(/the run of this report is already stored/);

    // The CLI's report of the run file stores the same run as the app's.
    const cli = await runCli(['report', '--run', at('gpt4o.run.json'), '--out', at('cli.report.html')]);
    expect(cli.code, cli.stderr).toBe(0);
    const other = await freshPage();
    expect(await importFile(other, at('cli.report.html'))).toMatch(/^Imported run /);
    expect(await exportRunFile(other, server.url, id!)).toBe(before);

    // The app's report opens from disk as the CLI's does, saying who made it.
    const r = await openReport(browser, at('app.report.html'));
    await r.page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    expect(await r.page.getByTestId('prov-report').textContent()).toMatch(
      /made by rlvr-workbench \d+\.\d+\.\d+ \(app\)/,
    );
    expect(otherRequests(r)).toEqual([]);
    expect(await r.violations()).toEqual([]);
    expect(r.watch.problems).toEqual([]);
    await r.context.close();
  }, 600_000);

  it('a comparison exported from the Compare view: both runs stored back as their run files', async () => {
    const before = [await exportRunFile(page, server.url, ids[0]!), await exportRunFile(page, server.url, ids[1]!)];
    await page.goto(`${server.url}#/compare/${ids[0]}/${ids[1]}`);
    await page
      .locator('[data-testid="compare-page"][data-ready="true"] [data-testid="compare-result"][data-drawn="true"]')
      .waitFor({ timeout: 240_000 });
    const report = await downloadFrom(page, '[data-testid="export-report"]');
    expect(report.name).toBe(
      'predict_mini_dev_gpt-4-o_cot_SQLite.json-vs-predict_mini_dev_gpt-4-turbo_cot_SQLite.json.report.html',
    );
    writeFileSync(at('compare.report.html'), report.text);
    const fresh = await freshPage();
    expect(await importFile(fresh, at('compare.report.html'))).toBe(
      'Imported run "predict_mini_dev_gpt-4-o_cot_SQLite.json" (500 questions). Imported run "predict_mini_dev_gpt-4-turbo_cot_SQLite.json" (500 questions).',
    );
    expect([await exportRunFile(fresh, server.url, ids[0]!), await exportRunFile(fresh, server.url, ids[1]!)]).toEqual(
      before,
    );
  }, 600_000);
});
