/**
 * The trainer's reward columns in the built app (headless Chromium): a TRL completions Parquet
 * (tests/helpers/trainer-dumps.ts, built from a real mini-dev prediction file: two
 * stand-in reward functions, one of them NaN on every 10th row, and the advantage) imported as
 * a training run. The app's own series file export keeps each sample's columns exactly as the
 * helper wrote them; the item view shows them under the trainer's score; the question across
 * the steps carries them in the trainer score's tooltip; the step's CSV export has one
 * `trainer_<name>` column per reward after `trainer_score`. Screenshots of the item view at
 * 1400×1000 and 390×844 in test-artifacts/.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { trainerRewardsText } from '../../src/core/series/model.ts';
import { PREDICTION_FILES, stepOf } from '../helpers/series-dumps.ts';
import { predictionsOf, trlRows, writeTrlCompletions } from '../helpers/trainer-dumps.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, downloadFrom, importBirdMiniDev, screenshot, useApp } from './workbench-helpers.ts';

const DESKTOP = { width: 1400, height: 1000 };
const PHONE = { width: 390, height: 844 };
/**
 * The step's prediction file: llama-3-8b (sql_output_kg), whose queries all run in well under a
 * second. The last file (phi-3-medium) holds question 247's 27-second query, which these reward
 * columns have nothing to do with.
 */
const STEP_FILE = PREDICTION_FILES.findIndex((f) =>
  f.endsWith('predict_mini_dev_meta-llama-3-8b-instruct-2_sqlite.json'),
);

/** The helper's own row of each question id: its reward columns as the dump holds them (NaN: no value). */
const expected = new Map(
  predictionsOf(STEP_FILE).map(({ q }, k) => {
    const r = trlRows(STEP_FILE)[k]!;
    return [
      q.question_id,
      {
        accuracy_reward: r.accuracy_reward,
        format_reward: Number.isNaN(r.format_reward) ? null : r.format_reward,
        advantage: r.advantage,
      },
    ];
  }),
);

async function shots(page: Page, name: string, focus: Locator): Promise<void> {
  const ok = page.getByRole('button', { name: 'OK, dismiss this note' });
  if (await ok.isVisible()) await ok.click();
  for (const [size, viewport] of [
    ['1400', DESKTOP],
    ['390', PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(300);
    await focus.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await page.waitForTimeout(200);
    await screenshot(page, `${name}-${size}.png`);
  }
  await page.setViewportSize(DESKTOP);
}

describe.skipIf(browserSkipReason())(suiteTitle("the trainer's reward columns beside our verdict"), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { context: { viewport: DESKTOP, acceptDownloads: true }, hash: '#/datasets' });
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-series-rewards-'));

  beforeAll(async () => {
    writeTrlCompletions(dir, [STEP_FILE]);
    await importBirdMiniDev(page);
  }, 900_000);

  it('keeps, shows and exports each sample’s reward columns of a TRL completions Parquet', async () => {
    await page.getByTestId('nav-series').click();
    const select = page.getByTestId('series-dataset');
    await select.selectOption(
      (await select.locator('option', { hasText: 'BIRD mini-dev' }).first().getAttribute('value'))!,
    );
    await page.getByTestId('series-folder').setInputFiles(dir);
    await page.getByTestId('series-preview').waitFor();
    await page.getByTestId('series-name').fill('trl rewards');
    await page.getByTestId('series-start').click();
    await page.waitForURL(/#\/series\/[^/?]+$/, { timeout: 900_000 });
    const seriesId = decodeURIComponent(/#\/series\/([^/?]+)$/.exec(page.url())![1]!);
    await page.locator('[data-testid="series-page"][data-loaded="true"][data-steps="1"]').waitFor({ timeout: 600_000 });

    // The app's own series file: every sample's columns are its dump row's, paired like the trainer's score.
    const file = parseSeriesFile((await downloadFrom(page, '[data-testid="series-export-series-file"]')).text, 'x');
    const step = file.steps[0]!;
    expect(step.step).toBe(stepOf(STEP_FILE));
    expect(step.trainerRewards).toEqual(step.run.samples.map((s) => expected.get(s.questionId)));
    const runId = step.run.run.id;

    // The item view: a sample with every column, and one whose format reward the dump has no value for.
    const withNone = step.run.samples.find((s) => expected.get(s.questionId)!.format_reward === null)!;
    const full = step.run.samples.find((s) => expected.get(s.questionId)!.format_reward !== null)!;
    for (const s of [full, withNone]) {
      await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}/items/${s.index}.${s.sample}`);
      const line = page.getByTestId('item-trainer-rewards');
      await line.waitFor({ timeout: 60_000 });
      expect((await line.textContent())!.replace(/\s+/g, ' ').trim()).toBe(
        `Reward columns: ${trainerRewardsText(expected.get(s.questionId))}`,
      );
    }
    expect(trainerRewardsText(expected.get(withNone.questionId))).toContain('format_reward none');
    await shots(page, 'trainer-rewards-item', page.getByTestId('item-trainer'));

    // The question across the steps: the columns in the trainer score's tooltip.
    await page.goto(`${server.url}#/series/${encodeURIComponent(seriesId)}/question/${full.index}`);
    await page.locator('[data-testid="series-question-page"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    const mark = page.locator('[data-testid="sample-trainer"]').first();
    const text = trainerRewardsText(expected.get(full.questionId));
    expect(await mark.getAttribute('data-rewards')).toBe(text);
    expect(await mark.getAttribute('title')).toContain(`reward columns: ${text}`);

    // The step's CSV: one column per reward after trainer_score, each sample's own values.
    await page.getByTestId('nav-runs').click();
    const csv = (await downloadFrom(page, `[data-run-id="${runId}"] [data-testid="export-csv"]`)).text;
    const [head, ...rows] = csv.trimEnd().split('\r\n');
    const cols = head!.split(',');
    expect(cols.slice(-4)).toEqual([
      'trainer_score',
      'trainer_accuracy_reward',
      'trainer_format_reward',
      'trainer_advantage',
    ]);
    // Quoted cells (SQL with commas) sit between: the first two columns and the last ones are plain numbers.
    expect(cols.slice(0, 2)).toEqual(['index', 'question_id']);
    expect(rows).toHaveLength(step.run.samples.length);
    for (const row of rows) {
      const cells = row.split(',');
      const want = expected.get(Number(cells[1]))!;
      expect([cells.at(-3), cells.at(-2), cells.at(-1)]).toEqual([
        String(want.accuracy_reward),
        want.format_reward === null ? '' : String(want.format_reward),
        String(want.advantage),
      ]);
    }
  }, 1_800_000);
});
