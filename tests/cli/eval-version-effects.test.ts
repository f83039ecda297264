/**
 * `eval` measures version effects: the items flagged version-sensitive are re-run on sql.js
 * 1.8.0 (SQLite 3.39.3), and the output, `--out` and the run file say which verdicts differ
 * (meta-llama-3-70b CoT: the CONCAT items 76 and 77 error on the older SQLite).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseEvalArgs } from '../../src/cli/commands/eval-args.ts';
import { parseRunFile } from '../../src/core/run/run-file.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';

describe('eval: version effects measured on the older SQLite', () => {
  it('meta-llama-3-70b CoT: 2 of its 28 flagged items differ on 3.39.3, both CONCAT errors', async () => {
    const out = tempFile('llama.json');
    const runOut = tempFile('llama.run.json');
    const r = await runCli([
      'eval', '--predictions', sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_meta-llama-3-70b-instruct2_cot_SQLite.json'),
      '--gold', sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), '--dataset', sharedData('bird', 'minidev', 'mini_dev_sqlite.json'),
      '--db-root', sharedData('bird', 'databases'), '--workers', '2', '--out', out, '--run-out', runOut,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('version effects measured: 28 item(s) flagged version-sensitive re-run on SQLite 3.39.3; 2 verdict(s) differ (EX or Soft-F1) from SQLite 3.54.1');
    expect(r.stdout).toMatch(/\(student_club\): EX 0 · Soft-F1 0\.40 on 3\.54\.1, EX 0 · Soft-F1 0\.00 \(error\) on 3\.39\.3 \(flagged: concat\(\) \(3\.44\.0\)\)/);
    const got = readJson(out);
    expect(got.summary.version_effects).toMatchObject({ sqlite_version: '3.39.3', checked: 28, differing: 2 });
    expect(got.summary.version_effects.items.map((i: { index: number }) => i.index)).toEqual([76, 77]);
    const items = got.items as { index: number; version_check?: { status: string; error: string; differs: boolean } }[];
    expect(items.filter((i) => i.version_check).length).toBe(28);
    for (const index of [76, 77]) {
      expect(items.find((i) => i.index === index)!.version_check).toMatchObject({ status: 'error', differs: true });
      expect(items.find((i) => i.index === index)!.version_check!.error).toMatch(/no such function: concat/i);
    }
    // The run file carries each check and the count; reading it back keeps them.
    const file = parseRunFile(readFileSync(runOut, 'utf8'), 'llama.run.json');
    expect(file.run.versionCheck).toEqual({ sqliteVersion: '3.39.3', checked: 28, differing: 2 });
    expect(file.run.sqliteVersion).toBe('3.54.1');
    expect(file.samples.filter((s) => s.versionCheck?.differs).map((s) => s.index)).toEqual([76, 77]);
  }, 300_000);

  it('--no-version-check skips the measurement', () => {
    const base = ['--predictions', 'p', '--gold', 'g', '--db-root', 'd'];
    expect(parseEvalArgs(base).versionCheck).toBe(true);
    expect(parseEvalArgs([...base, '--no-version-check']).versionCheck).toBe(false);
  });
});
