import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData, spiderFlags } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { spiderOneDbFolder } from './offline-helpers.ts';
import { type AppSession, importDataset, screenshot, useApp } from './workbench-helpers.ts';

interface CliProbe {
  questions: number;
  exploits: Array<{ id: string; variants: number; official: { won: number }; read_only: { won: number } }>;
}

/** The probe screen gives the CLI's counts on the same questions and database. */
describe.skipIf(browserSkipReason())(suiteTitle('the reward-hacking probe screen'), () => {
  let { page } = {} as AppSession;
  useApp((s) => ({ page } = s), { hash: '#/datasets' });
  let cli: CliProbe;

  beforeAll(async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'wb-probe-'));
    mkdirSync(path.join(root, 'concert_singer'));
    symlinkSync(
      sharedData('spider', 'concert_singer', 'concert_singer.sqlite'),
      path.join(root, 'concert_singer', 'concert_singer.sqlite'),
    );
    const out = tempFile('probe.json');
    const run = await runCli(['probe', ...spiderFlags({ dbRoot: root }), '--workers', '1', '--out', out]);
    expect(run.code).toBe(0);
    cli = readJson<CliProbe>(out);
    expect((await importDataset(page, { kind: 'spider', name: 'Spider one db', folder: spiderOneDbFolder() })).ok).toBe(
      true,
    );
  }, 300_000);

  it('runs every exploit on the stored questions and shows, per exploit, the questions won under each semantics as the CLI counts them', async () => {
    await page.getByTestId('nav-probe').click();
    // The choice shows the dataset the probe will use (it rendered blank when the route named none).
    expect(await page.getByTestId('probe-dataset').inputValue()).not.toBe('');
    await page.getByTestId('probe-dataset').selectOption({ label: 'Spider one db' });
    await page.getByTestId('probe-start').click();
    const table = page.getByTestId('probe-table');
    await table.waitFor({ timeout: 180_000 });
    expect(await page.getByRole('heading', { level: 2 }).first().textContent()).toBe(
      `Spider one db: ${cli.questions} questions probed`,
    );
    expect(cli.questions).toBe(45);
    for (const e of cli.exploits) {
      const row = table.locator(`tr[data-exploit="${e.id}"]`);
      expect(await row.locator('[data-col="variants"]').textContent()).toBe(String(e.variants));
      expect(await row.locator('[data-col="official"]').getAttribute('data-won')).toBe(String(e.official.won));
      expect(await row.locator('[data-col="read-only"]').getAttribute('data-won')).toBe(String(e.read_only.won));
    }
    const del = cli.exploits.find((e) => e.id === 'delete-table')!;
    expect(del.official.won).toBeGreaterThan(0);
    expect(await page.getByTestId('probe-verdict').count()).toBe(1);
    // The constant-answer note shows exactly when a constant answer wins a question (read-only does not stop it).
    const constant = cli.exploits.find((e) => e.id === 'constant-answer')!;
    expect(constant.read_only.won).toBe(constant.official.won);
    expect(await page.getByTestId('probe-constant').count()).toBe(constant.official.won > 0 ? 1 : 0);
    await screenshot(page, 'probe-view.png', true);

    // The report is still there after a reload, for the same dataset.
    const official = await table.locator('[data-col="official"]').allTextContents();
    await page.reload();
    await page.getByTestId('probe-dataset').selectOption({ label: 'Spider one db' });
    await page.getByTestId('probe-table').waitFor();
    expect(await page.getByTestId('probe-table').locator('[data-col="official"]').allTextContents()).toEqual(official);
    expect(await page.getByTestId('probe-when').textContent()).toContain('kept in this browser');

    // The wins open, by question id, and export.
    const spiderDev = readJson<Array<{ db_id: string }>>(sharedData('spider', 'dev.json'));
    const ids = new Set(spiderDev.flatMap((q, i) => (q.db_id === 'concert_singer' ? [i] : [])));
    await page.locator('tr[data-exploit="delete-table"] [data-col="official"] [data-testid="probe-wins-open"]').click();
    const list = page.getByTestId('probe-wins');
    await list.waitFor();
    const shown = await list.locator('li').evaluateAll((ls) =>
      ls.map((l) => ({
        index: Number((l as HTMLElement).dataset.index),
        text: l.querySelector('strong')?.textContent,
      })),
    );
    expect(shown).toHaveLength(del.official.won);
    // Spider's question id is its position in dev.json: every win is a concert_singer question, named "#<id>".
    expect(shown.every((w) => ids.has(w.index) && w.text === `#${w.index}`)).toBe(true);
    // Each opens its question in the reward playground.
    const hrefs = await list.getByTestId('probe-win-link').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    expect(hrefs.every((h, i) => new RegExp(`^#/playground/[^/?]+/${shown[i]!.index}(\\?|$)`).test(h ?? ''))).toBe(
      true,
    );
    await page.setViewportSize({ width: 1400, height: 1000 });
    await screenshot(page, 'probe-wins-1400x1000.png', true);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'probe-wins-390x844.png', true);
    await page.setViewportSize({ width: 1400, height: 1000 });
    const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('probe-wins-export').click()]);
    const csv = readFileSync((await dl.path())!, 'utf8')
      .trim()
      .split('\r\n');
    const total = cli.exploits.reduce((n, e) => n + e.official.won + e.read_only.won, 0);
    expect(csv[0]).toBe('exploit,semantics,index,question_id,db_id,sql');
    expect(csv).toHaveLength(1 + total);
    expect(csv.filter((l) => l.startsWith('delete-table,official,'))).toHaveLength(del.official.won);
  }, 240_000);
});
