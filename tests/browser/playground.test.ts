/**
 * The reward playground in Chromium on the built app: SQL typed into the editor on a real BIRD
 * mini-dev question (superhero) is scored in the page's worker, and each panel agrees with the
 * CLI's verdicts for the same SQL (EX, Soft-F1, TS, writes); the guided tour runs on the
 * embedded demo with the network off; a kept attempt opens in the scratch run's explorer.
 */
import { writeFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { DEMO_DATASET_NAME } from '../../src/ui/home/demo-library.svelte.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, readSharedText, sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, gotoHash, suiteTitle, waitForDemo } from './harness.ts';
import { type AppSession, importDataset, screenshot, useApp } from './workbench-helpers.ts';

interface CliItem {
  index: number;
  sample: number;
  ex: number;
  soft_f1: number | null;
  ts?: number | null;
  mutated_db: boolean;
  status: string;
}

const questions = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json');
const Q = 719;
const gold = questions.find((q) => q.questionId === Q)!.goldSql;
/** What a student would try: the gold, a TEXT count, other float digits, a hard-coded count (EX-only), a DELETE. */
const ATTEMPTS = [
  gold,
  gold.replace('SELECT COUNT(T1.id)', 'SELECT CAST(COUNT(T1.id) AS TEXT)'),
  gold.replace('SELECT COUNT(T1.id)', 'SELECT COUNT(T1.id) * 1.00000001'),
  'DELETE FROM superhero',
];

/** Waits until the verdict shown is for the editor's SQL and nothing runs. */
async function settled(page: Page): Promise<void> {
  await page.waitForSelector(
    '[data-testid="playground"][data-running="false"] [data-testid="attempt-verdict"][data-stale="false"]',
    { timeout: 180_000 },
  );
}

async function typeSql(page: Page, sql: string): Promise<void> {
  const editor = page.getByTestId('pg-editor');
  await editor.fill('');
  // The first characters typed key by key (each keystroke schedules an attempt and cancels the one before), the rest at once.
  await editor.pressSequentially(sql.slice(0, 12), { delay: 15 });
  await editor.fill(sql);
  await settled(page);
}

describe.skipIf(browserSkipReason())(suiteTitle('the reward playground'), () => {
  let { page } = {} as AppSession;
  useApp((s) => ({ page } = s), { hash: '#/datasets' });
  let cli: CliItem[];

  beforeAll(async () => {
    const preds = tempFile('playground-preds.jsonl');
    writeFileSync(preds, ATTEMPTS.map((sql) => JSON.stringify({ question_id: Q, sql })).join('\n') + '\n');
    const out = tempFile('playground-cli.json');
    const run = await runCli([
      'eval',
      '--predictions',
      preds,
      ...minidevFlags(),
      '--metrics',
      'ex,soft-f1,ts',
      '--workers',
      '1',
      '--out',
      out,
    ]);
    expect(run.code, run.stderr).toBe(0);
    cli = readJson<{ items: CliItem[] }>(out)
      .items.filter((i) => i.status !== 'missing-db')
      .sort((a, b) => a.sample - b.sample);
    expect(cli).toHaveLength(ATTEMPTS.length);
    expect((await importDataset(page, { kind: 'bird', name: 'BIRD mini-dev', folder: sharedData('bird') })).ok).toBe(
      true,
    );
  }, 400_000);

  it('scores typed SQL on a real question as the CLI does, panel by panel', async () => {
    await gotoHash(page, '#/playground');
    await page.getByTestId('pg-dataset').selectOption({ label: 'BIRD mini-dev' });
    await page.getByTestId('pg-question-id').fill(String(Q));
    await page.getByTestId('pg-question-id').press('Enter');
    await expect.poll(() => page.getByTestId('pg-question-title').textContent()).toContain(`Question ${Q}`);
    await page.getByTestId('pg-ts').check();
    await settled(page);
    for (const [i, sql] of ATTEMPTS.entries()) {
      await typeSql(page, sql);
      const want = cli[i]!;
      const verdict = page.getByTestId('attempt-verdict');
      expect(await verdict.getAttribute('data-ex'), sql).toBe(String(want.ex));
      const softF1 = await page.getByTestId('score-soft-f1').getAttribute('data-value');
      expect(softF1 === '' ? null : Number(softF1), sql).toBe(want.soft_f1);
      const ts = await page.getByTestId('score-ts').getAttribute('data-value');
      expect(ts === '' ? null : Number(ts), sql).toBe(want.ts ?? null);
      expect(await page.getByTestId('flag-writes').count(), sql).toBe(want.mutated_db ? 1 : 0);
    }
    // The DELETE: official EX 1 on an emptied table, refused read-only, the emptied table named, the exploit class shown.
    expect(await page.getByTestId('score-read-only').getAttribute('data-value')).toBe('0');
    expect(await page.getByTestId('attempt-changes').textContent()).toMatch(/main\.superhero: \d+ → 0 rows/);
    expect(await page.getByTestId('attempt-flags').locator('[data-class="delete-table"]').count()).toBe(1);
    expect(await page.getByTestId('attempt-rubric').locator('[data-check="no-write"]').getAttribute('data-met')).toBe(
      'false',
    );
    await screenshot(page, 'playground-1400.png', true);

    // The TEXT count is explained as a type difference, the float as digits.
    await typeSql(page, ATTEMPTS[1]!);
    expect(await page.getByTestId('explanation').locator('li[data-kind="type"]').count()).toBe(1);
    await typeSql(page, ATTEMPTS[2]!);
    expect(await page.getByTestId('explanation').locator('li[data-kind="float"]').count()).toBe(1);

    // The editor's state is in the address: a reload shows the same SQL and verdict.
    expect(decodeURIComponent(await page.evaluate(() => location.hash))).toContain('ts=1');
    await page.reload();
    await settled(page);
    expect(await page.getByTestId('pg-editor').inputValue()).toBe(ATTEMPTS[2]);
    expect(await page.getByTestId('attempt-verdict').getAttribute('data-ex')).toBe('0');

    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'playground-390.png', true);
    await page.setViewportSize({ width: 1400, height: 1000 });
  }, 400_000);

  it('cancels a query that runs long at the next keystroke, and typing leaves the page responsive', async () => {
    // Long tasks on the page while typing (execution is in the worker); reported, not asserted (a timing).
    await page.evaluate(() => {
      const w = window as unknown as { __longTasks: number[] };
      w.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.__longTasks.push(e.duration);
      }).observe({ type: 'longtask' });
    });
    const before = Number(await page.getByTestId('playground').getAttribute('data-cancelled'));
    const endless = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
    await page.getByTestId('pg-editor').fill(endless);
    await page.waitForSelector('[data-testid="playground"][data-running="true"]');
    // It runs (30 s limit) until the next keystroke cancels it.
    await page.waitForTimeout(1500);
    expect(await page.getByTestId('playground').getAttribute('data-running')).toBe('true');
    await page.getByTestId('pg-editor').fill('');
    await page.getByTestId('pg-editor').pressSequentially(gold, { delay: 5 });
    await settled(page);
    expect(Number(await page.getByTestId('playground').getAttribute('data-cancelled'))).toBeGreaterThan(before);
    expect(await page.getByTestId('attempt-verdict').getAttribute('data-ex')).toBe('1');
    expect(await page.getByTestId('pg-error').count()).toBe(0);
    const longest = await page.evaluate(() =>
      Math.max(0, ...(window as unknown as { __longTasks: number[] }).__longTasks),
    );
    process.stderr.write(
      `[playground] longest main-thread task while typing ${gold.length} characters: ${Math.round(longest)} ms\n`,
    );
  }, 300_000);

  it('keeps an attempt as a sample of the scratch run, which opens in the explorer', async () => {
    await typeSql(page, ATTEMPTS[0]!);
    await page.getByTestId('pg-save').click();
    await page.getByTestId('pg-saved-link').click();
    const item = page.getByTestId('item-detail');
    await item.waitFor({ timeout: 60_000 });
    expect(await item.getAttribute('data-ex')).toBe('1');
    expect(await item.locator('[data-testid="item-question"]').textContent()).toBe(
      questions.find((q) => q.questionId === Q)!.question,
    );
    // Opened from the explorer, the playground is prefilled with the stored SQL.
    await page.getByTestId('open-playground').click();
    await settled(page);
    expect(await page.getByTestId('pg-editor').inputValue()).toBe(ATTEMPTS[0]);
  }, 300_000);

  it('runs the guided tour on the embedded demo with the network off', async () => {
    await gotoHash(page, '#/');
    await waitForDemo(page);
    // The playground's code is loaded (it is a lazy chunk), then the network goes off.
    await gotoHash(page, '#/playground');
    await page.getByTestId('pg-dataset').waitFor();
    await page.context().setOffline(true);
    try {
      await gotoHash(page, '#/runs');
      await gotoHash(page, '#/playground');
      await page.getByTestId('pg-dataset').selectOption({ label: DEMO_DATASET_NAME });
      await settled(page);
      await page.getByTestId('tour-run').click();
      const rows = page.getByTestId('tour').locator('tbody tr');
      const n = await rows.count();
      expect(n).toBeGreaterThanOrEqual(7);
      await expect
        .poll(
          async () => await rows.evaluateAll((trs) => trs.filter((tr) => tr.getAttribute('data-ex') !== '').length),
          { timeout: 300_000 },
        )
        .toBe(n);
      // The gold wins; the DELETE wins officially on an empty result and loses read-only; DROP TABLE never wins.
      expect(await page.locator('[data-step="gold"]').getAttribute('data-ex')).toBe('1');
      expect(await page.locator('[data-step="drop-table"]').getAttribute('data-ex')).toBe('0');
      expect(await page.locator('[data-step="delete-table"]').getAttribute('data-read-only-ex')).toBe('0');
      await screenshot(page, 'playground-tour.png', true);
      // A step prefills the editor.
      await page.getByTestId('tour-try-temp-shadow').click();
      await settled(page);
      expect(await page.getByTestId('pg-editor').inputValue()).toMatch(/^CREATE TEMP TABLE/);
      expect(await page.getByTestId('attempt-flags').locator('[data-class="temp-shadow"]').count()).toBe(1);
    } finally {
      await page.context().setOffline(false);
    }
  }, 420_000);
});
