/**
 * `eval --exclude FILE`: the questions listed count in no metric (the summary equals one over
 * the other items), the count is printed, and a bad line is refused naming the file and the line
 * before anything runs.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';

const dbRoot = () => sharedData('bird', 'databases');

function files(preds: string[], golds: string[], exclude: string): { pred: string; gold: string; exclude: string } {
  const pred = tempFile('preds.sql');
  const gold = tempFile('gold.sql');
  const ex = tempFile('exclude.jsonl');
  writeFileSync(pred, preds.join('\n') + '\n');
  writeFileSync(gold, golds.map((g) => `${g}\tsuperhero`).join('\n') + '\n');
  writeFileSync(ex, exclude);
  return { pred, gold, exclude: ex };
}

const evalWith = (f: { pred: string; gold: string; exclude: string }, out: string, exclude = true) =>
  runCli([
    'eval',
    '--predictions',
    f.pred,
    '--gold',
    f.gold,
    '--db-root',
    dbRoot(),
    '--no-cache',
    ...(exclude ? ['--exclude', f.exclude] : []),
    '--out',
    out,
  ]);

describe('eval --exclude', () => {
  it('leaves the listed questions out of every metric and prints how many', async () => {
    const f = files(
      ['SELECT count(*) FROM superhero', 'SELECT 1', 'SELECT id FROM superhero', 'SELECT 4'],
      ['SELECT count(*) FROM superhero', 'SELECT 2', 'SELECT id FROM superhero', 'SELECT 3'],
      '{"question_id": 1, "reason": "gold is a constant", "author": "t", "date": "2026-12-07"}\n',
    );
    const out = tempFile('o.json');
    const all = await evalWith(f, out, false);
    expect(all.code, all.stderr).toBe(0);
    const items = readJson(out).items as Array<{ question_id: number; ex: number }>;
    expect(readJson(out).summary.by_difficulty.total).toMatchObject({ count: 4, ex: 50 });
    const run = await evalWith(f, out);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('1 question excluded (--exclude exclude.jsonl)');
    const left = items.filter((i) => i.question_id !== 1);
    expect(readJson(out).summary.by_difficulty.total).toMatchObject({
      count: left.length,
      ex: (left.reduce((a, i) => a + i.ex, 0) / left.length) * 100,
    });
    expect(readJson(out).summary.by_db.superhero.count).toBe(3);
  }, 120_000);

  it('refuses a bad line naming the file and the line, before anything runs', async () => {
    const f = files(
      ['SELECT 1'],
      ['SELECT 1'],
      '{"question_id": 0, "reason": "x", "author": "t", "date": "2026-12-07"}\n{"question_id": 1, "reason": "", "author": "t", "date": "2026-12-07"}\n',
    );
    const out = tempFile('bad.json');
    const run = await evalWith(f, out);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/--exclude: .*exclude\.jsonl line 2: reason is required/);
  }, 120_000);
});
