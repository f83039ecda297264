/**
 * `eval` re-times a timeout on SQLite 3.39.3 (sql.js 1.8.0) before calling it one, and counts a
 * planner difference when the verdict there differs: constructed data (tests/helpers/planner-db.ts),
 * a CTE gold that takes minutes on SQLite 3.54.1 and about 0.1 s on 3.39.3, under `--timeout-s 2`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { CO_ROUTINE_GOLD, MATERIALIZED_PRED, plannerDbRoot } from '../helpers/planner-db.ts';

describe('eval: planner differences (constructed data)', () => {
  it('the gold that times out on 3.54.1 is correct on 3.39.3: one planner difference in the output, --out and the run file', async () => {
    const root = plannerDbRoot();
    const gold = path.join(root, 'gold.sql');
    writeFileSync(gold, `${CO_ROUTINE_GOLD}\tplanner\nSELECT count(*) FROM small\tplanner\n`);
    const predictions = path.join(root, 'predictions.json');
    writeFileSync(
      predictions,
      JSON.stringify({
        '0': `${MATERIALIZED_PRED}\t----- bird -----\tplanner`,
        '1': 'SELECT count(*) FROM small\t----- bird -----\tplanner',
      }),
    );
    const out = tempFile('planner.json');
    const runOut = tempFile('planner.run.json');
    const r = await runCli([
      'eval',
      '--predictions',
      predictions,
      '--gold',
      gold,
      '--db-root',
      root,
      '--timeout-s',
      '2',
      '--no-cache',
      '--out',
      out,
      '--run-out',
      runOut,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'version effects measured: 0 item(s) flagged version-sensitive and 1 timeout(s) re-run on SQLite 3.39.3; ' +
        '0 verdict(s) differ (EX or Soft-F1) from SQLite 3.54.1; 1 planner difference(s) (timed out on SQLite 3.54.1, another verdict on 3.39.3)',
    );
    expect(r.stdout).toMatch(/EX 0 \(timeout\) on 3\.54\.1, EX 1 on 3\.39\.3 \(planner difference\)/);
    const got = readJson(out);
    expect(got.summary.version_effects).toMatchObject({
      checked: 1,
      differing: 0,
      planner_differences: 1,
      timeouts_retimed: 1,
    });
    const item0 = (got.items as { index: number; status: string; version_check?: unknown }[]).find(
      (i) => i.index === 0,
    )!;
    expect(item0.status).toBe('timeout');
    expect(item0.version_check).toMatchObject({ status: 'ok', ex: 1, differs: true, planner: true });
    const file = readJson(runOut);
    expect(file.run.versionCheck).toEqual({ sqliteVersion: '3.39.3', checked: 1, differing: 0, planner: 1 });
  }, 300_000);
});
