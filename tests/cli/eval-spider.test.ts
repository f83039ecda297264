import { describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';

describe('Spider dev gold evaluated as its own prediction', () => {
  it('scores 100% on every item whose gold executes, and lists the golds that fail', async () => {
    const out = tempFile('spider.json');
    const run = await runCli([
      'eval',
      '--predictions',
      sharedData('spider', 'dev_gold.sql'),
      '--gold',
      sharedData('spider', 'dev_gold.sql'),
      '--db-root',
      sharedData('spider'),
      '--dataset',
      sharedData('spider', 'dev.json'),
      '--out',
      out,
    ]);
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
  });
});
