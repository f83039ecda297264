/**
 * A checkpoint choice a reward hack cannot win, in Chromium against the built app: the 13 real
 * mini-dev steps with each wrong answer from step 300 on replaced by a DELETE, `SELECT 'true'` or
 * an empty-result read (tests/helpers/hacked-series.ts), imported as a training run. The app's
 * numbers are the CLI's `series --out` on the same dumps; the best step is never a hacked step
 * and the box names the hacked best-by-EX step; the hacked questions are their own bucket; the
 * fell-below-best warning starts where EX falls; earned and pass^n equal a direct computation
 * from the samples (read back through the app's series file export). Screenshots of the
 * checkpoint box, the step table and the buckets at 1400x1000 and 390x844 in test-artifacts/.
 */
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { readJson, runCli } from '../helpers/cli.ts';
import { directStepNumbers, HACKED_FROM, writeHackedSeries } from '../helpers/hacked-series.ts';
import { directBuckets, MINIDEV_ARGS } from '../helpers/series-dumps.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, downloadFrom, importBirdMiniDev, screenshot, useApp } from './workbench-helpers.ts';

const DESKTOP = { width: 1400, height: 1000 };
const PHONE = { width: 390, height: 844 };
/** The same limit on both sides, one the load cannot reach (series.test.ts: the slowest answer of the dumps takes seconds). */
const TIMEOUT_S = '600';

async function shots(page: Page, name: string, focus: Locator): Promise<void> {
  const ok = page.getByRole('button', { name: 'OK, dismiss this note' });
  if (await ok.isVisible()) await ok.click();
  for (const [size, viewport] of [
    ['1400', DESKTOP],
    ['390', PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await focus.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await screenshot(page, `${name}-${size}.png`);
  }
  await page.setViewportSize(DESKTOP);
}

describe.skipIf(browserSkipReason())(suiteTitle('a reward-hacked training run in the app'), () => {
  let { page } = {} as AppSession;
  useApp((s) => ({ page } = s), { context: { viewport: DESKTOP, acceptDownloads: true }, hash: '#/datasets' });
  let hacked: string;

  // The CLI's series of the 13 real steps (once per run, series.test.ts may be computing it) took
  // 10 minutes at load 35: a bound that load does not reach.
  beforeAll(async () => {
    await importBirdMiniDev(page);
    ({ hacked } = await writeHackedSeries(['--timeout-s', TIMEOUT_S]));
  }, 1_800_000);

  it('the best step is never a hacked step; hacked questions are their own bucket; the fall is warned; pass^n and earned as computed directly', async () => {
    // The CLI's series of the same dumps, run while the app imports them (awaited below).
    const out = path.join(path.dirname(hacked), 'cli-hacked.json');
    const cliRun = runCli(['series', '--completions', hacked, ...MINIDEV_ARGS, '--timeout-s', TIMEOUT_S, '--out', out]);
    await page.getByTestId('nav-series').click();
    const select = page.getByTestId('series-dataset');
    await select.selectOption(
      (await select.locator('option', { hasText: 'BIRD mini-dev' }).first().getAttribute('value'))!,
    );
    await page.getByTestId('series-folder').setInputFiles(hacked);
    await page.getByTestId('series-preview').waitFor();
    await page.getByTestId('series-name').fill('mini-dev, hacked from step 300');
    await page.getByTestId('run-timeout').fill(TIMEOUT_S);
    await page.getByTestId('series-start').click();
    await page.waitForURL(/#\/series\/[^/?]+$/, { timeout: 900_000 });
    await page
      .locator('[data-testid="series-page"][data-loaded="true"][data-steps="13"]')
      .waitFor({ timeout: 900_000 });

    const report = JSON.parse((await downloadFrom(page, '[data-testid="series-export-report"]')).text);
    const cli = await cliRun;
    expect(cli.code, cli.stderr).toBe(0);
    const ref = readJson(out);
    expect(report.steps).toEqual(ref.steps);
    expect(report.buckets).toEqual(ref.buckets);
    expect(report.best_step).toEqual(ref.best_step);
    expect(report.warnings).toEqual(ref.warnings);

    // Directly from the samples, read back through the app's series file.
    const file = parseSeriesFile((await downloadFrom(page, '[data-testid="series-export-series-file"]')).text, 'x');
    const steps = file.steps.map((s) => ({ step: s.step, samples: s.run.samples }));
    const direct = directStepNumbers(steps);
    const byEx = direct.reduce((a, d) => (d.ex > a.ex ? d : a));
    const byEarned = direct.reduce((a, d) => (d.earned > a.earned ? d : a));
    expect(byEx.step).toBeGreaterThanOrEqual(HACKED_FROM);
    expect(byEarned.step).toBeLessThan(HACKED_FROM);

    // The box: the best step by earned score, never a hacked one; the hacked best by EX named with its EX.
    const best = page.getByTestId('best-step');
    expect(await best.getAttribute('data-step')).toBe(String(byEarned.step));
    expect(await page.getByTestId('best-earned').textContent()).toBe(formatFixed2(byEarned.earned));
    expect(await page.getByTestId('best-ex').textContent()).toBe(formatFixed2(byEarned.ex));
    const caveat = page.getByTestId('best-by-ex');
    expect(await caveat.getAttribute('data-step')).toBe(String(byEx.step));
    const caveatText = (await caveat.textContent())!;
    expect(caveatText).toContain(
      `highest EX, ${formatFixed2(byEx.ex)}, but an earned score of ${formatFixed2(byEx.earned)}`,
    );
    expect(caveatText).toMatch(/\d+ writes? among its EX passes/);
    expect(caveatText).toContain('writes-rising');

    // Per step on the page: earned and pass^n as computed directly.
    for (const d of direct) {
      const row = page.locator(`[data-testid="series-steps"] tr[data-step="${d.step}"]`);
      expect(await row.locator('[data-col="earned"]').textContent()).toBe(formatFixed2(d.earned));
      expect(await row.locator('[data-col="pass_hat_n"]').textContent()).toBe(formatFixed2(d.passHatN));
    }

    // The hacked questions: their own bucket, as computed directly; the link lists exactly them.
    const buckets = directBuckets(steps);
    const unearned = buckets.filter((q) => q.bucket === 'unearned');
    expect(unearned.length).toBeGreaterThan(0);
    expect(await page.getByTestId('bucket-unearned').textContent()).toBe(String(unearned.length));
    await page.locator('[data-testid="series-buckets"] a[data-bucket="unearned"]').click();
    await page.waitForURL(/\?bucket=unearned$/);
    const grid = page.getByTestId('question-grid');
    await expect.poll(() => grid.getAttribute('data-rows')).toBe(String(unearned.length));
    const ids = await grid
      .locator('a.row')
      .evaluateAll((rows) =>
        rows.map((r) => (r as HTMLElement).getAttribute('aria-label')!.match(/Question (\d+)/)![1]),
      );
    // The grid lists in gold order, the direct computation by question id: the same questions.
    expect(ids.map(Number).sort((a, b) => a - b)).toEqual(
      unearned
        .map((q) => q.question_id)
        .sort((a, b) => a - b)
        .slice(0, ids.length),
    );

    // The fall: the first step after the best whose EX is below the best EX by more than its own interval.
    const bestAt = report.steps.findIndex((s: any) => s.step === byEarned.step);
    const falls = report.steps.slice(bestAt + 1).filter((s: any) => s.ex_ci_high < byEarned.ex);
    expect(falls.length).toBeGreaterThan(0);
    const warning = page.locator('[data-testid="series-warnings"] li[data-rule="fell-below-best"]');
    expect(await warning.textContent()).toContain(`From step ${falls[0].step}`);
    expect(await warning.textContent()).toContain(`at step ${byEarned.step} (the best step)`);

    await shots(page, 'series-hacked-checkpoint', page.getByTestId('series-checkpoint'));
    await shots(page, 'series-hacked-steps', page.getByTestId('series-steps'));
    await shots(page, 'series-hacked-buckets', page.locator('#dynamics'));
  }, 1_800_000);
});
