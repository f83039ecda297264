import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';

const dbRoot = () => sharedData('bird', 'databases');

/** A gold file and a predictions file (one SQL per line) over the superhero database. */
function pair(preds: string[], golds: string[]): { pred: string; gold: string } {
  const pred = tempFile('preds.sql');
  const gold = tempFile('gold.sql');
  writeFileSync(pred, preds.join('\n') + '\n');
  writeFileSync(gold, golds.map((g) => `${g}\tsuperhero`).join('\n') + '\n');
  return { pred, gold };
}

/** `eval` of a pair of files on the BIRD databases here, then `extra`, its JSON report written to `out`. */
const evalPair = (files: { pred: string; gold: string }, out: string, ...extra: string[]) =>
  runCli(['eval', '--predictions', files.pred, '--gold', files.gold, '--db-root', dbRoot(), ...extra, '--out', out]);

describe('CLI options', () => {
  it('lets a DELETE score as correct by default, flags it, and makes it an error under --read-only', async () => {
    const { pred, gold } = pair(
      ['DELETE FROM superhero', 'SELECT count(*) FROM superhero'],
      ["SELECT id FROM superhero WHERE superhero_name = 'no such hero'", 'SELECT count(*) FROM superhero'],
    );
    const out = tempFile('o.json');
    const run = await evalPair({ pred, gold }, out);
    expect(run.code).toBe(0);
    const items = readJson(out).items;
    expect(items[0]).toMatchObject({ ex: 1, status: 'ok', mutated_db: true });
    // Nothing leaks into the next item: the table is whole again.
    expect(items[1]).toMatchObject({ ex: 1, status: 'ok', mutated_db: false });
    expect(run.stdout).toMatch(/1 prediction\(s\) wrote to the database/);

    const ro = await evalPair({ pred, gold }, out, '--read-only');
    expect(ro.code).toBe(0);
    const roItems = readJson(out).items;
    expect(roItems[0]).toMatchObject({ ex: 0, status: 'error' });
    expect(roItems[0].error).toMatch(/^prediction: /);
    expect(roItems[1]).toMatchObject({ ex: 1, status: 'ok' });
  });

  it('computes R-VES when asked, and says it depends on the machine', async () => {
    const { pred, gold } = pair(
      ['SELECT count(*) FROM superhero', 'SELECT 1', 'SELECT id FROM superhero'],
      ['SELECT count(*) FROM superhero', 'SELECT 2', 'SELECT id FROM superhero'],
    );
    const out = tempFile('o.json');
    const run = await evalPair({ pred, gold }, out, '--metrics', 'ex,r-ves', '--ves-iterations', '5');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('R-VES');
    expect(run.stdout).toMatch(/not reproducible across machines/);
    const items = readJson(out).items;
    expect(items[1]).toMatchObject({ ex: 0, r_ves: 0 });
    for (const i of [items[0], items[2]]) {
      expect([0.25, 0.5, 0.75, 1, 1.25]).toContain(i.r_ves);
      expect(i.time_ratio).toBeGreaterThan(0);
      expect(i.soft_f1).toBeNull();
    }
    // How far a rerun moves R-VES, recomputed here from the items' own time ratios: an
    // item within 2 % of a reward step flips sqrt(reward) to the step's other side with chance 1/2.
    const reward = (r: number) => (r >= 2 ? 1.25 : r >= 1 ? 1 : r >= 0.5 ? 0.75 : r >= 0.25 ? 0.5 : 0.25);
    const stepNear = (r: number) => [0.25, 0.5, 1, 2].find((step) => Math.abs(Math.log(r / step)) < Math.log(1.02));
    const near = [items[0], items[2]].filter((i) => stepNear(i.time_ratio) !== undefined);
    const flip = (r: number) => {
      const step = stepNear(r)!;
      return Math.abs(Math.sqrt(reward(r)) - Math.sqrt(reward(r >= step ? step * 0.97 : step)));
    };
    const sd = (Math.sqrt(near.reduce((a, i) => a + flip(i.time_ratio) ** 2 / 4, 0)) / 3) * 100;
    const total = readJson(out).summary.by_difficulty.total;
    expect(total).toMatchObject({ r_ves_timed: 2, r_ves_near_step: near.length });
    expect(total.r_ves_sd).toBeCloseTo(sd, 9);
    expect(run.stdout).toContain(
      `note: R-VES moves between runs of the same predictions: ${near.length} of 2 timed correct item(s) sit within 2 % of a reward step`,
    );
    expect(run.stdout).toContain(`a rerun's total is expected within ±${(2 * sd).toFixed(2)} (2 sd)`);
  });

  it('times out a runaway prediction per item with --timeout-s and goes on', async () => {
    const { pred, gold } = pair(
      ['WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c', 'SELECT 1'],
      ['SELECT 1', 'SELECT 1'],
    );
    const out = tempFile('o.json');
    const run = await evalPair({ pred, gold }, out, '--timeout-s', '1.5', '--workers', '1');
    expect(run.code).toBe(0);
    const items = readJson(out).items;
    expect(items[0]).toMatchObject({ status: 'timeout', ex: 0 });
    expect(items[1]).toMatchObject({ status: 'ok', ex: 1 });
  });
});

describe('CLI errors on unusable input: non-zero exit and a message naming the problem', () => {
  const gold = () => sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql');
  const cases: [string, () => string[], RegExp][] = [
    ['no command', () => [], /usage: npm run --silent cli -- <command>/],
    ['an unknown command', () => ['evaluate'], /unknown command "evaluate"/],
    ['a missing required flag', () => ['eval', '--gold', gold(), '--db-root', dbRoot()], /--predictions: is required/],
    [
      'an unknown flag',
      () => ['eval', '--predictions', gold(), '--gold', gold(), '--db-root', dbRoot(), '--fast'],
      /Unknown option '--fast'/,
    ],
    [
      'a predictions file that does not exist',
      () => ['eval', '--predictions', '/nope/p.json', '--gold', gold(), '--db-root', dbRoot()],
      /--predictions: file not found: \/nope\/p.json/,
    ],
    [
      'a db root that is not a directory',
      () => ['eval', '--predictions', gold(), '--gold', gold(), '--db-root', gold()],
      /--db-root: not a directory/,
    ],
    [
      'an unknown metric',
      () => ['eval', '--predictions', gold(), '--gold', gold(), '--db-root', dbRoot(), '--metrics', 'ex,bleu'],
      /--metrics: unknown metric "bleu"/,
    ],
    [
      'a bad timeout',
      () => ['eval', '--predictions', gold(), '--gold', gold(), '--db-root', dbRoot(), '--timeout-s', '0'],
      /--timeout-s: expected a positive number, got "0"/,
    ],
    [
      'a bad worker count',
      () => ['eval', '--predictions', gold(), '--gold', gold(), '--db-root', dbRoot(), '--workers', '1.5'],
      /--workers: expected a positive integer/,
    ],
  ];
  it.each(cases)('%s', async (_n, args, message) => {
    const run = await runCli(args());
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toMatch(message);
  });

  it('names the file and position of truncated JSON predictions', async () => {
    const p = tempFile('cut.json');
    writeFileSync(p, '{"0": "SELECT 1\\t----- bird -----\\tsuperhero",\n "1": "SELE');
    const run = await runCli(['eval', '--predictions', p, '--gold', gold(), '--db-root', dbRoot()]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: cut\.json:2:\d+: .*truncated/m);
  });

  it('refuses a predictions file that is not UTF-8', async () => {
    const p = tempFile('latin1.sql');
    writeFileSync(p, Buffer.from([0x53, 0x45, 0x4c, 0x45, 0x43, 0x54, 0x20, 0x27, 0xe9, 0x27, 0x0a]));
    const run = await runCli(['eval', '--predictions', p, '--gold', gold(), '--db-root', dbRoot()]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--predictions: .*latin1\.sql is not UTF-8 text/);
  });

  it('refuses JSONL predictions whose question ids are not in the dataset', async () => {
    const p = tempFile('other.jsonl');
    writeFileSync(p, '{"question_id": 999999, "sql": "SELECT 1"}\n');
    const run = await runCli([
      'eval',
      '--predictions',
      p,
      '--gold',
      gold(),
      '--db-root',
      dbRoot(),
      '--dataset',
      sharedData('bird', 'minidev', 'mini_dev_sqlite.json'),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/other\.jsonl:1: .*999999/);
  });
});
