/**
 * The trainer against us, in Chromium against the built app, on a training run made of the 13
 * real mini-dev prediction files (superhero's 52 questions per step, as verl dumps,
 * tests/helpers/series-dumps.ts) whose trainer scores are planted:
 * - every sample's trainer score is our own EX of it (computed first by the CLI's `series` on the
 *   same completions), except planted disagreements: at step 100, three samples we score 1 get
 *   trainer score 0 (the reference case: "3 samples the trainer scored 0 and we scored 1"); at
 *   step 700, two samples we score 0 get trainer score 1;
 * - step 100's dump has one row more that matches no question: its pairing note.
 * Checks: each step's disagreement count equals a direct count from the app's own series file
 * export (and the planted ones); clicking the count opens exactly those samples; the item view and
 * the question across the steps show the trainer's score beside our verdict; the warning names
 * steps 100 and 700; the pairing note shows on step 100's dashboard, also after a reload; the
 * reward chart draws EX and the [0, 1] reward on one axis; the dashboard counts cached verdicts.
 * Screenshots at 1400x1000 and 390x844 in test-artifacts/.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { readJson, runCli } from '../helpers/cli.ts';
import { MINIDEV_ARGS, PREDICTION_FILES, stepOf, verlLines } from '../helpers/series-dumps.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, downloadFrom, importBirdMiniDev, screenshot, useApp } from './workbench-helpers.ts';

const DESKTOP = { width: 1400, height: 1000 };
const PHONE = { width: 390, height: 844 };
const DBS = ['superhero'];
/** Far above any superhero query here (all run in well under a second): no side times out. */
const TIMEOUT_S = 120;

async function shots(page: Page, name: string, focus?: Locator): Promise<void> {
  const ok = page.getByRole('button', { name: 'OK, dismiss this note' });
  if (await ok.isVisible()) await ok.click();
  for (const [size, viewport] of [
    ['1400', DESKTOP],
    ['390', PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(300);
    if (focus) await focus.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await page.waitForTimeout(200);
    await screenshot(page, `${name}-${size}.png`);
  }
  await page.setViewportSize(DESKTOP);
}

async function seriesLoaded(page: Page, steps: number): Promise<void> {
  await page
    .locator(`[data-testid="series-page"][data-loaded="true"][data-steps="${steps}"]`)
    .waitFor({ timeout: 600_000 });
}

/** The direct count: a sample the trainer scored >= 1 that EX rejects, or scored below 1 that EX accepts. */
function directDisagreements(step: { trainerScores: Array<number | null>; run: { samples: any[] } }): string[] {
  return step.run.samples.flatMap((s, i) => {
    const score = step.trainerScores[i];
    if (score === null || score === undefined || s.status === 'missing-db') return [];
    return score >= 1 !== (s.ex === 1) ? [`${s.index}:${s.sample}`] : [];
  });
}

describe.skipIf(browserSkipReason())(suiteTitle("the trainer's score against our EX"), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { context: { viewport: DESKTOP, acceptDownloads: true }, hash: '#/datasets' });
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-series-trainer-'));
  const planted = path.join(dir, 'planted');
  /** Question ids planted per step: the trainer failed what we pass (step 100), passed what we fail (step 700). */
  const plantedAt = new Map<number, { questionIds: number[]; way: 'trainer-wrong' | 'trainer-right' }>();
  let seriesId: string;

  beforeAll(async () => {
    // Our verdicts first: the CLI's series on the same completions (stand-in scores, read as verl).
    const ref = path.join(dir, 'ref');
    mkdirSync(ref, { recursive: true });
    PREDICTION_FILES.forEach((_, i) =>
      writeFileSync(path.join(ref, `${stepOf(i)}.jsonl`), verlLines(i, DBS).join('\n') + '\n'),
    );
    const seriesOut = path.join(dir, 'ref.series.json');
    const cli = await runCli([
      'series',
      '--completions',
      ref,
      ...MINIDEV_ARGS,
      '--timeout-s',
      String(TIMEOUT_S),
      '--no-cache',
      '--series-out',
      seriesOut,
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    const ours = parseSeriesFile(JSON.stringify(readJson(seriesOut)), 'ref.series.json');
    mkdirSync(planted, { recursive: true });
    PREDICTION_FILES.forEach((_, i) => {
      const step = stepOf(i);
      const exOf = new Map(ours.steps[i]!.run.samples.map((s) => [s.questionId, s.ex]));
      const lines = verlLines(i, DBS).map((l) => JSON.parse(l) as { input: string; score: number });
      const ids = ours.steps[i]!.run.samples.map((s) => s.questionId);
      const plant =
        step === 100
          ? { way: 'trainer-wrong' as const, questionIds: ids.filter((q) => exOf.get(q) === 1).slice(0, 3) }
          : step === 700
            ? { way: 'trainer-right' as const, questionIds: ids.filter((q) => exOf.get(q) === 0).slice(0, 2) }
            : null;
      if (plant) plantedAt.set(step, plant);
      const out = lines.map((l, k) => {
        const q = ids[k]!;
        const ex = exOf.get(q)!;
        const score = plant?.questionIds.includes(q) ? 1 - ex : ex;
        return JSON.stringify({ ...l, score });
      });
      // A row whose prompt holds no question of the dataset: told, kept with the step.
      if (step === 100)
        out.push(
          JSON.stringify({
            input: 'Question: how many moons has Neptune?',
            output: '```sql\nSELECT 1\n```',
            score: 0,
            step,
          }),
        );
      writeFileSync(path.join(planted, `${step}.jsonl`), out.join('\n') + '\n');
    });
    expect(plantedAt.get(100)!.questionIds).toHaveLength(3);
    expect(plantedAt.get(700)!.questionIds).toHaveLength(2);
    await importBirdMiniDev(page);
  }, 900_000);

  it('counts the disagreements of each step as a direct count does; a count opens exactly those samples', async () => {
    await page.getByTestId('nav-series').click();
    const select = page.getByTestId('series-dataset');
    await select.selectOption(
      (await select.locator('option', { hasText: 'BIRD mini-dev' }).first().getAttribute('value'))!,
    );
    await page.getByTestId('series-folder').setInputFiles(planted);
    await page.getByTestId('series-preview').waitFor();
    await page.getByTestId('series-name').fill('planted trainer scores');
    await page.getByTestId('run-timeout').fill(String(TIMEOUT_S));
    await page.getByTestId('series-start').click();
    await page.waitForURL(/#\/series\/[^/?]+$/, { timeout: 900_000 });
    seriesId = decodeURIComponent(/#\/series\/([^/?]+)$/.exec(page.url())![1]!);
    await seriesLoaded(page, 13);

    const file = parseSeriesFile((await downloadFrom(page, '[data-testid="series-export-series-file"]')).text, 'x');
    for (const s of file.steps) {
      const direct = directDisagreements(s);
      const cell = page.locator(`[data-testid="series-steps"] tr[data-step="${s.step}"] [data-col="disagree"]`);
      expect(await cell.getAttribute('data-count'), `step ${s.step}`).toBe(String(direct.length));
      expect(direct.length, `step ${s.step}`).toBe(plantedAt.get(s.step)?.questionIds.length ?? 0);
    }
    // The reference case: 3 samples the trainer scored 0 and we scored 1, a share above 0.5 %: a warning.
    const step100 = page.locator('[data-testid="series-steps"] tr[data-step="100"] [data-col="disagree"]');
    expect(await step100.getAttribute('data-diverges')).toBe('true');
    expect((await step100.textContent())!.trim()).toBe('⚠ 3');
    const warning = page.locator('[data-testid="series-warnings"] li[data-rule="trainer-disagrees"]');
    expect(await warning.textContent()).toContain('From step 100');
    expect(await warning.textContent()).toContain('100 (0 the trainer passed and EX failed, 3 the reverse, of 52)');
    expect(await warning.textContent()).toContain('700 (2 the trainer passed and EX failed, 0 the reverse, of 52)');
    // The report export (the CLI's --out JSON) carries the counts.
    const report = JSON.parse((await downloadFrom(page, '[data-testid="series-export-report"]')).text);
    expect(report.steps.map((s: any) => [s.step, s.trainer_right_ex_wrong, s.trainer_wrong_ex_right])).toEqual(
      file.steps.map((s) => [s.step, s.step === 700 ? 2 : 0, s.step === 100 ? 3 : 0]),
    );
    await shots(page, 'trainer-steps', page.getByTestId('series-steps'));
    await shots(page, 'trainer-warning', page.getByTestId('series-warnings'));

    // One axis for EX and a [0, 1] reward (drawn as %): the chart has one value axis, one panel.
    const reward = page.locator('[data-curve="reward"]');
    await expect.poll(() => reward.locator('canvas').first().getAttribute('data-value-axes')).toBe('1');
    expect(await reward.getAttribute('data-panels')).toBe('1');
    expect(await reward.locator('h3').textContent()).toContain('both in %');
    await shots(page, 'trainer-curves', reward);

    for (const step of [100, 700]) {
      const want = directDisagreements(file.steps.find((s) => s.step === step)!);
      await page.goto(`${server.url}#/series/${encodeURIComponent(seriesId)}`);
      await seriesLoaded(page, 13);
      await page.locator(`[data-testid="series-steps"] tr[data-step="${step}"] [data-testid="disagree-link"]`).click();
      await page.waitForURL(/\/items\?outcome=trainer-disagrees$/);
      await page.locator('[data-testid="explorer"][data-complete="true"]').waitFor({ timeout: 60_000 });
      const rows = page.locator('[data-testid="item-list"] [data-key]');
      await expect.poll(() => rows.count()).toBe(want.length);
      const shown = await rows.evaluateAll((els) =>
        els.map((e) => `${(e as HTMLElement).dataset.index}:${(e as HTMLElement).dataset.sample}`),
      );
      expect(shown.sort()).toEqual([...want].sort());
      // The item view: the trainer's score beside our verdict.
      await rows.first().click();
      const line = page.getByTestId('item-trainer');
      await line.waitFor();
      expect(await line.getAttribute('data-disagrees')).toBe(plantedAt.get(step)!.way);
      if (step === 100) await shots(page, 'trainer-items', line);
    }
  }, 1_800_000);

  it('the question across the steps shows each sample’s trainer score, a planted one marked', async () => {
    await page.goto(`${server.url}#/series/${encodeURIComponent(seriesId)}`);
    await seriesLoaded(page, 13);
    const file = parseSeriesFile((await downloadFrom(page, '[data-testid="series-export-series-file"]')).text, 'x');
    const q = plantedAt.get(100)!.questionIds[0]!;
    const index = file.steps[0]!.run.samples.find((s) => s.questionId === q)!.index;
    await page.goto(`${server.url}#/series/${encodeURIComponent(seriesId)}/question/${index}`);
    await page.locator('[data-testid="series-question-page"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    const marks = page.locator('[data-testid="series-question-steps"] section.step');
    expect(await marks.count()).toBe(13);
    // Every step's sample has its trainer score; only step 100's disagrees (the planted one).
    const seen = await marks.evaluateAll((els) =>
      els.map((el) => {
        const t = el.querySelector('[data-testid="sample-trainer"]') as HTMLElement | null;
        return [Number((el as HTMLElement).dataset.step), t ? t.dataset.disagrees : 'none'];
      }),
    );
    expect(seen).toEqual(file.steps.map((s) => [s.step, s.step === 100 ? 'trainer-wrong' : '']));
    await shots(page, 'trainer-question');
  }, 600_000);

  it('the pairing note shows on the step’s dashboard, also after a reload; the dashboard counts cached verdicts', async () => {
    await page.goto(`${server.url}#/series/${encodeURIComponent(seriesId)}`);
    await seriesLoaded(page, 13);
    await page.locator('[data-testid="series-steps"] tr[data-step="100"] a', { hasText: 'dashboard' }).click();
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 60_000 });
    const note = page.getByTestId('step-pairing');
    const want = /52 of 53 rows paired; 1 not: 1 no question's text is in its prompt/;
    await expect.poll(() => note.textContent()).toMatch(want);
    const executions = page.getByTestId('executions');
    const text = (await executions.textContent())!.replace(/\s+/g, ' ').trim();
    const [, checked, executed, , reused] = /^(\d+) checked: (\d+) executed(, (\d+) reused)?, /.exec(text) ?? [];
    const cached =
      (await page.getByTestId('from-cache').count()) === 1
        ? Number(/^(\d+)/.exec((await page.getByTestId('from-cache').textContent())!)![1])
        : 0;
    expect(Number(checked)).toBe(52);
    expect(Number(executed) + Number(reused ?? 0) + cached).toBe(52);
    await shots(page, 'trainer-dashboard');
    await page.reload();
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByTestId('step-pairing').textContent()).toMatch(want);
  }, 600_000);
});
