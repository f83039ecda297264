import { writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, screenshot, importBirdMiniDev, useApp, runStored } from './workbench-helpers.ts';

const ARCWISE = sharedData('bird', 'corrections', 'arcwise_plat_sql_only_with_diff.json');
const PREDICTIONS = sharedData(
  'bird',
  'predictions',
  'TA_output',
  'predict_mini_dev_meta-llama-3-70b-instruct2_cot_SQLite.json',
);
interface CliItem {
  question_id: number;
  status: string;
  version_features: unknown[];
  gold_issues: unknown[];
  mutated_db: boolean;
}
interface CliOut {
  summary: {
    sqlite_version: string;
    by_difficulty: { total: { ex: number } };
    gold_overlay: {
      golds_changed: number;
      official: { ex: number };
      corrected: { ex: number };
      changed_items: { question_id: number; corrected_ex: number }[];
    };
  };
  items: CliItem[];
}

/**
 * The reward view on a real run (meta-llama-3-70b CoT on the mini-dev items whose databases are
 * here): its counts are the CLI's, and each count opens exactly those items in the explorer.
 */
describe.skipIf(browserSkipReason())(suiteTitle('the reward view on BIRD mini-dev'), () => {
  let { page } = {} as AppSession;
  useApp((s) => ({ page } = s), { hash: '#/datasets' });
  let cli: CliOut;

  beforeAll(async () => {
    const out = tempFile('out.json');
    const reference = runCli([
      'eval',
      '--predictions',
      PREDICTIONS,
      ...minidevFlags(),
      '--workers',
      '1',
      '--out',
      out,
      '--gold-overlay',
      ARCWISE,
    ]);
    await importBirdMiniDev(page);
    const run = await reference;
    if (run.code !== 0) throw new Error(`the CLI failed: ${run.stderr}`);
    cli = readJson<CliOut>(out);
    await runStored(page, 'BIRD mini-dev', PREDICTIONS, 'llama-70b cot');
  }, 300_000);

  it("shows EX, the SQLite of the verdicts and the CLI's counts of version-sensitive items, gold problems and writes", async () => {
    const view = page.getByTestId('reward-view');
    await view.waitFor();
    await screenshot(page, 'reward-view.png');
    // The app runs SQL, so it offers the probe (a report does not: report-firefox.test.ts).
    expect(await view.getByTestId('reward-probe').getAttribute('href')).toMatch(/^#\/probe\//);
    const scored = cli.items.filter((i) => i.status !== 'missing-db');
    expect(await page.getByTestId('reward-ex').textContent()).toBe(cli.summary.by_difficulty.total.ex.toFixed(2));
    expect(await page.getByTestId('reward-sqlite').textContent()).toContain(`SQLite ${cli.summary.sqlite_version}`);
    const count = async (o: string) => Number(await view.locator(`[data-reward-count="${o}"]`).textContent());
    expect(await count('version-sensitive')).toBe(scored.filter((i) => i.version_features.length > 0).length);
    expect(await count('gold-issue')).toBe(scored.filter((i) => i.gold_issues.length > 0).length);
    expect(await count('modified')).toBe(scored.filter((i) => i.mutated_db).length);
    expect(await count('version-sensitive')).toBeGreaterThan(0);
    // No TS or row-order fields in this run: those lines are not shown.
    expect(await view.locator('[data-outcome="ex-only"]').count()).toBe(0);
    expect(await page.getByTestId('reward-ts').count()).toBe(0);
  });

  it('the version-sensitive count opens exactly those items; question 1460 shows CONCAT (3.44.0) in its prediction', async () => {
    const n = Number(
      await page.locator('[data-testid="reward-view"] [data-reward-count="version-sensitive"]').textContent(),
    );
    await page.locator('[data-testid="reward-view"] a[data-outcome="version-sensitive"]').click();
    await page.getByTestId('filter-count').waitFor();
    await expect
      .poll(async () => (await page.getByTestId('filter-count').textContent())?.split(' of ')[0]?.trim())
      .toBe(String(n));
    expect(await page.getByTestId('filter-outcome').inputValue()).toBe('version-sensitive');
    // The list is virtual: narrow it to the question, which keeps the outcome filter.
    await page.getByTestId('filter-search').fill('1460');
    await expect
      .poll(async () => (await page.getByTestId('filter-count').textContent())?.split(' of ')[0]?.trim())
      .toBe('1');
    await page.locator('[data-testid="item-list"] [role="option"]').first().click();
    const badge = page.getByTestId('version-feature').first();
    await badge.waitFor();
    expect(await badge.textContent()).toContain('concat() · SQLite 3.44.0 · pred');
    await screenshot(page, 'reward-view-explorer.png');
  });

  it("attaches the Arcwise-Plat corrections to the run: the CLI's two EX totals and the same changed items, each linked to the explorer", async () => {
    await page.getByTestId('nav-run').click();
    const panel = page.getByTestId('gold-overlay');
    await panel.waitFor();
    await page.getByTestId('overlay-file').setInputFiles(ARCWISE);
    await page.getByTestId('overlay-totals').waitFor({ timeout: 60_000 });
    const ov = cli.summary.gold_overlay;
    expect(await page.getByTestId('overlay-ex-official').textContent()).toBe(ov.official.ex.toFixed(2));
    expect(await page.getByTestId('overlay-ex-corrected').textContent()).toBe(ov.corrected.ex.toFixed(2));
    expect(await page.getByTestId('overlay-totals').textContent()).toContain(`${ov.golds_changed} golds changed`);
    const listed = await page
      .locator('[data-testid="overlay-changed"] li')
      .evaluateAll((lis) => lis.map((li) => Number((li as HTMLElement).dataset.questionId)));
    expect(listed).toEqual(ov.changed_items.map((c) => c.question_id));
    expect(listed.length).toBeGreaterThan(0);
    await panel.scrollIntoViewIfNeeded();
    await screenshot(page, 'reward-view-overlay.png');
    const first = ov.changed_items[0]!;
    await page.locator(`[data-testid="overlay-changed"] li[data-question-id="${first.question_id}"] a`).click();
    await page.locator('[data-testid="item-detail"]').waitFor();
    expect(await page.locator('[data-testid="item-detail"]').textContent()).toContain(`Question ${first.question_id}`);
  });

  it('an overlay that is not a gold file is refused with its name and what is wrong', async () => {
    await page.getByTestId('nav-run').click();
    const bad = tempFile('broken.jsonl');
    writeFileSync(bad, '{"question_id": 1460, "query": "SELECT 1"}\n');
    await page.getByTestId('overlay-file').setInputFiles(bad);
    const alert = page.getByTestId('overlay-error');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('broken.jsonl');
    expect(await alert.textContent()).toContain('question 1460: no "SQL"');
  });
});
