/**
 * `npm run bench -- --only rves`: how far the app's R-VES agrees with the CLI's on the same
 * machine. R-VES is a ratio of wall times, so the gap between two hosts (or two runs of one)
 * depends on the machine's load: it is measured here, with the load, never asserted by a test.
 *
 * Runs tests/browser/rves-agreement.measure.ts (vitest project `rves-measure`: the built app in
 * headless Chromium, the CLI timed before and after the app on each file), reads the rows it
 * writes, and reports per case (`coarse`: a page that is not cross-origin isolated, clock in
 * 100 µs steps; `isolated`: COOP/COEP as `npm start` serves it):
 * - `rves_app_cli_gap_total_<case>`: the largest |app - CLI| of the total over the files (points);
 * - `rves_app_cli_gap_db_over_bound_<case>`: the largest per-database |app - CLI| divided by its
 *   bound (`dbBound`: 2 points, or 3 sd of the gap from the rerun spread both hosts state,
 *   whichever is wider); above 1 means a gap beyond what the stated spreads explain;
 * - `rves_cli_rerun_gap_total_<case>`: the largest |before - after| of the CLI's two timings of a
 *   file: the spread of one host against itself in the same minutes, the reference for the above;
 * - `rves_app_sd_total_<case>`: the rerun spread the dashboard states (one sd, points, mean).
 * Targets: the total within 2 points (docs/r-ves-timing.md), the per-database ratio <= 1.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The mini-dev databases present in ../shared/data (the other questions are not scored). */
export const RVES_DBS = ['student_club', 'superhero', 'toxicology'];

export interface RvesFigures {
  total: number;
  byDb: Record<string, number>;
  /** Correct items that could not be timed (left out of R-VES). */
  notTimed: number;
  /** EX in total as shown (two decimals). */
  ex: string;
  /**
   * How far a rerun moves R-VES, as each host states it (one standard deviation, points): the
   * CLI's r_ves_sd, the dashboard's "± rerun" (two of them) halved.
   */
  sd: number;
  sdByDb: Record<string, number>;
  /** The CLI's --out report (its items' r_ves and time_ratio), for a closer look. */
  report?: string;
}

/**
 * The bound on one database's app-vs-CLI gap: 2 points, or three standard deviations of the gap
 * where the rerun spread both hosts state is wider (a database of 40-52 items moves by about a
 * quarter point each time one item's reward lands on the other side of a step; two runs of the
 * official script differ the same way: docs/r-ves-timing.md, "How far a rerun moves R-VES").
 */
export function dbBound(appSd: number, cliSd: number, points = 2): number {
  return Math.max(points, 3 * Math.hypot(appSd, cliSd));
}

export interface RvesRow {
  file: string;
  isolated: boolean;
  app: RvesFigures;
  cli: RvesFigures;
  before: RvesFigures;
  after: RvesFigures;
  load: string;
}

/** The keys of one case's rows (see the file's comment). */
export function rvesKeys(label: string, rows: readonly RvesRow[]): Record<string, number> {
  const max = (xs: number[]) => Math.max(...xs);
  return {
    [`rves_app_cli_gap_total_${label}`]: max(rows.map((r) => Math.abs(r.app.total - r.cli.total))),
    [`rves_app_cli_gap_db_over_bound_${label}`]: max(
      rows.flatMap((r) =>
        RVES_DBS.map((d) => Math.abs(r.app.byDb[d]! - r.cli.byDb[d]!) / dbBound(r.app.sdByDb[d]!, r.cli.sdByDb[d]!)),
      ),
    ),
    [`rves_cli_rerun_gap_total_${label}`]: max(rows.map((r) => Math.abs(r.before.total - r.after.total))),
    [`rves_app_sd_total_${label}`]: rows.reduce((s, r) => s + r.app.sd, 0) / rows.length,
  };
}

export const RVES_TARGETS: Record<string, string> = {
  rves_app_cli_gap_total_coarse: '<= 2',
  rves_app_cli_gap_total_isolated: '<= 2',
  rves_app_cli_gap_db_over_bound_coarse: '<= 1',
  rves_app_cli_gap_db_over_bound_isolated: '<= 1',
};

/** Runs the measurement (Chromium and the CLI), about 10 minutes per file and case on 2 cores. */
export async function measureRves(
  log: (msg: string) => void,
): Promise<{ keys: Record<string, number>; rows: RvesRow[] }> {
  const out = mkdtempSync(path.join(tmpdir(), 'wb-rves-'));
  log(`R-VES app vs CLI: vitest --project rves-measure (figures in ${out})`);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn('npx', ['vitest', 'run', '--project', 'rves-measure'], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, RVES_OUT: out },
    });
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`the R-VES measurement failed (vitest exited ${code}): see its output above`);
  const keys: Record<string, number> = {};
  const rows: RvesRow[] = [];
  for (const label of ['coarse', 'isolated']) {
    const file = path.join(out, `rves-${label}.json`);
    if (!existsSync(file)) continue;
    const got = JSON.parse(readFileSync(file, 'utf8')) as RvesRow[];
    rows.push(...got);
    Object.assign(keys, rvesKeys(label, got));
  }
  if (rows.length === 0) throw new Error(`the R-VES measurement wrote no figures to ${out} (is Chromium installed?)`);
  return { keys, rows };
}
