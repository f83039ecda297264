import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ISOLATION_HEADERS } from '../../isolation.config.ts';
import { ROOT, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { closeAppAfter, importDataset, officialCells, openApp, screenshot, startRun, type AppSession } from './workbench-helpers.ts';

/**
 * Issue 23, item 1: R-VES in Chromium agrees with the CLI's on the same machine, on a page that is
 * NOT cross-origin isolated (performance.now() in 100 µs steps: the case that gave 40.21 against
 * 73.68) and on one that is (COOP/COEP, as `npm start` serves it). The only assertion on timing is
 * that agreement: within 2 points in total and per database. RVES_ALL=1 walks all 13 mini-dev
 * prediction files and writes the figures to test-artifacts/rves-agreement-*.json (docs/r-ves-timing.md).
 */
const DIRS = ['TA_output', 'sql_output_kg'];
const ALL = DIRS.flatMap((d) => readdirSync(sharedData('bird', 'predictions', d)).filter((f) => f.endsWith('.json')).sort().map((f) => sharedData('bird', 'predictions', d, f)));
const ONE = sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json');
const FILES = process.env.RVES_ALL ? ALL : [ONE];
const DBS = ['student_club', 'superhero', 'toxicology'];

interface Figures { total: number; byDb: Record<string, number>; notTimed: number }

async function cliFigures(file: string): Promise<Figures> {
  const out = tempFile('rves.json');
  const r = await runCli([
    'eval', '--predictions', file, '--gold', sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
    '--dataset', sharedData('bird', 'minidev', 'mini_dev_sqlite.json'), '--db-root', sharedData('bird', 'databases'),
    '--metrics', 'ex,r-ves', '--out', out,
  ]);
  expect(r.code, r.stderr).toBe(0);
  const s = readJson<{ summary: { by_difficulty: { total: { r_ves: number; r_ves_not_timed: number } }; by_db: Record<string, { r_ves: number }> } }>(out).summary;
  return { total: s.by_difficulty.total.r_ves, byDb: Object.fromEntries(DBS.map((d) => [d, s.by_db[d]!.r_ves])), notTimed: s.by_difficulty.total.r_ves_not_timed };
}

/** RVES_ISOLATION=coarse or isolated runs one of the two cases (the 13 files take ~6 min each per case here). */
const CASES = process.env.RVES_ISOLATION === 'coarse' ? [false] : process.env.RVES_ISOLATION === 'isolated' ? [true] : [false, true];
for (const isolated of CASES) {
  describe.skipIf(browserSkipReason())(suiteTitle(`R-VES in Chromium ${isolated ? 'cross-origin isolated' : 'not isolated (coarse clock)'} equals the CLI's within 2 points`), { timeout: 3_600_000 }, () => {
    let { server, browser, page, watch } = {} as AppSession;
    closeAppAfter(() => ({ server, browser, watch }));

    it(`on ${FILES.length} mini-dev prediction file(s), in total and per database`, async () => {
      ({ server, browser, page, watch } = await openApp(isolated ? ISOLATION_HEADERS : {}));
      await page.goto(server.url + '#/');
      expect(await page.evaluate(() => crossOriginIsolated)).toBe(isolated);
      const imported = await importDataset(page, { kind: 'bird', name: 'BIRD mini-dev', folder: sharedData('bird') });
      expect(imported.ok, imported.message).toBe(true);
      const rows: Record<string, unknown>[] = [];
      for (const file of FILES) {
        const name = path.basename(file, '.json');
        const t0 = Date.now();
        const cliRun = cliFigures(file).then((f) => (console.log(`[rves] ${name}: CLI done in ${Math.round((Date.now() - t0) / 1000)} s`), f));
        const seen: string[] = [];
        const progress = setInterval(() => {
          void page.getByTestId('run-progress').textContent({ timeout: 1000 }).then((t) => {
            const text = t?.replace(/\s+/g, ' ') ?? '';
            seen.push(text);
            console.log(`[rves] ${name} ${Math.round((Date.now() - t0) / 1000)} s: ${text.slice(0, 200)}`);
          }, () => undefined);
        }, 20_000);
        const run = await startRun(page, { datasetName: 'BIRD mini-dev', predictions: file, name: `${name} r-ves`, tickMetrics: ['R-VES'], waitMs: 1_200_000 });
        clearInterval(progress);
        // Item 8: the 360 items without a database are counted apart, and the rate is of executed items.
        if (seen.length > 0) expect.soft(seen.some((t) => /of 500 items · 360 without a database \(skipped, not scored\) · [\d.]+ items\/s executed/.test(t)), seen.join('\n')).toBe(true);
        console.log(`[rves] ${name}: app done in ${Math.round((Date.now() - t0) / 1000)} s`);
        expect(run.error).toBeNull();
        const cells = await officialCells(page);
        const app: Figures = {
          total: Number(cells['r-ves']!.total),
          byDb: Object.fromEntries(await Promise.all(DBS.map(async (d) => [d, Number(await page.locator(`[data-testid="db-scores"] tr[data-db="${d}"] td[data-col="r-ves"]`).textContent())]))),
          notTimed: Number(cells['rves-not-timed']?.total ?? 0),
        };
        const cli = await cliRun;
        rows.push({ file: name, isolated, app, cli });
        if (file === ONE) await screenshot(page, `rves-dashboard-${isolated ? 'isolated' : 'coarse'}-1400x1000.png`, true);
        if (process.env.RVES_ALL) {
          mkdirSync(path.join(ROOT, 'test-artifacts'), { recursive: true });
          writeFileSync(path.join(ROOT, 'test-artifacts', `rves-agreement-${isolated ? 'isolated' : 'coarse'}.json`), JSON.stringify(rows, null, 1));
        }
        // Nothing is left untimed on either clock; the numbers agree (soft: every file is measured).
        expect.soft({ file: name, app: app.notTimed, cli: cli.notTimed }).toEqual({ file: name, app: 0, cli: 0 });
        expect.soft(Math.abs(app.total - cli.total), `${name}: app ${app.total}, CLI ${cli.total}`).toBeLessThanOrEqual(2);
        for (const d of DBS) expect.soft(Math.abs(app.byDb[d]! - cli.byDb[d]!), `${name} ${d}: app ${app.byDb[d]}, CLI ${cli.byDb[d]}`).toBeLessThanOrEqual(2);
      }
    });
  });
}
