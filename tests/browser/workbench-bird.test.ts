import { writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { evalMinidev, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';
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
  question_id: number;
  ex: 0 | 1;
  soft_f1: number | null;
  status: string;
  pred_rows: number | null;
  gold_rows: number | null;
}
interface CliBucket {
  count: number;
  ex: number;
  soft_f1: number;
}
interface CliReport {
  summary: { by_difficulty: Record<string, CliBucket>; status_counts: Record<string, number> };
  items: CliItem[];
}

const PREDICTIONS = sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json');

/**
 * The whole workbench on real BIRD mini-dev: the folder imported through the folder picker
 * (the app's server never serves the data), a published model's predictions evaluated in the
 * browser, compared item by item with the CLI, kept across a reload, explored item by item.
 */
describe.skipIf(browserSkipReason())(suiteTitle('the workbench on BIRD mini-dev'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/datasets' });
  let cli: CliReport;
  let runId: string;

  beforeAll(async () => {
    cli = (await evalMinidev<CliReport>(PREDICTIONS)).report;
  });

  it('imports the BIRD folder through the folder input: questions, gold, the three databases with their fingerprints', async () => {
    const imported = await importDataset(page, { kind: 'bird', name: 'BIRD mini-dev', folder: sharedData('bird') });
    expect(imported).toEqual({ ok: true, message: 'Imported "BIRD mini-dev": 500 questions, 3 databases.' });
    const card = page.getByTestId('dataset-card');
    await card.getByTestId('db-table').waitFor();
    expect(await card.getByTestId('by-difficulty').textContent()).toMatch(
      /simple: 148\s*moderate: 250\s*challenging: 102/,
    );
    for (const db of ['superhero', 'student_club', 'toxicology']) {
      const row = card.locator(`tr[data-db="${db}"]`);
      expect(await row.locator('td.sha').textContent()).toMatch(/^[0-9a-f]{64}$/);
      expect(await row.textContent()).toContain('BIRD dev');
    }
    expect(await card.getByTestId('without-db').innerText()).toContain('360 questions have no database');
    expect(await card.textContent()).toContain('minidev/mini_dev_sqlite_gold.sql');
    // The same folder again under the same name: said so, and no second dataset.
    const datasets = page.locator('[data-testid="dataset-list"] [data-dataset-id]');
    const stored = await datasets.count();
    const again = await importDataset(page, { kind: 'bird', name: 'BIRD mini-dev', folder: sharedData('bird') });
    expect(again.ok).toBe(true);
    expect(again.message).toMatch(
      /^"BIRD mini-dev" is already stored with these same files \(imported .+\): nothing new was stored\.$/,
    );
    await screenshot(page, 'workbench-bird-import-again.png');
    expect(await datasets.count()).toBe(stored);
    // Nothing of BIRD came over HTTP (the app's server has only the built app; the demo's own database may be precached).
    expect(server.requests.filter((p) => /superhero|student_club|toxicology|mini_dev|predict_/.test(p))).toEqual([]);
  });

  it("evaluates a published model's predictions and finds the CLI's EX and Soft-F1 on every one of the 500 items", async () => {
    const run = await startRun(page, {
      datasetName: 'BIRD mini-dev',
      predictions: PREDICTIONS,
      name: 'gpt-4o cot',
      expectProgress: true,
    });
    expect(run.error).toBeNull();
    runId = run.runId!;
    await page.locator('canvas').first().waitFor();
    await screenshot(page, 'workbench-bird-dashboard.png', true);

    const cells = await officialCells(page);
    for (const level of ['simple', 'moderate', 'challenging', 'total']) {
      const b = cli.summary.by_difficulty[level]!;
      expect({ level, count: cells.count![level], ex: cells.ex![level], f1: cells['soft-f1']![level] }).toEqual({
        level,
        count: String(b.count),
        ex: formatFixed2(b.ex),
        f1: formatFixed2(b.soft_f1),
      });
    }
    expect(await page.locator('[data-count="error"]').textContent()).toBe(String(cli.summary.status_counts.error));

    await page.getByTestId('nav-runs').click();
    const file = JSON.parse(
      (await downloadFrom(page, `[data-run-id="${runId}"] [data-testid="export-run"]`)).text,
    ) as RunFile;
    expect(file.samples).toHaveLength(500);
    const got = file.samples.map((s) => ({
      index: s.index,
      ex: s.ex,
      missing: s.status === 'missing-db',
      f1: s.softF1 === null ? null : Math.round(s.softF1 * 1e9),
    }));
    const want = cli.items.map((i) => ({
      index: i.index,
      ex: i.ex,
      missing: i.status === 'missing-db',
      f1: i.soft_f1 === null ? null : Math.round(i.soft_f1 * 1e9),
    }));
    expect(got).toEqual(want);
  });

  it('exports BIRD predictions that give the CLI the same EX on every item', async () => {
    const exported = await downloadFrom(page, `[data-run-id="${runId}"] [data-testid="export-bird"]`);
    const file = tempFile(exported.name);
    writeFileSync(file, exported.text);
    const again = (await evalMinidev<CliReport>(file)).report;
    expect(again.items.map((i) => [i.index, i.ex, i.status])).toEqual(cli.items.map((i) => [i.index, i.ex, i.status]));
    const csv = await downloadFrom(page, `[data-run-id="${runId}"] [data-testid="export-csv"]`);
    expect(csv.text.split('\r\n').filter(Boolean)).toHaveLength(501);
  });

  it('still has the dataset, the run and its 500 items after a reload', async () => {
    await page.reload();
    await page.getByTestId('run-list').locator(`[data-run-id="${runId}"]`).waitFor();
    expect(await page.locator(`[data-run-id="${runId}"]`).getAttribute('data-status')).toBe('done');
    await page.getByTestId('nav-datasets').click();
    expect(await page.getByTestId('dataset-list').textContent()).toContain('BIRD mini-dev');
    await page.goto(`${server.url}#/run/${runId}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    expect((await officialCells(page)).ex!.total).toBe(formatFixed2(cli.summary.by_difficulty.total!.ex));
    await page.getByTestId('nav-items').click();
    await page.getByTestId('item-list').waitFor();
    expect(await page.getByTestId('filter-count').textContent()).toContain('500 of 500 items');
  });

  it('opens a wrong item and shows both result tables, with its row counts, and moves on with the keyboard', async () => {
    await page.getByTestId('filter-outcome').selectOption('wrong-result');
    const wrong = cli.items.filter((i) => i.status === 'ok' && i.ex === 0);
    await expect.poll(() => page.getByTestId('filter-count').textContent()).toContain(`${wrong.length} of 500 items`);
    const first = page.locator('[data-testid="item-list"] [role="option"]').first();
    // The virtual list re-renders after the filter: wait until its first row is a wrong one.
    await expect
      .poll(async () => {
        const at = Number(await first.getAttribute('data-index'));
        return wrong.some((w) => w.index === at);
      })
      .toBe(true);
    const index = Number(await first.getAttribute('data-index'));
    await first.click();
    const detail = page.locator(`[data-testid="item-detail"][data-index="${index}"]`);
    await detail.getByTestId('gold-rows').waitFor({ timeout: 30_000 });
    const ref = cli.items[index]!;
    expect(await detail.getByTestId('pred-rows').getAttribute('data-row-count')).toBe(String(ref.pred_rows));
    expect(await detail.getByTestId('gold-rows').getAttribute('data-row-count')).toBe(String(ref.gold_rows));
    expect(await detail.locator('[data-testid="gold-rows"] th').count()).toBeGreaterThan(0);
    expect(await detail.locator('[data-testid="pred-rows"] tbody tr').count()).toBeGreaterThan(0);
    expect(await detail.getByTestId('pred-sql').locator('span[class^="hljs-"]').count()).toBeGreaterThan(0);
    expect(await detail.getByTestId('item-question').textContent()).toBeTruthy();
    await screenshot(page, 'workbench-bird-item.png');

    await page.getByTestId('item-list').focus();
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    const second = Number(
      await page.locator('[data-testid="item-list"] [role="option"]').nth(1).getAttribute('data-index'),
    );
    await page.locator(`[data-testid="item-detail"][data-index="${second}"]`).waitFor();
    expect(page.url()).toContain(`/items/${second}.0`);
  });
});
