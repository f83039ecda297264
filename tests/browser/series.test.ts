/**
 * Training runs in the app, in Chromium against the built app:
 * - the 13 real mini-dev prediction files as 13 verl dumps (tests/helpers/series-dumps.ts)
 *   imported as a series give the numbers of the CLI's `series --out` on the same dumps, per step
 *   and per question (the app's report export is the CLI's JSON); the buckets equal a direct
 *   computation from the steps' verdicts (read back through the app's series file export); the
 *   page shows the same numbers; a bucket link lists exactly its questions; a grid row opens the
 *   question across the steps; the series file imports in another browser profile; the series'
 *   offline report, built by the analysis worker, holds the data the page built before from the
 *   series file export, byte for byte;
 * - a followed folder: `showDirectoryPicker` is replaced by a test double that returns a folder
 *   of the origin private file system (a picker dialog cannot be driven headless); the test
 *   writes a step file into it while the page is open and sees the step appear without a reload,
 *   and after a reload the stored handle is followed again.
 * Screenshots at 1400x1000 and 390x844 in test-artifacts/.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import { formatCount } from '../../src/ui/shell/format.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { packReport, reportPayload, withQuestionTexts } from '../../src/core/report/payload.ts';
import { parseSeriesFile, toSeriesFile } from '../../src/core/series/file.ts';
import { readReportFile, reportDataOf, unpackReportData } from '../../src/core/report/report-file.ts';
import { streamGzip } from '../../src/adapters/gzip-stream.ts';
import { isWrongSample, type ResultRows } from '../../src/core/report/result-rows.ts';
import { minidevSeriesReference, type SeriesReference } from '../helpers/series-reference.ts';
import {
  directBuckets,
  DUMPED,
  dumpedQuestions,
  MINIDEV_QUESTIONS,
  PREDICTION_FILES,
  stepOf,
  verlLines,
} from '../helpers/series-dumps.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, downloadFrom, importBirdMiniDev, screenshot, useApp } from './workbench-helpers.ts';

const DESKTOP = { width: 1400, height: 1000 };
/**
 * 600 s on both sides, the app's largest limit (APP_MAX_TIMEOUT_S): with nothing timing out the
 * two sides' verdicts are compared. The dumps hold the DUMPED questions (tests/helpers/series-dumps.ts:
 * not question 247, whose `LEFT JOIN ... OR` answers at steps 600 and 1300 run for half a minute);
 * the slowest left (question 232 at step 1200) takes seconds on a quiet machine, more under load.
 */
const TIMEOUT_S = 600;
const PHONE = { width: 390, height: 844 };

async function seriesLoaded(page: Page, steps: number): Promise<void> {
  await page
    .locator(`[data-testid="series-page"][data-loaded="true"][data-steps="${steps}"]`)
    .waitFor({ timeout: 600_000 });
}

/** Picks BIRD mini-dev in the training-run form. */
async function chooseMiniDev(page: Page): Promise<void> {
  const select = page.getByTestId('series-dataset');
  const value = await select.locator('option', { hasText: 'BIRD mini-dev' }).first().getAttribute('value');
  await select.selectOption(value!);
}

/** Screenshots at 1400x1000 and 390x844 (`focus` scrolled into view at each size), the "ready to work offline" note dismissed. */
async function shots(page: Page, name: string, full = false, focus?: Locator): Promise<void> {
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
    await screenshot(page, `${name}-${size}.png`, full);
  }
  await page.setViewportSize(DESKTOP);
}

describe.skipIf(browserSkipReason())(suiteTitle('training runs in the app'), () => {
  let { server, browser, page } = {} as AppSession;
  useApp((s) => ({ server, browser, page } = s), {
    context: { viewport: DESKTOP, acceptDownloads: true },
    hash: '#/datasets',
  });
  /**
   * The CLI's `series --out` of the 13 dumps with the same timeout, once per test run
   * (series-hacked.test.ts builds on the same run): the app imports the very files it read.
   */
  let reference: SeriesReference;
  let seriesId: string;
  let report: any;

  beforeAll(async () => {
    reference = minidevSeriesReference(['--timeout-s', String(TIMEOUT_S)]);
    await importBirdMiniDev(page);
  }, 600_000);

  it('imports 13 verl dumps with the CLI’s numbers per step and per question; buckets equal a direct computation', async () => {
    await page.getByTestId('nav-series').click();
    await chooseMiniDev(page);
    await page.getByTestId('series-folder').setInputFiles(reference.dumps);
    await page.getByTestId('series-preview').waitFor();
    expect(await page.getByTestId('preview-step').allTextContents()).toEqual(
      PREDICTION_FILES.map((_, i) => String(stepOf(i))),
    );
    expect(await page.getByTestId('series-rule').textContent()).toContain('global_step_<N>');
    await page.getByTestId('series-name').fill('mini-dev, 13 checkpoints');
    // TIMEOUT_S on both sides (question 232 at step 1200 takes 5-11 s here).
    await page.getByTestId('run-timeout').fill(String(TIMEOUT_S));
    await shots(page, 'series-import-form');
    await page.getByTestId('series-start').click();
    await page.getByTestId('series-job').waitFor();
    await page.waitForURL(/#\/series\/[^/?]+$/, { timeout: 900_000 });
    seriesId = decodeURIComponent(/#\/series\/([^/?]+)$/.exec(page.url())![1]!);
    await seriesLoaded(page, 13);

    report = JSON.parse((await downloadFrom(page, '[data-testid="series-export-report"]')).text);
    const ref = await reference.report;
    expect(report.steps).toEqual(ref.steps);
    expect(report.questions).toEqual(ref.questions);
    expect(report.buckets).toEqual(ref.buckets);
    expect(report.warnings).toEqual(ref.warnings);
    expect(report.best_step).toEqual(ref.best_step);
    expect(report.step_rule).toBe(ref.step_rule);

    // Buckets, first solved step and flips from the steps' verdicts, read back through the app's series file.
    const file = parseSeriesFile((await downloadFrom(page, '[data-testid="series-export-series-file"]')).text, 'x');
    expect(file.steps.map((s) => s.step)).toEqual(PREDICTION_FILES.map((_, i) => stepOf(i)));
    const direct = directBuckets(file.steps.map((s) => ({ step: s.step, samples: s.run.samples })));
    expect(
      report.questions
        .map((q: any) => ({
          question_id: q.question_id,
          bucket: q.bucket,
          first_solved_step: q.first_solved_step,
          flips: q.flips,
        }))
        .sort((a: any, b: any) => a.question_id - b.question_id),
    ).toEqual(direct);
    // The trainer's score kept beside our verdict: the dumps' `score`, sample by sample.
    const scores = verlLines(12, DUMPED).map((l) => JSON.parse(l).score as number);
    expect(file.steps[12]!.trainerScores).toEqual(scores);

    // From the series view: one offline report holding the series (every step) and the
    // last step's run as its run, read back by the report reader the app's import uses. Making it
    // runs the wrong samples of every step again for their rows (up to 2,000): a bound no load reaches.
    const html = await downloadFrom(page, '[data-testid="export-report"]', 600_000);
    expect(html.name).toBe('mini-dev_13_checkpoints.report.html');
    const offline = await readReportFile(html.text, html.name, streamGzip);
    expect(offline.series!.steps.map((s) => s.step)).toEqual(file.steps.map((s) => s.step));
    expect(offline.series!.steps.map((s) => s.run.samples.map((x) => x.ex))).toEqual(
      file.steps.map((s) => s.run.samples.map((x) => x.ex)),
    );
    expect(offline.runs.map((r) => r.run.id)).toEqual([file.steps[12]!.run.run.id]);
    // Built by the analysis worker, the report's data is what the page built before from the
    // series file export (read back, its last step's run with the dataset's question texts):
    // the packed JSON, byte for byte (createdAt and product are the report's own).
    const data = await unpackReportData(reportDataOf(html.text)!, streamGzip, html.name);
    const made = JSON.parse(data) as {
      product: string;
      createdAt: string;
      seriesSteps: Array<{ step: number; notes?: string[]; executions?: { executed: number; reused: number } }>;
      resultRows: ResultRows;
    };
    // Added since: the result rows of every step's wrong samples (re-run on the page's SQL pool).
    expect(made.resultRows.wrong).toBe(file.steps.flatMap((s) => s.run.samples.filter(isWrongSample)).length);
    expect(made.resultRows.items.length).toBeGreaterThan(0);
    expect(made.product).toMatch(/^rlvr-workbench \S+ \(app\)$/);
    // Added since: what the app kept with each step (its import notes, its verdict counts), as its
    // steps table shows them, and the bytes of the HTML around the data (the report states its size).
    expect(made.seriesSteps.map((s) => s.step)).toEqual(file.steps.map((s) => s.step));
    for (const s of made.seriesSteps) {
      expect(s.notes?.length).toBeGreaterThan(0);
      expect(
        await page
          .locator(`[data-testid="series-steps"] tr[data-step="${s.step}"] [data-col="executed"]`)
          .textContent(),
      ).toBe(`${formatCount(s.executions!.executed)} / ${formatCount(s.executions!.reused)}`);
    }
    const shellBytes = Buffer.byteLength(html.text) - reportDataOf(html.text)!.length;
    const previous = reportPayload({
      runs: [
        withQuestionTexts(
          file.steps[12]!.run,
          parseQuestions(readFileSync(MINIDEV_QUESTIONS, 'utf8'), path.basename(MINIDEV_QUESTIONS)),
        ),
      ],
      compare: false,
      series: toSeriesFile(file),
      seriesSteps: made.seriesSteps,
      resultRows: made.resultRows,
      product: made.product,
      createdAt: made.createdAt,
    });
    // (compared as a boolean: a difference would print two texts of several MB)
    expect(data === JSON.stringify(packReport({ ...previous, shellBytes }))).toBe(true);
    expect(offline.runs[0]!.questions).toHaveLength(dumpedQuestions().length);

    // What the page shows: the step table and the bucket counts.
    for (const s of report.steps)
      expect(
        await page.locator(`[data-testid="series-steps"] tr[data-step="${s.step}"] [data-col="ex"]`).textContent(),
      ).toBe(formatFixed2(s.ex));
    for (const [b, n] of Object.entries(report.buckets))
      expect(await page.getByTestId(`bucket-${b}`).textContent()).toBe(String(n));
    expect(await page.getByTestId('best-ex').textContent()).toBe(formatFixed2(report.best_step.ex));
    await shots(page, 'series-view', true);
    await shots(page, 'series-steps', false, page.getByTestId('series-steps'));
    // At 390 px the step table scrolls sideways inside its own box; the page itself does not.
    await page.setViewportSize(PHONE);
    const widths = await page.getByTestId('series-steps').evaluate((table) => {
      const box = table.closest('.scroll-box') as HTMLElement;
      return {
        box: box.scrollWidth > box.clientWidth,
        page: document.documentElement.scrollWidth <= window.innerWidth,
      };
    });
    await page.setViewportSize(DESKTOP);
    expect(widths).toEqual({ box: true, page: true });
    await shots(page, 'series-curves', false, page.getByTestId('series-curves'));
  }, 1_800_000);

  it('a bucket link lists exactly its questions; a row opens the question across the steps; a point opens its dashboard', async () => {
    const learned = report.questions.filter((q: any) => q.bucket === 'learned');
    await page.locator('[data-testid="series-buckets"] a[data-bucket="learned"]').click();
    await page.waitForURL(/\?bucket=learned$/);
    const grid = page.getByTestId('question-grid');
    await expect.poll(() => grid.getAttribute('data-rows')).toBe(String(learned.length));
    const shown = await grid
      .locator('a.row')
      .evaluateAll((rows) =>
        rows.map((r) => [Number((r as HTMLElement).dataset.index), (r as HTMLElement).dataset.bucket]),
      );
    expect(shown.every(([, b]) => b === 'learned')).toBe(true);
    expect(shown.map(([i]) => i)).toEqual(learned.map((q: any) => q.index).slice(0, shown.length));
    await shots(page, 'series-grid', false, page.locator('#dynamics'));

    // Every bucket's count is a link to exactly that bucket's questions, in index order.
    for (const b of ['unstable', 'always', 'never', 'forgotten', 'learned']) {
      const want = report.questions.filter((x: any) => x.bucket === b);
      await page.locator(`[data-testid="series-buckets"] a[data-bucket="${b}"]`).click();
      await page.waitForURL(new RegExp(`\\?bucket=${b}$`));
      await expect.poll(() => grid.getAttribute('data-rows')).toBe(String(want.length));
      expect(await page.getByTestId(`bucket-${b}`).textContent()).toBe(String(want.length));
      const rows = await grid
        .locator('a.row')
        .evaluateAll((els) =>
          els.map((r) => [Number((r as HTMLElement).dataset.index), (r as HTMLElement).dataset.bucket]),
        );
      expect(rows.length > 0).toBe(want.length > 0);
      expect(rows.map(([, x]) => x)).toEqual(rows.map(() => b));
      expect(rows.map(([i]) => i)).toEqual(want.map((x: any) => x.index).slice(0, rows.length));
    }

    const q = learned[0];
    await grid.locator(`a.row[data-index="${q.index}"]`).click();
    await page.locator('[data-testid="series-question-page"][data-loaded="true"]').waitFor({ timeout: 120_000 });
    expect(page.url()).toContain(`#/series/${encodeURIComponent(seriesId)}/question/${q.index}`);
    const columns = page.locator('[data-testid="series-question-steps"] section.step');
    expect(await columns.count()).toBe(13);
    expect(await page.getByTestId('series-question-title').textContent()).toContain(String(q.question_id));
    // The majority SQL's diff never runs a removed run into an added one: a space (the SQL's, or a gap) between them.
    const runTogether = await page
      .getByTestId('majority-diff')
      .evaluateAll((pres) =>
        pres.flatMap((pre) =>
          [...pre.querySelectorAll('del')].filter((d) => d.nextSibling?.nodeName === 'INS').map((d) => d.textContent),
        ),
      );
    expect(runTogether).toEqual([]);
    // The step where the question changed (the last forgotten, else the first learned, over the
    // steps that scored it) is marked and scrolled into the strip's view.
    let [forgot, learnedAt, before] = [null as number | null, null as number | null, null as boolean | null];
    q.pass_rates.forEach((r: number | null, i: number) => {
      if (r === null) return;
      const now = r > 0.5;
      if (before === true && !now) forgot = report.steps[i].step;
      else if (before === false && now && learnedAt === null) learnedAt = report.steps[i].step;
      before = now;
    });
    const changedAt = forgot ?? learnedAt;
    expect(changedAt).not.toBeNull();
    const marked = page.locator('[data-testid="series-question-steps"] section.step[data-changed]');
    expect(await marked.getAttribute('data-step')).toBe(String(changedAt));
    expect(await marked.getAttribute('data-changed')).toBe(forgot !== null ? 'forgotten' : 'learned');
    const [markedBox, stripBox] = [
      await marked.boundingBox(),
      await page.getByTestId('series-question-steps').boundingBox(),
    ];
    expect(markedBox!.x).toBeGreaterThanOrEqual(stripBox!.x - 1);
    expect(markedBox!.x + markedBox!.width).toBeLessThanOrEqual(stripBox!.x + stripBox!.width + 1);
    await shots(page, 'series-question');

    // The per-question samples view and the explorer link back to it.
    await columns.first().locator('a', { hasText: 'samples' }).click();
    await page.getByTestId('question-page').waitFor();
    await expect.poll(() => page.getByTestId('series-question-link').count()).toBe(1);
    expect(await page.getByTestId('series-question-link').textContent()).toContain('this is step 100');

    // A point on a curve opens that step's dashboard.
    await page.goto(`${server.url}#/series/${encodeURIComponent(seriesId)}`);
    await seriesLoaded(page, 13);
    const canvas = page.locator('[data-curve="accuracy"] canvas');
    const box = (await canvas.boundingBox())!;
    await page.waitForTimeout(500);
    // The chart's index mode picks the nearest step on the x axis: the far right is the last step.
    await canvas.click({ position: { x: box.width - 12, y: box.height / 2 } });
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('run-title').textContent()).toContain('step 1300');
  }, 600_000);

  it('groups stored runs by hand, each given a step; deleting that series keeps the runs', async () => {
    await page.getByTestId('nav-series').click();
    const form = page.getByTestId('series-group');
    const runs = form.locator('li[data-run-id]');
    await expect.poll(() => runs.count()).toBe(13);
    // The runs of steps 1300 and 100, given steps 2 and 1 (guessed from their names at first).
    const pick = async (name: string, step: string) => {
      // (`step 100` is in `step 1000` too: the run's name ends with it)
      const row = runs.filter({ has: page.getByText(new RegExp(`· ${name}$`)) });
      await row.locator('input[type="checkbox"]').check();
      await row.locator('input[type="text"]').fill(step);
    };
    await pick('step 1300', '2');
    await pick('step 100', '1');
    await page.getByTestId('group-name').fill('first and last, by hand');
    await page.getByTestId('group-start').click();
    await page.waitForURL(/#\/series\/[^/?]+$/);
    await seriesLoaded(page, 2);
    expect(await page.locator('[data-testid="series-steps"] tr[data-step="2"] [data-col="ex"]').textContent()).toBe(
      formatFixed2(report.steps[12].ex),
    );
    await page.getByTestId('nav-series').click();
    const entry = page.locator('[data-testid="series-list"] li', { hasText: 'first and last, by hand' });
    await entry.getByTestId('delete-series').click();
    await entry.getByTestId('delete-series-confirm').click();
    await expect.poll(() => entry.count()).toBe(0);
    await page.getByTestId('nav-runs').click();
    await expect.poll(() => page.locator('[data-testid="run-list"] > li').count()).toBeGreaterThanOrEqual(13);
  }, 600_000);

  it('the series file imports in another browser profile with the same numbers', async () => {
    await page.goto(`${server.url}#/series/${encodeURIComponent(seriesId)}`);
    await seriesLoaded(page, 13);
    const [dl] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('series-export-series-file').click(),
    ]);
    const file = await dl.path();
    // The same browser refuses it: its runs are stored already.
    await page.getByTestId('nav-series').click();
    await page.getByTestId('series-import-file').setInputFiles(file);
    await expect.poll(() => page.getByTestId('series-import-error').textContent()).toContain('already stored');

    const other = await (await browser.newContext({ viewport: DESKTOP, acceptDownloads: true })).newPage();
    try {
      await other.goto(server.url + '#/series');
      await other.getByTestId('series-import-file').setInputFiles(file);
      await other.getByTestId('series-import-done').waitFor({ timeout: 300_000 });
      await other.getByTestId('series-link').first().click();
      await seriesLoaded(other, 13);
      const again = JSON.parse((await downloadFrom(other, '[data-testid="series-export-report"]')).text);
      expect({ ...again, dataset: null }).toEqual({ ...report, dataset: null });
    } finally {
      await other.context().close();
    }
    expect(readFileSync(file, 'utf8').startsWith('{"format":"rlvr-workbench-series","version":1')).toBe(true);
  }, 900_000);
});

/** A folder of the origin private file system stands in for the folder the user picks (test double of the picker dialog). */
const PICKER_DOUBLE = () => {
  (window as unknown as { showDirectoryPicker: () => Promise<FileSystemDirectoryHandle> }).showDirectoryPicker =
    async () => (await navigator.storage.getDirectory()).getDirectoryHandle('watched', { create: true });
};

async function writeStepFile(page: Page, name: string, text: string): Promise<void> {
  await page.evaluate(
    async ([n, t]) => {
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('watched', { create: true });
      const w = await (await dir.getFileHandle(n!, { create: true })).createWritable();
      await w.write(t!);
      await w.close();
    },
    [name, text],
  );
}

describe.skipIf(browserSkipReason())(
  suiteTitle('a training run followed live (showDirectoryPicker test double: OPFS)'),
  () => {
    let { server, page } = {} as AppSession;
    useApp((s) => ({ server, page } = s), { context: { viewport: DESKTOP, acceptDownloads: true } });
    /**
     * Step `step` of a policy that answers as the first checkpoint every time while the trainer's
     * reward climbs to `score` (a reward the policy games: EX stays flat). Every step after the
     * first is given the first step's verdicts: nothing is executed again.
     */
    const stepFile = (step: number, score: number) =>
      verlLines(0, ['superhero'])
        .map((l) => JSON.stringify({ ...JSON.parse(l), step, score }))
        .join('\n') + '\n';

    beforeAll(async () => {
      await page.context().addInitScript(PICKER_DOUBLE);
      await page.goto(server.url + '#/datasets');
      await importBirdMiniDev(page);
    }, 600_000);

    it('evaluates a step file written while the page is open, without a reload, and follows the folder again after one', async () => {
      await writeStepFile(page, '100.jsonl', stepFile(100, 0));
      await page.getByTestId('nav-series').click();
      await chooseMiniDev(page);
      await page.getByTestId('series-watch').click();
      await page.waitForURL(/#\/series\/[^/?]+$/);
      await page.locator('[data-testid="follow"][data-state="following"]').waitFor();
      await seriesLoaded(page, 1);
      const url = page.url();

      await writeStepFile(page, '200.jsonl', stepFile(200, 0.5));
      await seriesLoaded(page, 2);
      expect(page.url()).toBe(url);
      expect(await page.locator('[data-testid="series-steps"] tr[data-step="200"]').count()).toBe(1);
      await shots(page, 'series-following');

      // After a reload the stored handle is followed again (the origin's own files keep their permission).
      await page.reload();
      await page.locator('[data-testid="follow"][data-state="following"]').waitFor({ timeout: 60_000 });
      await seriesLoaded(page, 2);
      await writeStepFile(page, '300.jsonl', stepFile(300, 1));
      await seriesLoaded(page, 3);
      expect(await page.getByTestId('follow-status').textContent()).toContain('1 step added while this page is open');
      // The same answers at every step: executed once, at step 100; EX flat while the trainer's reward climbs.
      expect(
        await page.locator('[data-testid="series-steps"] tr[data-step="300"] [data-col="executed"]').textContent(),
      ).toBe('0 / 52');
      const warning = page.locator('[data-testid="series-warnings"] li[data-rule="reward-without-ex"]');
      expect(await warning.textContent()).toContain('From step 200');
      await shots(page, 'series-warnings', false, page.getByTestId('series-checkpoint'));
    }, 900_000);
  },
);
