import { describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, sharedData } from '../helpers/shared-data.ts';

const bird = (...p: string[]) => sharedData('bird', ...p);
const FILE = bird('predictions', 'sql_output_kg', 'predict_mini_dev_gpt-4_sqlite.json');
const base = ['eval', '--predictions', FILE, ...minidevFlags()];

interface Item {
  index: number;
  status: string;
  ex: 0 | 1;
  ts: 0 | 1 | null;
  ts_counterexample: { suiteDb: number; predOnly: number[]; goldOnly: number[]; predError: string | null } | null;
  gold_order_dependent: boolean | null;
  passes_by_row_order: boolean | null;
}

describe('eval --metrics ex,ts on real BIRD mini-dev predictions (gpt-4)', () => {
  it('prints TS beside EX, lists the EX-only passes, and writes ts per item, the summary and the suite settings to --out', async () => {
    const out = tempFile('ts.json');
    const run = await runCli([...base, '--metrics', 'ex,ts', '--ts-seed', '3', '--ts-size', '6', '--out', out]);
    expect(run.stderr).not.toMatch(/^error/m);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines).toContain('======================================    TS    =====================================');
    const got = readJson(out);
    const items = (got.items as Item[]).filter((i) => i.status !== 'missing-db');
    expect(items).toHaveLength(140);
    const exOnly = items.filter((i) => i.ex === 1 && i.ts !== 1);
    for (const i of items) {
      expect([0, 1, null]).toContain(i.ts);
      if (i.ts === 1) expect(i.ex).toBe(1);
    }
    for (const i of exOnly) expect(i.ts_counterexample, `item ${i.index}`).not.toBeNull();
    const total = got.summary.by_difficulty.total;
    expect(total.ts).toBeCloseTo((items.filter((i) => i.ts === 1).length / items.length) * 100, 9);
    expect(total.ts).toBeLessThanOrEqual(total.ex);
    expect(total.ex_only).toBe(exOnly.length);
    expect(total.gold_order_dependent).toBe(items.filter((i) => i.gold_order_dependent).length);
    expect(total.passes_by_row_order).toBe(items.filter((i) => i.passes_by_row_order).length);
    expect(run.stdout).toContain(`test suite: ${exOnly.length} EX-only pass(es)`);
    // The TS row of the official table prints the summary's figure.
    const tsRow = lines
      .find((l) => l.startsWith('TS '))!
      .trim()
      .split(/\s+/);
    expect(tsRow[4]).toBe(total.ts.toFixed(2));
    expect(got.summary.inputs.test_suite).toEqual({ seed: 3, size: 6, candidates: 20, max_rows: 60, sample_rows: 200 });
    for (const db of ['student_club', 'superhero', 'toxicology']) {
      const s = got.summary.test_suites[db];
      expect(s.chosen, db).toHaveLength(6);
      expect(s.golds).toBeGreaterThan(0);
    }
  }, 120_000);

  it('--reward ts: each sample of the run file earns its TS (0 for an EX-only pass), with the suite in run.config', async () => {
    const runOut = tempFile('run.json');
    const run = await runCli([...base, '--metrics', 'ex,ts', '--reward', 'ts', '--run-out', runOut]);
    expect(run.code, run.stderr).toBe(0);
    const file = readJson(runOut);
    expect(file.run.config.suite).toEqual({ seed: 1, size: 8, candidates: 20, maxRows: 60, sampleRows: 200 });
    const samples = file.samples as Array<{ ex: number; ts?: number | null; reward: number; status: string }>;
    const scored = samples.filter((s) => s.status !== 'missing-db');
    for (const s of scored) expect(s.reward).toBe(s.ts ?? 0);
    expect(scored.some((s) => s.ex === 1 && s.reward === 0)).toBe(true);
  }, 120_000);

  it('without ts, no ts fields are written', async () => {
    const out = tempFile('ex.json');
    const run = await runCli([...base, '--metrics', 'ex', '--out', out]);
    expect(run.code).toBe(0);
    const got = readJson(out);
    expect(got.items[0]).not.toHaveProperty('ts');
    expect(got.summary.by_difficulty.total).not.toHaveProperty('ts');
    expect(got.summary).not.toHaveProperty('test_suites');
  }, 120_000);

  it.each([
    [['--metrics', 'ex', '--ts-seed', '2'], /--ts-seed: applies to metric ts only/],
    [['--metrics', 'ex,ts', '--ts-seed', 'abc'], /--ts-seed: expected an integer from 0 to 4294967295, got "abc"/],
    [['--metrics', 'ex,ts', '--ts-size', '50'], /--ts-size: expected an integer from 1 to 20, got "50"/],
    [['--metrics', 'ex', '--reward', 'ts'], /--reward: .*uses ts, but TS is not among the metrics \(ex\): add ts/],
  ])('refuses %j with a message naming the flag', async (flags, message) => {
    const run = await runCli([...base, ...flags]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(message);
  });
});
