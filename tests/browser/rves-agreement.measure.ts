import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { birdPredictionFiles } from '../../bench/items.ts';
import { ISOLATION_HEADERS } from '../../isolation.config.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { appRves, bracketedByCli, rvesPairLine, type RvesFigures } from './rves-figures.ts';
import {
  ARTIFACTS,
  LAPTOP,
  closeAppAfter,
  downloadFrom,
  importBirdMiniDev,
  openApp,
  screenshot,
  startRun,
  type AppSession,
} from './workbench-helpers.ts';

/**
 * A measurement, not a test: `npm run bench -- --only rves` runs it (bench/rves.ts) through the
 * `rves-measure` project of vite.config.ts, which the README's test command does not run. It
 * replays BIRD mini-dev prediction files with R-VES in Chromium, on a page that is NOT
 * cross-origin isolated (performance.now() in 100 µs steps) and on one that is (COOP/COEP, as
 * `npm start` serves it), times the CLI before and after the app (`bracketedByCli`), and writes
 * both hosts' figures to the folder RVES_OUT (`rves-coarse.json`, `rves-isolated.json`: JSON rows). The bench turns them into keys with their spread:
 * R-VES is a ratio of wall times, so how far the two hosts agree depends on the machine's load,
 * and no test's verdict may.
 *
 * By default one file (gpt-4o CoT) in each case. RVES_ALL=1 walks all 13 mini-dev prediction files
 * (about 13 x 5 minutes per case on a quiet 2-core machine, the app and the CLI twice per file);
 * RVES_ISOLATION=coarse or isolated runs one case; RVES_FILES=gpt-35-turbo_cot,gpt-4_sqlite
 * measures the files whose names contain those parts; RVES_REPEAT=3 replays the list 3 times on
 * the same page (a page warmed by earlier runs), each replay followed by a fresh CLI.
 */
const ALL = birdPredictionFiles();
const ONE = sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json');
/** RVES_FILES=name,name (parts of file names) measures those files again. */
const PICKED = process.env.RVES_FILES?.split(',').filter((n) => n !== '');
const FILES = PICKED
  ? ALL.filter((f) => PICKED.some((n) => path.basename(f).includes(n)))
  : process.env.RVES_ALL
    ? ALL
    : [ONE];
/** RVES_ISOLATION=coarse or isolated runs one of the two cases. */
const CASES =
  process.env.RVES_ISOLATION === 'coarse'
    ? [false]
    : process.env.RVES_ISOLATION === 'isolated'
      ? [true]
      : [false, true];
/** RVES_REPEAT=N: the files N times over, on one page. */
const REPEAT = Number(process.env.RVES_REPEAT ?? 1);
if (!Number.isInteger(REPEAT) || REPEAT < 1)
  throw new Error(`RVES_REPEAT=${process.env.RVES_REPEAT}: give a whole number of replays, 1 or more`);
const RUNS = Array.from({ length: REPEAT }, () => FILES).flat();
/** A progress line while the run goes on: the items without a database apart, the rate of executed items (item 8). */
const PROGRESS = /of 500 items · 360 without a database \(skipped, not scored\) · [\d.]+ items\/s executed/;

for (const isolated of CASES) {
  const label = isolated ? 'isolated' : 'coarse';
  describe.skipIf(browserSkipReason())(
    suiteTitle(
      `measure: R-VES in Chromium ${isolated ? 'cross-origin isolated' : 'not isolated (coarse clock)'} beside the CLI's, in total and per database`,
    ),
    // Up to 25 minutes a file on a loaded 2-core machine (the app and the CLI twice).
    { timeout: 600_000 + RUNS.length * 1_500_000 },
    () => {
      let { server, browser, page, watch } = {} as AppSession;
      closeAppAfter(() => ({ server, browser, watch }));

      it(`on ${FILES.length} mini-dev prediction file(s)${REPEAT > 1 ? ` ${REPEAT} times` : ''}, in total and per database`, async () => {
        ({ server, browser, page, watch } = await openApp(LAPTOP, isolated ? ISOLATION_HEADERS : {}));
        await page.goto(server.url + '#/');
        expect(await page.evaluate(() => crossOriginIsolated)).toBe(isolated);
        await importBirdMiniDev(page);
        const rows: {
          file: string;
          isolated: boolean;
          app: RvesFigures;
          cli: RvesFigures;
          before: RvesFigures;
          after: RvesFigures;
          load: string;
        }[] = [];
        for (const [k, file] of RUNS.entries()) {
          const name = path.basename(file, '.json') + (REPEAT > 1 ? `-r${Math.floor(k / FILES.length) + 1}` : '');
          const t0 = Date.now();
          const seen: string[] = [];
          let runId = '';
          // The CLI before and after the app (rves-figures.ts, `bracketedByCli`), not beside it:
          // timings sharing the two cores are slowed unevenly.
          const { app, cli, before, after } = await bracketedByCli(file, async () => {
            const progress = setInterval(() => {
              void page
                .getByTestId('run-progress')
                .textContent({ timeout: 1000 })
                .then(
                  (t) => seen.push(t?.replace(/\s+/g, ' ') ?? ''),
                  () => undefined,
                );
            }, 10_000);
            const run = await startRun(page, {
              datasetName: 'BIRD mini-dev',
              predictions: file,
              name: `${name} r-ves`,
              tickMetrics: ['R-VES'],
              waitMs: 1_800_000,
            });
            clearInterval(progress);
            expect(run.error).toBeNull();
            runId = run.runId!;
            return appRves(page);
          });
          // Item 8: the 360 items without a database are counted apart, the rate is of executed items.
          if (seen.length > 0)
            expect
              .soft(
                seen.some((t) => PROGRESS.test(t)),
                seen.join('\n'),
              )
              .toBe(true);
          const load = readFileSync('/proc/loadavg', 'utf8').trim();
          console.log(
            `[rves ${label}] ${name}: ${rvesPairLine(app, cli, before, after)}; in ${Math.round((Date.now() - t0) / 1000)} s (load ${load})`,
          );
          rows.push({ file: name, isolated, app, cli, before, after, load });
          if (file === ONE) {
            await page.setViewportSize({ width: 1400, height: 1000 });
            await screenshot(page, `rves-dashboard-${label}-1400x1000.png`, true);
          }
          if (process.env.RVES_ALL || PICKED) {
            mkdirSync(ARTIFACTS, { recursive: true });
            const out = `rves-agreement-${label}${PICKED ? '-picked' : ''}.json`;
            writeFileSync(path.join(ARTIFACTS, out), JSON.stringify(rows, null, 1));
            // Each item's timing on both sides, for a closer look: the CLI's --out and the app's run JSON.
            copyFileSync(cli.report!, path.join(ARTIFACTS, `rves-${label}-${name}.cli.json`));
            await page.getByTestId('nav-runs').click();
            const exported = await downloadFrom(page, `[data-run-id="${runId}"] [data-testid="export-run"]`);
            writeFileSync(path.join(ARTIFACTS, `rves-${label}-${name}.app.json`), exported.text);
          }
          // The figures go to the bench (bench/rves.ts), which states the gaps with the load.
          if (process.env.RVES_OUT)
            writeFileSync(path.join(process.env.RVES_OUT, `rves-${label}.json`), JSON.stringify(rows, null, 1));
        }
      });
    },
  );
}
