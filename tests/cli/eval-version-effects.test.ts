/**
 * `eval` measures version effects: the items flagged version-sensitive are re-run on sql.js
 * 1.8.0 (SQLite 3.39.3), and the output, `--out` and the run file say which verdicts differ
 * (meta-llama-3-70b CoT: the CONCAT items 76 and 77 error on the older SQLite).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CACHE_FILE } from '../../src/adapters/node/verdict-cache-file.ts';
import { parseEvalArgs } from '../../src/cli/commands/eval-args.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { cacheableItem, cacheableResult } from '../../src/core/run/verdict-cache.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';
import { readJson, runCli, tempFile, type CliRun } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS } from '../helpers/series-dumps.ts';

/** better-sqlite3 (it ships no types), to count the verdict cache's rows. */
const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (
  file: string,
  options?: { readonly?: boolean },
) => { prepare(sql: string): { get(): unknown }; close(): void };

/** `eval` of one mini-dev predictions file (under ../shared/data/bird/predictions) on the three databases here. */
const minidevEval = (dir: string, file: string) =>
  ['eval', '--predictions', sharedData('bird', 'predictions', dir, file), '--gold', MINIDEV_GOLD].concat([
    '--dataset',
    MINIDEV_QUESTIONS,
    '--db-root',
    DB_ROOT,
    '--workers',
    '2',
  ]);
/**
 * phi-3-medium's file with a timeout of 5 s: its answer to question 247 (a scan of 12k x 24k rows,
 * half a minute on a quiet machine, EX 0) times out at once on SQLite 3.54.1 and again when it is
 * re-timed on 3.39.3, instead of after 30 s on each, in each of this file's three runs; its other
 * answers take under 0.1 s. A timeout is re-timed and counted apart (`timeouts_retimed`), below.
 */
const PHI = [
  ...minidevEval('sql_output_kg', 'predict_mini_dev_phi-3-medium-128k-instruct-1_sqlite.json'),
  '--timeout-s',
  '5',
];

/**
 * `eval` of phi-3-medium with `--no-version-check`, into a verdict cache of its own and a
 * report: run once, for whichever test asks first (the cache's rows and the report's absent
 * measurement are two tests' views of the same run).
 */
let uncheckedRun: Promise<{ run: CliRun; cache: string; out: string }> | undefined;
function phiUnchecked() {
  uncheckedRun ??= (async () => {
    const cache = mkdtempSync(path.join(tmpdir(), 'wb-version-cache-'));
    const out = tempFile('phi-unchecked.json');
    const run = await runCli([...PHI, '--no-version-check', '--cache', cache, '--out', out]);
    return { run, cache, out };
  })();
  return uncheckedRun;
}

describe('eval: version effects measured on the older SQLite', () => {
  it('meta-llama-3-70b CoT: 2 of its 28 flagged items differ on 3.39.3, both CONCAT errors', async () => {
    const out = tempFile('llama.json');
    const runOut = tempFile('llama.run.json');
    const r = await runCli([
      ...minidevEval('TA_output', 'predict_mini_dev_meta-llama-3-70b-instruct2_cot_SQLite.json'),
      '--out',
      out,
      '--run-out',
      runOut,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'version effects measured: 28 item(s) flagged version-sensitive re-run on SQLite 3.39.3; 2 verdict(s) differ (EX or Soft-F1) from SQLite 3.54.1',
    );
    expect(r.stdout).toMatch(
      /\(student_club\): EX 0 · Soft-F1 0\.40 on 3\.54\.1, EX 0 · Soft-F1 0\.00 \(error\) on 3\.39\.3 \(flagged: concat\(\) \(3\.44\.0\)\)/,
    );
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
    expect(file.run.versionCheck).toEqual({ sqliteVersion: '3.39.3', checked: 28, differing: 2, planner: 0 });
    expect(file.run.sqliteVersion).toBe('3.54.1');
    expect(file.samples.filter((s) => s.versionCheck?.differs).map((s) => s.index)).toEqual([76, 77]);
  }, 300_000);

  it("phi-3-medium #37 differs on 3.39.3; the verdict cache keeps the check's verdicts under sql.js 1.8.0's name, with the same effects", async () => {
    const cache = mkdtempSync(path.join(tmpdir(), 'wb-version-cache-'));
    const once = async () => {
      const out = tempFile('phi.json');
      const runOut = tempFile('phi.run.json');
      const r = await runCli([...PHI, '--cache', cache, '--out', out, '--run-out', runOut]);
      expect(r.code, r.stderr).toBe(0);
      const got = readJson(out);
      const samples = parseRunFile(readFileSync(runOut, 'utf8'), 'phi.run.json').samples;
      const all = got.summary.version_effects as {
        checked: number;
        differing: number;
        timeouts_retimed: number;
        items: { index: number; verdicts: string; planner: boolean }[];
      };
      // The flagged items' part: a timeout is re-timed too (toxicology 247, see PHI); timeouts
      // are never cached, and whether one happens is the machine's load.
      const effects = {
        checked: all.checked - all.timeouts_retimed,
        differing: all.differing,
        items: all.items.filter((i) => !i.planner),
      };
      return { got, effects, samples };
    };
    // Once with the cache empty, then again (every main verdict from the cache, and the
    // check's from the cache under sql.js 1.8.0's own key): the same effects both times.
    const first = await once();
    // The store keeps no key text (verdicts-v2.sqlite: rows by the key's sha256), so the check's
    // verdicts are counted as what a run without the check stores fewer.
    const verdictRows = (dir: string) => {
      const db = new Sqlite(path.join(dir, CACHE_FILE), { readonly: true });
      const n = (db.prepare(`SELECT count(*) AS n FROM entries WHERE kind = 'v'`).get() as { n: number }).n;
      db.close();
      return n;
    };
    const { run: r, cache: unchecked } = await phiUnchecked();
    expect(r.code, r.stderr).toBe(0);
    // Every checked item the policy lets the cache keep (texts without a date or time function or
    // another call outside the allow-list: src/core/run/reuse.ts) is kept, under sql.js 1.8.0's key.
    const cacheable = (s: SampleRecord) =>
      s.status !== 'missing-db' && cacheableItem({ ...s, predSql: s.sql }) && cacheableResult(s);
    const checkedCacheable = first.samples.filter((s) => s.versionCheck !== undefined && cacheable(s)).length;
    expect(checkedCacheable).toBeGreaterThan(0);
    expect(verdictRows(cache) - verdictRows(unchecked)).toBeGreaterThanOrEqual(checkedCacheable);
    expect(first.got.summary.executions.from_cache).toBe(0);
    expect(first.effects).toMatchObject({ checked: 22, differing: 1 });
    expect(first.effects.items).toEqual([
      expect.objectContaining({ index: 37, verdicts: 'EX 1 on 3.54.1, EX 0 on 3.39.3' }),
    ]);
    const cached = await once();
    // Every verdict the policy lets the cache keep comes from it; the others run again.
    expect(cached.got.summary.executions.from_cache).toBe(first.samples.filter(cacheable).length);
    expect(cached.effects).toEqual(first.effects);
  }, 300_000);

  it('--no-version-check skips the measurement', async () => {
    const base = ['--predictions', 'p', '--gold', 'g', '--db-root', 'd'];
    expect(parseEvalArgs(base).versionCheck).toBe(true);
    expect(parseEvalArgs([...base, '--no-version-check']).versionCheck).toBe(false);
    const { run: r, out } = await phiUnchecked();
    expect(r.code, r.stderr).toBe(0);
    expect(readJson(out).summary.version_effects).toBeUndefined();
    expect(r.stdout).not.toContain('version effects measured');
  }, 300_000);
});
