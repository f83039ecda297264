/**
 * The reward playground in Chromium on the built app: SQL typed into the editor on a real BIRD
 * mini-dev question (superhero) is scored in the page's worker, and each panel agrees with the
 * CLI's verdicts for the same SQL (EX, Soft-F1, TS, writes); the guided tour runs on the
 * embedded demo with the network off; a kept attempt opens in the scratch run's explorer. On
 * mini-dev with 3 of its 11 databases the page opens on the first question that has one (not
 * 1471), a constant answer (`SELECT 'true'` on 1338) is flagged and explained with its distinct
 * rows, a write is blamed instead of the gold, and the tour's constant-answer step wins on 719.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { DEMO_DATASET_NAME } from '../../src/ui/home/demo-library.svelte.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, readSharedText, sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, gotoHash, suiteTitle, waitForDemo } from './harness.ts';
import { routeHash } from '../../src/ui/shell/route.ts';
import {
  type AppSession,
  dismissOfflineNote,
  importDataset,
  playgroundSettled,
  screenshot,
  useApp,
} from './workbench-helpers.ts';

interface CliItem {
  index: number;
  sample: number;
  ex: number;
  soft_f1: number | null;
  ts?: number | null;
  mutated_db: boolean;
  status: string;
  /** With --gold-overlay. */
  ex_corrected_gold?: number | null;
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

/** The CLI's verdicts (`eval` on mini-dev, one worker, `flags` added) for JSON Lines predictions, the scored ones in sample order. */
async function cliItems(rows: { question_id: number; sql: string }[], flags: string[]): Promise<CliItem[]> {
  const preds = tempFile('playground-preds.jsonl');
  writeFileSync(preds, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const out = tempFile('playground-cli.json');
  const run = await runCli([
    'eval',
    '--predictions',
    preds,
    ...minidevFlags(),
    ...flags,
    '--workers',
    '1',
    '--out',
    out,
  ]);
  expect(run.code, run.stderr).toBe(0);
  return readJson<{ items: CliItem[] }>(out)
    .items.filter((i) => i.status !== 'missing-db')
    .sort((a, b) => a.sample - b.sample);
}

async function typeSql(page: Page, sql: string): Promise<void> {
  const editor = page.getByTestId('pg-editor');
  await editor.fill('');
  // The first characters typed key by key (each keystroke schedules an attempt and cancels the one before), the rest at once.
  await editor.pressSequentially(sql.slice(0, 12), { delay: 15 });
  await editor.fill(sql);
  await playgroundSettled(page);
}

describe.skipIf(browserSkipReason())(suiteTitle('the reward playground'), () => {
  let { page } = {} as AppSession;
  useApp((s) => ({ page } = s), { hash: '#/datasets' });
  let cli: CliItem[];

  beforeAll(async () => {
    cli = await cliItems(
      ATTEMPTS.map((sql) => ({ question_id: Q, sql })),
      ['--metrics', 'ex,soft-f1,ts'],
    );
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
    await playgroundSettled(page);
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
    await dismissOfflineNote(page);
    await screenshot(page, 'playground-1400.png', true);

    // The findings panel names a version-sensitive part of the attempt (the static scan of a run's annotations).
    await typeSql(page, gold.replace('SELECT COUNT(T1.id)', 'SELECT ROUND(COUNT(T1.id), 2)'));
    expect((await page.getByTestId('attempt-findings').textContent())?.replace(/\s+/g, ' ')).toContain(
      'version-sensitive (pred): round() to decimal places (float rounding) (SQLite 3.43.0)',
    );

    // The TEXT count is explained as a type difference, the float as digits.
    await typeSql(page, ATTEMPTS[1]!);
    expect(await page.getByTestId('explanation').locator('li[data-kind="type"]').count()).toBe(1);
    await typeSql(page, ATTEMPTS[2]!);
    expect(await page.getByTestId('explanation').locator('li[data-kind="float"]').count()).toBe(1);

    // The editor's state is in the address: a reload shows the same SQL and verdict.
    expect(decodeURIComponent(await page.evaluate(() => location.hash))).toContain('ts=1');
    await page.reload();
    await playgroundSettled(page);
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
    await playgroundSettled(page);
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
    // Opened from the explorer, the playground is prefilled with the stored SQL and carries the run.
    await page.getByTestId('open-playground').click();
    await playgroundSettled(page);
    expect(await page.getByTestId('pg-editor').inputValue()).toBe(ATTEMPTS[0]);
    expect(await page.evaluate(() => location.hash)).toMatch(/[?&]run=/);
    expect(await page.getByTestId('pg-run').textContent()).toContain('playground attempts');
    expect(await page.getByTestId('ex-rule').getAttribute('data-rule')).toBe('bird');
  }, 300_000);

  it("opened from a run with the Arcwise-Plat overlay: a question it corrects shows both golds and the attempt's EX against each, as the CLI's --gold-overlay", async () => {
    // The run the last step opened the playground from (the scratch run), and the dataset.
    const [path, query] = (await page.evaluate(() => location.hash)).split('?');
    const runId = new URLSearchParams(query).get('run')!;
    const datasetId = decodeURIComponent(path!.split('/')[2]!);
    const overlayFile = sharedData('bird', 'corrections', 'arcwise_plat_sql_only_with_diff.json');

    // A second attempt at the same question: the per-question samples view's links open a sample in the playground, with the run.
    await typeSql(page, ATTEMPTS[1]!);
    await page.getByTestId('pg-save').click();
    await page.getByTestId('pg-saved').waitFor({ timeout: 60_000 });
    const questionIndex = questions.findIndex((q) => q.questionId === Q);
    await gotoHash(page, routeHash({ page: 'question', runId, index: questionIndex }));
    await page.locator('[data-testid="question-samples"] li[data-sample="1"]').waitFor({ timeout: 60_000 });
    // Sample 0 (the gold), while the editor last held sample 1's SQL.
    await page.locator('li[data-sample="0"]').getByTestId('sample-playground').click();
    await expect.poll(() => page.getByTestId('pg-editor').inputValue()).toBe(ATTEMPTS[0]);
    await playgroundSettled(page);
    expect(new URLSearchParams((await page.evaluate(() => location.hash)).split('?')[1]).get('run')).toBe(runId);
    expect(await page.getByTestId('attempt-verdict').getAttribute('data-ex')).toBe(String(cli[0]!.ex));

    await gotoHash(page, routeHash({ page: 'run', runId }));
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    await page.getByTestId('overlay-file').setInputFiles(overlayFile);
    await page.locator('[data-testid="gold-overlay"][data-attached="true"]').waitFor({ timeout: 120_000 });

    // #1376, corrected by the overlay, with gpt-4o CoT's answer (EX 1 official, EX 0 corrected on the dashboard's run).
    const index = questions.findIndex((q) => q.questionId === 1376);
    const preds = JSON.parse(
      readSharedText('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json'),
    ) as Record<string, string>;
    const sql = preds[String(index)]!.split('\t----- bird -----\t')[0]!;
    const [want] = await cliItems([{ question_id: 1376, sql }], ['--gold-overlay', overlayFile]);
    if (!want) throw new Error('the CLI scored no item for #1376');
    expect([want.ex, want.ex_corrected_gold]).toEqual([1, 0]);

    await gotoHash(
      page,
      routeHash({ page: 'playground', datasetId, index, runId, attempt: { sql, formula: 'ex', ts: false } }),
    );
    await expect.poll(() => page.getByTestId('pg-question-title').textContent()).toContain('Question 1376');
    await playgroundSettled(page);
    const corrections = JSON.parse(readFileSync(overlayFile, 'utf8')) as { question_id: string; SQL: string }[];
    const flat = (t: string | null) => (t ?? '').replace(/\s+/g, ' ').trim();
    expect(flat(await page.getByTestId('pg-corrected-gold-sql').textContent())).toBe(
      flat(corrections.find((c) => c.question_id === '1376')!.SQL),
    );
    expect(await page.getByTestId('attempt-verdict').getAttribute('data-ex')).toBe(String(want.ex));
    expect(await page.getByTestId('score-ex-corrected').getAttribute('data-value')).toBe(
      String(want.ex_corrected_gold),
    );
    expect(await page.getByTestId('attempt-corrected').getAttribute('data-flips')).toBe('true');
    await dismissOfflineNote(page);
    await screenshot(page, 'playground-overlay-1400.png', true);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'playground-overlay-390.png', true);
    await page.setViewportSize({ width: 1400, height: 1000 });
  }, 400_000);

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
      await playgroundSettled(page);
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
      // Each step's reward under the editor's formula (`ex` here): the gold's 1, DROP TABLE's 0.
      expect(await page.locator('[data-step="gold"] [data-testid="tour-reward"]').getAttribute('data-value')).toBe('1');
      expect(
        await page.locator('[data-step="drop-table"] [data-testid="tour-reward"]').getAttribute('data-value'),
      ).toBe('0');
      await dismissOfflineNote(page);
      await screenshot(page, 'playground-tour.png', true);
      // A step prefills the editor.
      await page.getByTestId('tour-try-temp-shadow').click();
      // The question opens (the editor gets the step's SQL) before its verdict is waited for.
      await expect.poll(() => page.getByTestId('pg-editor').inputValue()).toMatch(/^CREATE TEMP TABLE/);
      await playgroundSettled(page);
      expect(await page.getByTestId('attempt-flags').locator('[data-class="temp-shadow"]').count()).toBe(1);
    } finally {
      await page.context().setOffline(false);
    }
  }, 420_000);

  it("opens mini-dev on its first question with a database; SELECT 'true' on 1338 is flagged as a constant answer; a DELETE is blamed, not the gold; the tour's constant answer wins on 719", async () => {
    const present = new Set(readdirSync(sharedData('bird', 'databases')));
    const first = questions.find((q) => present.has(q.dbId))!;
    expect(questions[0]!.questionId).toBe(1471);
    expect(present.has(questions[0]!.dbId)).toBe(false);
    await gotoHash(page, '#/playground');
    await page.getByTestId('pg-dataset').selectOption({ label: 'BIRD mini-dev' });
    await expect
      .poll(() => page.getByTestId('pg-question-title').textContent())
      .toContain(`Question ${first.questionId} · ${first.dbId}`);
    await playgroundSettled(page);
    expect(await page.getByTestId('pg-no-db').count()).toBe(0);
    expect(await page.getByTestId('attempt-verdict').getAttribute('data-ex')).toBe('1');

    // 1338: the gold returns 'true' three times; SELECT 'true' once.
    await page.getByTestId('pg-question-id').fill('1338');
    await page.getByTestId('pg-question-id').press('Enter');
    await expect.poll(() => page.getByTestId('pg-question-title').textContent()).toContain('Question 1338');
    await typeSql(page, "SELECT 'true'");
    expect(await page.getByTestId('attempt-verdict').getAttribute('data-ex')).toBe('1');
    const why = (await page.getByTestId('explanation').textContent())!.replace(/\s+/g, ' ');
    expect(why).toContain('1 distinct row (the gold returns 3 rows, the attempt 1 row)');
    expect(why).not.toContain('3 distinct rows');
    expect(await page.getByTestId('attempt-flags').locator('[data-class="constant-answer"]').count()).toBe(1);
    expect(await page.getByTestId('finding-constant').textContent()).toContain('reads no table of the database');
    expect(
      await page.getByTestId('attempt-rubric').locator('[data-check="schema-only"]').getAttribute('data-met'),
    ).toBe('false');
    await dismissOfflineNote(page);
    await screenshot(page, 'playground-constant-1400.png', true);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'playground-constant-390.png', true);
    await page.setViewportSize({ width: 1400, height: 1000 });

    // 717 emptied by a DELETE: the write is named, the gold is not said to return no rows.
    await page.getByTestId('pg-question-id').fill('717');
    await page.getByTestId('pg-question-id').press('Enter');
    await expect.poll(() => page.getByTestId('pg-question-title').textContent()).toContain('Question 717');
    await typeSql(page, 'DELETE FROM superhero');
    expect(await page.getByTestId('attempt-verdict').getAttribute('data-ex')).toBe('1');
    const findings = (await page.getByTestId('attempt-findings').textContent())!;
    expect(findings.replace(/\s+/g, ' ')).toContain(
      "the attempt changed the database before the gold ran: the gold's result (0 rows) is of the changed database",
    );
    expect(findings).not.toContain('gold returns no rows');
    expect(await page.getByTestId('finding-write').count()).toBe(1);

    // 719 counts: its gold is one row of one value, so the tour's constant answer wins on it.
    await page.getByTestId('pg-question-id').fill(String(Q));
    await page.getByTestId('pg-question-id').press('Enter');
    await expect.poll(() => page.getByTestId('pg-question-title').textContent()).toContain(`Question ${Q}`);
    await playgroundSettled(page);
    await page.getByTestId('tour-run').click();
    const step = page.locator('[data-step="constant-answer"]');
    await expect.poll(() => step.getAttribute('data-ex'), { timeout: 300_000 }).not.toBe('');
    expect(await step.getAttribute('data-ex')).toBe('1');
    expect(await step.getAttribute('data-read-only-ex')).toBe('1');
    expect(await step.locator('[data-question]').getAttribute('data-question')).toBe(String(Q));
    const text = (await step.textContent())!.replace(/\s+/g, ' ');
    expect(text).toMatch(/SELECT \d+/);
    expect(text).toContain('EX scores 1 though nothing was looked up');
    await expect.poll(() => page.getByTestId('tour-run').textContent(), { timeout: 300_000 }).toBe('Run the tour');
    await page.getByTestId('tour').scrollIntoViewIfNeeded();
    await screenshot(page, 'playground-tour-constant-1400.png', false);
    await page.setViewportSize({ width: 390, height: 844 });
    await step.scrollIntoViewIfNeeded();
    await screenshot(page, 'playground-tour-constant-390.png', false);
    await page.setViewportSize({ width: 1400, height: 1000 });
    // "Try it" opens the literal in the editor, flagged.
    await page.getByTestId('tour-try-constant-answer').click();
    await expect.poll(() => page.getByTestId('pg-editor').inputValue()).toMatch(/^SELECT \d+$/);
    await playgroundSettled(page);
    expect(await page.getByTestId('attempt-verdict').getAttribute('data-ex')).toBe('1');
    expect(await page.getByTestId('finding-constant').count()).toBe(1);
  }, 600_000);
});
