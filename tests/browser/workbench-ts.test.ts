import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import {
  type AppSession,
  downloadFrom,
  importDataset,
  officialCells,
  screenshot,
  startRun,
  useApp,
} from './workbench-helpers.ts';

interface CliItem {
  index: number;
  ex: 0 | 1;
  ts?: 0 | 1 | null;
  status: string;
  gold_order_dependent?: boolean | null;
  passes_by_row_order?: boolean | null;
}
interface CliBucket {
  count: number;
  ex: number;
  ts: number;
  ex_only: number;
}
interface CliReport {
  summary: { by_difficulty: Record<string, CliBucket> };
  items: CliItem[];
}

/** Records every text the run progress's suite-build line shows from now on. */
async function watchSuiteProgress(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { suiteProgress: string[] }).suiteProgress = seen;
    new MutationObserver(() => {
      const text = document.querySelector('[data-testid="suite-progress"]')?.textContent?.trim();
      if (text && seen[seen.length - 1] !== text) seen.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

const suiteProgressShown = (page: Page) =>
  page.evaluate(() => (window as unknown as { suiteProgress: string[] }).suiteProgress);

const PREDICTIONS = sharedData('bird', 'predictions', 'sql_output_kg', 'predict_mini_dev_gpt-4_sqlite.json');

/**
 * Metric ts in the app: a run of real BIRD mini-dev predictions with TS ticked in the new-run
 * form, evaluated by the browser's SQL workers (suites built there), gives the CLI's
 * `eval --metrics ex,ts` figures: the TS row of the official table, and ts per item in the
 * exported run file, on the items whose databases are here.
 */
describe.skipIf(browserSkipReason())(suiteTitle('metric ts in the workbench on BIRD mini-dev'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/datasets' });
  let cli: CliReport;
  let runId: string;

  beforeAll(async () => {
    const out = tempFile('ts.json');
    const run = await runCli([
      'eval',
      '--predictions',
      PREDICTIONS,
      ...minidevFlags(),
      '--metrics',
      'ex,soft-f1,ts',
      '--out',
      out,
    ]);
    if (run.code !== 0) throw new Error(`the CLI failed: ${run.stderr}`);
    cli = readJson<CliReport>(out);
  }, 240_000);

  it("shows the CLI's TS beside EX and stores the same ts on every item", async () => {
    const imported = await importDataset(page, { kind: 'bird', name: 'BIRD mini-dev', folder: sharedData('bird') });
    expect(imported.ok).toBe(true);
    await watchSuiteProgress(page);
    const run = await startRun(page, {
      datasetName: 'BIRD mini-dev',
      predictions: PREDICTIONS,
      name: 'gpt-4 ts',
      tickMetrics: ['TS'],
    });
    expect(run.error).toBeNull();
    await page.getByTestId('official-table').waitFor();
    const shown = await suiteProgressShown(page);
    // Each of the three databases' suites was built in the browser, with its progress shown.
    for (const db of ['student_club', 'superhero', 'toxicology']) {
      expect(
        shown.some((t) => t.startsWith(`Building the test suite of ${db}:`)),
        `${db} in ${JSON.stringify(shown)}`,
      ).toBe(true);
    }
    expect(shown.every((t) => /: \d+ of 20 candidate databases$/.test(t))).toBe(true);
    await screenshot(page, 'workbench-ts-dashboard.png', true);
    const cells = await officialCells(page);
    for (const level of ['simple', 'moderate', 'challenging', 'total']) {
      const b = cli.summary.by_difficulty[level]!;
      expect({ level, ex: cells.ex![level], ts: cells.ts![level] }).toEqual({
        level,
        ex: formatFixed2(b.ex),
        ts: formatFixed2(b.ts),
      });
    }
    const exOnly = cli.summary.by_difficulty.total!.ex_only;
    expect(exOnly).toBeGreaterThan(0);
    expect(await page.locator('[data-reward-count="ex-only"]').textContent()).toBe(String(exOnly));
    runId = run.runId!;

    await page.getByTestId('nav-runs').click();
    const file = JSON.parse(
      (await downloadFrom(page, `[data-run-id="${run.runId}"] [data-testid="export-run"]`)).text,
    ) as RunFile;
    expect(file.run.config.metrics).toContain('ts');
    expect(file.run.config.suite).toMatchObject({ seed: 1, size: 8 });
    const scored = (xs: Array<{ index: number; status: string }>) => xs.filter((x) => x.status !== 'missing-db').length;
    expect(scored(file.samples)).toBe(140);
    const got = file.samples.map((s) => ({
      index: s.index,
      ex: s.ex,
      ts: s.ts ?? null,
      order: s.goldOrderDependent ?? null,
      byOrder: s.passesByRowOrder ?? null,
    }));
    const want = cli.items.map((i) => ({
      index: i.index,
      ex: i.ex,
      ts: i.ts ?? null,
      order: i.gold_order_dependent ?? null,
      byOrder: i.passes_by_row_order ?? null,
    }));
    expect(got).toEqual(want);
  }, 300_000);

  it('lists the EX-only passes in the explorer and shows the suite database where pred and gold differ', async () => {
    await page.goto(`${server.url}#/run/${runId}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    await page.locator('[data-reward-count="ex-only"]').click();
    await page.getByTestId('item-list').waitFor();
    const exOnly = cli.items.filter((i) => i.ex === 1 && i.ts === 0);
    await expect.poll(() => page.getByTestId('filter-count').textContent()).toContain(`${exOnly.length} of 500 items`);
    const first = page.locator('[data-testid="item-list"] [role="option"]').first();
    const index = Number(await first.getAttribute('data-index'));
    expect(exOnly.map((i) => i.index)).toContain(index);
    await first.click();
    const detail = page.locator(`[data-testid="item-detail"][data-index="${index}"]`);
    const verdict = detail.getByTestId('ts-verdict');
    await verdict.waitFor();
    expect(await verdict.getAttribute('data-ts')).toBe('0');
    expect(await verdict.textContent()).toContain('EX-only pass');
    await detail.getByTestId('ts-gold-rows').waitFor();
    // Rows on one side only are highlighted on at least one of the two tables.
    expect(await detail.locator('[data-testid="ts-counterexample"] tr[data-only="true"]').count()).toBeGreaterThan(0);
    await verdict.scrollIntoViewIfNeeded();
    await screenshot(page, 'workbench-ts-item.png');
  }, 120_000);

  it('keeps the suites in IndexedDB: after a reload, a second TS run loads them instead of building them, with the same TS', async () => {
    await page.reload();
    await page.getByTestId('nav-runs').waitFor();
    await watchSuiteProgress(page);
    const run = await startRun(page, {
      datasetName: 'BIRD mini-dev',
      predictions: PREDICTIONS,
      name: 'gpt-4 ts again',
      tickMetrics: ['TS'],
    });
    expect(run.error).toBeNull();
    await page.getByTestId('official-table').waitFor();
    expect(await suiteProgressShown(page)).toEqual([]);
    const cells = await officialCells(page);
    expect(cells.ts!.total).toBe(formatFixed2(cli.summary.by_difficulty.total!.ts));
  }, 300_000);
});
