/**
 * Excluding questions in the app, in Chromium against the built app, on a training run of two
 * real mini-dev steps (the first two prediction files as verl dumps, superhero's 52 questions):
 * a question excluded from the training run (its across-steps view) and one from a step's run
 * (its item view). The series' step table, best step and the step's dashboard then equal a
 * direct recomputation over the samples left (read back from the app's own series file, which
 * keeps every sample); the exclusions survive a reload; the step's CSV marks the excluded rows
 * (`excluded`: the reason); un-excluding restores the numbers. Screenshots in test-artifacts/.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { writeVerlDumps } from '../helpers/series-dumps.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import {
  type AppSession,
  downloadFrom,
  importBirdMiniDev,
  officialCells,
  screenshot,
  useApp,
} from './workbench-helpers.ts';

const DESKTOP = { width: 1400, height: 1000 };
const PHONE = { width: 390, height: 844 };
const TIMEOUT_S = '180';

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

interface S {
  questionId: number;
  index: number;
  sample: number;
  status: string;
  ex: number;
}
/** EX in percent over the scored samples whose question is not in `out`. */
const directEx = (samples: readonly S[], out: ReadonlySet<number>) => {
  const kept = samples.filter((s) => s.status !== 'missing-db' && !out.has(s.questionId));
  return (kept.reduce((a, s) => a + s.ex, 0) / kept.length) * 100;
};

describe.skipIf(browserSkipReason())(suiteTitle('questions excluded from every metric in the app'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { context: { viewport: DESKTOP, acceptDownloads: true }, hash: '#/datasets' });
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-exclusions-'));

  beforeAll(async () => {
    writeVerlDumps(dir, [0, 1], ['superhero']);
    await importBirdMiniDev(page);
  }, 900_000);

  it('an excluded question changes the series, its best step and the dashboard as a recomputation says; kept on reload; marked in the CSV', async () => {
    await page.getByTestId('nav-series').click();
    const select = page.getByTestId('series-dataset');
    await select.selectOption(
      (await select.locator('option', { hasText: 'BIRD mini-dev' }).first().getAttribute('value'))!,
    );
    await page.getByTestId('series-folder').setInputFiles(dir);
    await page.getByTestId('series-preview').waitFor();
    await page.getByTestId('series-name').fill('superhero, two steps');
    await page.getByTestId('run-timeout').fill(TIMEOUT_S);
    await page.getByTestId('series-start').click();
    await page.waitForURL(/#\/series\/[^/?]+$/, { timeout: 900_000 });
    const seriesId = decodeURIComponent(/#\/series\/([^/?]+)$/.exec(page.url())![1]!);
    const loaded = '[data-testid="series-page"][data-loaded="true"][data-steps="2"]';
    await page.locator(loaded).waitFor({ timeout: 900_000 });

    const file = parseSeriesFile((await downloadFrom(page, '[data-testid="series-export-series-file"]')).text, 'x');
    const [s1, s2] = file.steps as [(typeof file.steps)[0], (typeof file.steps)[0]];
    // The question to exclude from the training run: right at the first step, so EX moves.
    const seriesOut = s1.run.samples.find((s) => s.ex === 1)!;
    // The one to exclude from the second step's run only: wrong there.
    const runOut = s2.run.samples.find((s) => s.ex === 0 && s.questionId !== seriesOut.questionId)!;
    const stepEx = async (step: number) =>
      (await page
        .locator(`[data-testid="series-steps"] tr[data-step="${step}"] td[data-col="ex"]`)
        .textContent())!.trim();
    expect(await stepEx(s1.step)).toBe(formatFixed2(directEx(s1.run.samples, new Set())));

    // Excluded from the training run on the question's across-steps view.
    await page.goto(`${server.url}#/series/${encodeURIComponent(seriesId)}/question/${seriesOut.index}`);
    await page.getByTestId('exclude-open').click();
    await page.getByTestId('exclude-reason').fill('gold answers a different question');
    await page.getByTestId('exclude-author').fill('Ana Tester');
    await page.getByTestId('exclude-submit').click();
    await page.getByTestId('excluded-note').waitFor();
    expect(await page.getByTestId('excluded-note').textContent()).toContain('gold answers a different question');
    await shots(page, 'exclusions-question', page.getByTestId('exclude-box'));

    await page.goto(`${server.url}#/series/${encodeURIComponent(seriesId)}`);
    await page.locator(loaded).waitFor({ timeout: 300_000 });
    await page.locator('[data-testid="excluded-count"][data-count="1"]').waitFor({ timeout: 120_000 });
    const one = new Set([seriesOut.questionId]);
    for (const s of [s1, s2]) expect(await stepEx(s.step)).toBe(formatFixed2(directEx(s.run.samples, one)));
    expect(await stepEx(s1.step)).not.toBe(formatFixed2(directEx(s1.run.samples, new Set())));
    const best = page.getByTestId('best-step');
    const bestStep = Number(await best.getAttribute('data-step'));
    const bestFile = file.steps.find((s) => s.step === bestStep)!;
    expect(await page.getByTestId('best-ex').textContent()).toBe(formatFixed2(directEx(bestFile.run.samples, one)));
    expect(await page.locator('[data-testid="exclusions"] [data-testid="exclusion"]').count()).toBe(1);
    await shots(page, 'exclusions-series', page.getByTestId('excluded-count'));

    // Excluded from the second step's run on its item view: its dashboard leaves out both.
    const runId = s2.run.run.id;
    await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}/items/${runOut.index}.${runOut.sample}`);
    await page.getByTestId('exclude-open').click({ timeout: 60_000 });
    await page.getByTestId('exclude-reason').fill('unanswerable: the evidence is wrong');
    // The author is remembered from the first exclusion.
    expect(await page.getByTestId('exclude-author').inputValue()).toBe('Ana Tester');
    await page.getByTestId('exclude-submit').click();
    await page.getByTestId('excluded-note').waitFor();
    await shots(page, 'exclusions-item', page.getByTestId('exclude-box'));

    const both = new Set([seriesOut.questionId, runOut.questionId]);
    const dashboard = async () => {
      await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}`);
      await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
      await page.locator('[data-testid="excluded-count"][data-count="2"]').waitFor({ timeout: 60_000 });
      expect((await officialCells(page)).ex!.total).toBe(formatFixed2(directEx(s2.run.samples, both)));
      expect((await officialCells(page)).count!.total).toBe(
        String(new Set(s2.run.samples.filter((s) => !both.has(s.questionId)).map((s) => s.questionId)).size),
      );
    };
    await dashboard();
    await shots(page, 'exclusions-dashboard', page.getByTestId('excluded-count'));
    await shots(page, 'exclusions-list', page.getByTestId('exclusions'));
    // Kept in IndexedDB: the same after a reload.
    await page.reload();
    await dashboard();

    // The step's CSV keeps every row and marks the excluded ones with the reason.
    await page.getByTestId('nav-runs').click();
    const csv = (await downloadFrom(page, `[data-run-id="${runId}"] [data-testid="export-csv"]`)).text;
    const [head, ...rows] = csv.trimEnd().split('\r\n');
    expect(head!.split(',').at(-1)).toBe('excluded');
    expect(rows).toHaveLength(s2.run.samples.length);
    const reasons = new Map<number, string>();
    for (const row of rows) reasons.set(Number(row.split(',')[1]), row.slice(row.lastIndexOf(',') + 1));
    expect(reasons.get(seriesOut.questionId)).toBe('gold answers a different question');
    expect(reasons.get(runOut.questionId)).toBe('unanswerable: the evidence is wrong');
    expect([...reasons.values()].filter((r) => r !== '')).toHaveLength(2);

    // The RL view and the comparison say what they left out, and count without it.
    const keptQuestions = new Set(s2.run.samples.filter((s) => !both.has(s.questionId)).map((s) => s.questionId)).size;
    await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}/rl`);
    await page.locator('[data-testid="rl-excluded"][data-count="2"]').waitFor({ timeout: 120_000 });
    expect(await page.getByTestId('rl-questions').textContent()).toBe(`${keptQuestions} questions`);
    await shots(page, 'exclusions-rl', page.getByTestId('rl-excluded'));
    await page.goto(`${server.url}#/compare/${encodeURIComponent(s1.run.run.id)}/${encodeURIComponent(runId)}`);
    await page.locator('[data-testid="compare-excluded"][data-count="2"]').waitFor({ timeout: 120_000 });
    await shots(page, 'exclusions-compare', page.getByTestId('compare-excluded'));

    // Un-excluded on the dashboard's list: the run's own exclusion goes, the training run's stays.
    await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    await page.getByTestId('unexclude-row').click();
    await page.locator('[data-testid="excluded-count"][data-count="1"]').waitFor({ timeout: 60_000 });
    expect((await officialCells(page)).ex!.total).toBe(formatFixed2(directEx(s2.run.samples, one)));
  }, 1_800_000);
});
