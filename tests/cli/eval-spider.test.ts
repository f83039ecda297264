import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evalToReport, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData, spiderFiles } from '../helpers/shared-data.ts';

describe('Spider dev gold evaluated as its own prediction', () => {
  it('scores 100% on every item whose gold executes, and lists the golds that fail', async () => {
    const { out, ...run } = await evalToReport({ predictions: sharedData('spider', 'dev_gold.sql'), ...spiderFiles() });
    expect(run.code).toBe(0);
    const got = readJson(out);
    expect(got.items).toHaveLength(1034);
    type Item = { index: number; db_id: string; status: string; ex: number; error: string | null };
    const items = got.items as Item[];
    const failing = items.filter((i) => i.status === 'error' || i.status === 'timeout');
    // Listed, so that a regression names the queries: none fails on these databases.
    expect(failing.map((i) => `${i.index} ${i.db_id}: ${i.error}`)).toEqual([]);
    const executed = items.filter((i) => i.status === 'ok');
    expect(executed).toHaveLength(972);
    expect(executed.filter((i) => i.ex !== 1).map((i) => i.index)).toEqual([]);
    expect(got.summary.missing_dbs).toEqual({ wta_1: 62 });
    expect(got.summary.by_difficulty.total.ex).toBe(100);
    // Spider's own rule and levels, by default for a Spider dataset (docs/spider-rules.md).
    expect(got.summary.ex_rule).toBe('spider');
    expect(run.stdout).toContain('EX rule: Spider exec match (test-suite-sql-eval)');
    expect(run.stdout).toMatch(/^\s+easy\s+medium\s+hard\s+extra\s+total$/m);
    expect(Object.keys(got.summary.by_difficulty)).toEqual(expect.arrayContaining(['easy', 'medium', 'hard', 'extra']));
  });

  it("--ex-rule chooses the rule: a prediction with the columns swapped is right only under Spider's", async () => {
    const pred = tempFile('swapped.sql');
    const gold = tempFile('gold.sql');
    writeFileSync(
      gold,
      'SELECT name , country FROM singer ORDER BY age DESC\tconcert_singer\nSELECT country FROM singer\tconcert_singer\n',
    );
    writeFileSync(
      pred,
      'SELECT country , name FROM singer ORDER BY age DESC\tconcert_singer\nSELECT country FROM singer UNION ALL SELECT country FROM singer\tconcert_singer\n',
    );
    const common = ['--predictions', pred, '--gold', gold, '--db-root', sharedData('spider'), '--no-cache'];
    const verdicts = async (rule: string | null) => {
      const out = tempFile(`${rule}.json`);
      const r = await runCli(['eval', ...common, '--out', out, ...(rule ? ['--ex-rule', rule] : [])]);
      expect(r.code, r.stderr).toBe(0);
      const got = readJson(out);
      return { rule: got.summary.ex_rule, ex: (got.items as { ex: number }[]).map((i) => i.ex) };
    };
    // Without --dataset and with no tables.json beside the gold: BIRD's rule.
    expect(await verdicts(null)).toEqual({ rule: 'bird', ex: [0, 1] });
    expect(await verdicts('spider')).toEqual({ rule: 'spider', ex: [1, 0] });
    const bad = await runCli(['eval', ...common, '--ex-rule', 'python']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--ex-rule');
  });

  it("the verdict cache keeps Spider's verdicts apart from BIRD's (the rule is in the key)", async () => {
    const pred = tempFile('cached-swapped.sql');
    const gold = tempFile('cached-gold.sql');
    writeFileSync(gold, 'SELECT name , country FROM singer ORDER BY age DESC\tconcert_singer\n');
    writeFileSync(pred, 'SELECT country , name FROM singer ORDER BY age DESC\tconcert_singer\n');
    const cache = mkdtempSync(path.join(tmpdir(), 'wb-spider-cache-'));
    const once = async (rule: string) => {
      const out = tempFile(`cached-${rule}.json`);
      const args = ['--predictions', pred, '--gold', gold, '--db-root', sharedData('spider'), '--cache', cache];
      const r = await runCli(['eval', ...args, '--out', out, '--ex-rule', rule]);
      expect(r.code, r.stderr).toBe(0);
      const got = readJson(out);
      return { ex: (got.items as { ex: number }[])[0]!.ex, fromCache: got.summary.executions.from_cache };
    };
    expect(await once('bird')).toEqual({ ex: 0, fromCache: 0 });
    // The same item under Spider's rule is not BIRD's cached verdict.
    expect(await once('spider')).toEqual({ ex: 1, fromCache: 0 });
    expect(await once('spider')).toEqual({ ex: 1, fromCache: 1 });
    expect(await once('bird')).toEqual({ ex: 0, fromCache: 1 });
  });
});
