import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { spiderOneDbFolder } from './offline-helpers.ts';
import { type AppSession, closeAppAfter, importDataset, openApp, screenshot } from './workbench-helpers.ts';

interface CliProbe {
  questions: number;
  exploits: Array<{ id: string; variants: number; official: { won: number }; read_only: { won: number } }>;
}

/** The probe screen gives the CLI's counts on the same questions and database. */
describe.skipIf(browserSkipReason())(suiteTitle('the reward-hacking probe screen'), () => {
  let { server, browser, page, watch } = {} as AppSession;
  let cli: CliProbe;

  beforeAll(async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'wb-probe-'));
    mkdirSync(path.join(root, 'concert_singer'));
    symlinkSync(
      sharedData('spider', 'concert_singer', 'concert_singer.sqlite'),
      path.join(root, 'concert_singer', 'concert_singer.sqlite'),
    );
    const out = tempFile('probe.json');
    const run = await runCli([
      'probe',
      '--gold',
      sharedData('spider', 'dev_gold.sql'),
      '--dataset',
      sharedData('spider', 'dev.json'),
      '--db-root',
      root,
      '--workers',
      '1',
      '--out',
      out,
    ]);
    expect(run.code).toBe(0);
    cli = readJson<CliProbe>(out);

    ({ server, browser, page, watch } = await openApp());
    await page.goto(server.url + '#/datasets');
    expect((await importDataset(page, { kind: 'spider', name: 'Spider one db', folder: spiderOneDbFolder() })).ok).toBe(
      true,
    );
  }, 300_000);

  closeAppAfter(() => ({ server, browser, watch }));

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
    await screenshot(page, 'probe-view.png', true);

    // The report is still there after a reload, for the same dataset.
    const official = await table.locator('[data-col="official"]').allTextContents();
    await page.reload();
    await page.getByTestId('probe-dataset').selectOption({ label: 'Spider one db' });
    await page.getByTestId('probe-table').waitFor();
    expect(await page.getByTestId('probe-table').locator('[data-col="official"]').allTextContents()).toEqual(official);
    expect(await page.getByTestId('probe-when').textContent()).toContain('kept in this browser');
  }, 240_000);
});
