/**
 * R-VES of one BIRD mini-dev predictions file in the CLI and on the app's dashboard, in total and
 * per database: the journey's R-VES step (journey.test.ts) and the bench's measurement of how far
 * the two hosts agree (rves-agreement.measure.ts, bench/rves.ts).
 */
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags } from '../helpers/shared-data.ts';
import { officialCells } from './workbench-helpers.ts';
import { dbBound, RVES_DBS, type RvesFigures } from '../../bench/rves.ts';

export { RVES_DBS, type RvesFigures };

/** `eval --metrics ex,soft-f1,r-ves` on `file` against mini-dev: its --out report's figures. */
export async function cliRves(file: string): Promise<RvesFigures> {
  const out = tempFile('rves.json');
  const r = await runCli([
    'eval',
    '--predictions',
    file,
    ...minidevFlags(),
    '--metrics',
    'ex,soft-f1,r-ves',
    '--out',
    out,
  ]);
  expect(r.code, r.stderr).toBe(0);
  type Bucket = { ex: number; r_ves: number; r_ves_not_timed: number; r_ves_sd: number };
  const s = readJson<{ summary: { by_difficulty: { total: Bucket }; by_db: Record<string, Bucket> } }>(out).summary;
  return {
    total: s.by_difficulty.total.r_ves,
    byDb: Object.fromEntries(RVES_DBS.map((d) => [d, s.by_db[d]!.r_ves])),
    notTimed: s.by_difficulty.total.r_ves_not_timed,
    ex: s.by_difficulty.total.ex.toFixed(2),
    sd: s.by_difficulty.total.r_ves_sd,
    sdByDb: Object.fromEntries(RVES_DBS.map((d) => [d, s.by_db[d]!.r_ves_sd])),
    report: out,
  };
}

/** The same figures from the dashboard on screen (its official table and By database). */
export async function appRves(page: Page): Promise<RvesFigures> {
  const cells = await officialCells(page);
  const byDb: Record<string, number> = {};
  const sdByDb: Record<string, number> = {};
  const dbCell = (d: string, col: string) =>
    page.locator(`[data-testid="db-scores"] tr[data-db="${d}"] td[data-col="${col}"]`).textContent();
  for (const d of RVES_DBS) {
    byDb[d] = Number(await dbCell(d, 'r-ves'));
    sdByDb[d] = halfSpread(await dbCell(d, 'r-ves-spread'));
  }
  return {
    total: Number(cells['r-ves']!.total),
    byDb,
    notTimed: Number(cells['rves-not-timed']?.total ?? 0),
    ex: cells.ex!.total!,
    sd: halfSpread(cells['rves-spread']?.total ?? null),
    sdByDb,
  };
}

/** "±0.72" as shown (two standard deviations) -> 0.36; anything else fails the test that reads it. */
function halfSpread(shown: string | null): number {
  const m = /^±(\d+\.\d\d)$/.exec(shown?.trim() ?? '');
  expect(m, `R-VES's rerun spread as shown: ${shown}`).not.toBeNull();
  return Number(m![1]) / 2;
}

/**
 * The CLI timed before and after `during` (the app's run), and its figures as the mean of the
 * two: the machine's load drifts over a run of minutes (the tests before these leave theirs
 * behind) and R-VES moves with it, so a CLI timed only after the app compared the app's busier
 * minutes with its own quieter ones. The mean of the two sides brackets the app's minutes.
 */
export async function bracketedByCli(
  file: string,
  during: () => Promise<RvesFigures>,
): Promise<{ app: RvesFigures; cli: RvesFigures; before: RvesFigures; after: RvesFigures }> {
  const before = await cliRves(file);
  const app = await during();
  const after = await cliRves(file);
  expect(after.ex, 'EX does not depend on the timing').toBe(before.ex);
  const mean = (a: number, b: number) => (a + b) / 2;
  const meanSd = (a: number, b: number) => Math.sqrt(a * a + b * b) / 2;
  const cli: RvesFigures = {
    total: mean(before.total, after.total),
    byDb: Object.fromEntries(RVES_DBS.map((d) => [d, mean(before.byDb[d]!, after.byDb[d]!)])),
    notTimed: before.notTimed + after.notTimed,
    ex: before.ex,
    sd: meanSd(before.sd, after.sd),
    sdByDb: Object.fromEntries(RVES_DBS.map((d) => [d, meanSd(before.sdByDb[d]!, after.sdByDb[d]!)])),
    report: after.report,
  };
  return { app, cli, before, after };
}

/**
 * One line of the two hosts' figures, for the suite's log: `app 71.51 ±0.79 CLI 71.16 (before
 * 71.25, after 71.06); per database app/CLI (bound) student_club 65.81/66.37 (2.67), ...`.
 */
export function rvesPairLine(app: RvesFigures, cli: RvesFigures, before?: RvesFigures, after?: RvesFigures): string {
  const f = (n: number) => n.toFixed(2);
  const sides = before && after ? ` (before ${f(before.total)}, after ${f(after.total)})` : '';
  return (
    `app ${f(app.total)} ±${f(2 * app.sd)} CLI ${f(cli.total)}${sides}; per database app/CLI (bound) ` +
    RVES_DBS.map(
      (d) => `${d} ${f(app.byDb[d]!)}/${f(cli.byDb[d]!)} (${f(dbBound(app.sdByDb[d]!, cli.sdByDb[d]!))})`,
    ).join(', ')
  );
}
