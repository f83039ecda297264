import { writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import { keysSortedAsText, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, minidevQuestions, sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import {
  type AppSession,
  officialCells,
  screenshot,
  startRun,
  importBirdMiniDev,
  useApp,
} from './workbench-helpers.ts';

const STORED = new Set(['superhero', 'student_club', 'toxicology']);
const WRONG = ["SELECT 'not the answer'", 'SELEC broken'];

/**
 * n = 4 samples for 11 questions of the three stored mini-dev databases, except one question
 * with 2 samples and one with 6, so a per-sample and a per-question summary differ; plus two
 * questions of a database that is not here (unscored, left out of both counts).
 */
function writeRollouts(): string {
  const all = minidevQuestions();
  const usable = all.filter((x) => x.question_id !== 137 && x.question_id !== 138);
  const here = usable.filter((x) => STORED.has(x.db_id)).slice(0, 13);
  const away = usable.filter((x) => !STORED.has(x.db_id)).slice(0, 2);
  const lines: string[] = [];
  here.forEach((x, q) => {
    const n = q === 0 ? 2 : q === 1 ? 6 : 4;
    for (let s = 0; s < n; s++) {
      const right = (s * 7 + q) % 3 !== 0;
      lines.push(JSON.stringify({ question_id: x.question_id, sql: right ? x.SQL : WRONG[(s + q) % WRONG.length] }));
    }
  });
  for (const x of away) lines.push(JSON.stringify({ question_id: x.question_id, sql: x.SQL }));
  const file = tempFile('unequal-rollouts.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** One multi-sample run through the CLI and through the app: the same summary, counts included. */
describe.skipIf(browserSkipReason())(suiteTitle('the summary of a multi-sample run, CLI and app'), () => {
  let { page } = {} as AppSession;
  useApp((s) => ({ page } = s), { hash: '#/datasets' });

  beforeAll(async () => {
    await importBirdMiniDev(page);
  });

  it('shows per question counts, sample counts, EX and Soft-F1 equal to the CLI, with the same n note', async () => {
    const file = writeRollouts();
    const out = tempFile('unequal.json');
    const cli = await runCli(['eval', '--predictions', file, ...minidevFlags(), '--out', out]);
    expect(cli.code, cli.stderr).toBe(0);
    const summary = readJson(out).summary;
    // 13 questions scored (2 missing-db ones left out), 2 + 6 + 11 x 4 = 52 samples.
    expect(summary.by_difficulty.total).toMatchObject({ count: 13, samples: 52 });
    expect(summary.samples_per_question).toEqual({ min: 2, max: 6 });

    const run = await startRun(page, { datasetName: 'BIRD mini-dev', predictions: file, name: 'unequal n' });
    expect(run.error).toBeNull();
    const cells = await officialCells(page);
    for (const level of ['simple', 'moderate', 'challenging', 'total'] as const) {
      const b = summary.by_difficulty[level];
      expect(cells.count![level], `count ${level}`).toBe(String(b.count));
      expect(cells.samples![level], `samples ${level}`).toBe(String(b.samples));
      expect(cells.ex![level], `EX ${level}`).toBe(b.count ? formatFixed2(b.ex) : '–');
      expect(cells['soft-f1']![level], `Soft-F1 ${level}`).toBe(b.count ? formatFixed2(b.soft_f1) : '–');
    }
    await screenshot(page, 'dashboard-multi-sample-1400x1000.png');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'dashboard-multi-sample-390x844.png', true);
    await page.setViewportSize({ width: 1400, height: 1000 });
    const note = (await page.getByTestId('samples-note').textContent())?.trim();
    expect(cli.stdout).toContain(note!);
    expect(note).toMatch(/^n = 2 to 6 samples per question \(54 samples\)/);
  });
  it("shows the CLI's pairing finding for a BIRD file with keys sorted as text when it is chosen, and refuses to run it", async () => {
    const name = 'predict_mini_dev_gpt-4-o_cot_SQLite.json';
    const file = keysSortedAsText(sharedData('bird', 'predictions', 'TA_output', name), name);
    const cli = await runCli(['eval', '--predictions', file, ...minidevFlags(), '--strict']);
    expect(cli.code).toBe(2);
    const cliMessage = /keys are not at their own position[^\n]*?numeric order/.exec(cli.stderr)?.[0];
    expect(cliMessage).toBeTruthy();

    await page.getByTestId('nav-runs').click();
    const select = page.getByTestId('run-dataset');
    await select.selectOption(
      (await select.locator('option', { hasText: 'BIRD mini-dev' }).first().getAttribute('value'))!,
    );
    await page.getByTestId('run-predictions').setInputFiles(file);
    const finding = page.locator('[data-testid="pairing-findings"] li[data-code="key-order"]');
    await finding.waitFor();
    expect(await finding.textContent()).toContain(cliMessage!);
    await screenshot(page, 'new-run-findings-1400x1000.png', true);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'new-run-findings-390x844.png', true);
    await page.setViewportSize({ width: 1400, height: 1000 });
    await page.getByTestId('run-name').fill('sorted keys');
    await page.getByTestId('run-start').click();
    await page.getByTestId('run-error').waitFor();
    expect(await page.getByTestId('run-error').textContent()).toContain(cliMessage!);
  });
});
