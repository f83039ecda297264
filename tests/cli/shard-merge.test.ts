import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseShard, shardDatabases } from '../../src/core/batch/shard.ts';
import { runCli, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';

const base = [
  'eval', '--predictions', sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json'),
  '--gold', sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), '--dataset', sharedData('bird', 'minidev', 'mini_dev_sqlite.json'),
  '--db-root', sharedData('bird', 'databases'), '--workers', '1',
];

/** The bytes of an output without what measures the machine or the moment: times, the run's id and dates. */
function stable(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/"(elapsed_ms|elapsedMs)": [^,\n]+/g, '"$1": 0')
    .replace(/"(id|createdAt|updatedAt)": "[^"]*"/g, '"$1": ""');
}

describe('sharded evaluation and merge', () => {
  it('parses K/N and refuses anything else, naming the flag', () => {
    expect(parseShard('2/3')).toEqual({ k: 2, n: 3 });
    for (const bad of ['0/3', '4/3', '3', 'a/b', '1/0']) expect(() => parseShard(bad)).toThrow(/--shard: expected K\/N/);
  });

  it('gives every database to exactly one shard, balanced by items, the same on every call', () => {
    const items = [...'aaaaabbbccd'].map((dbId, index) => ({ index, dbId }) as never);
    expect(shardDatabases(items, 2)).toEqual([['a', 'd'], ['b', 'c']]);
    expect(shardDatabases(items, 2)).toEqual(shardDatabases(items, 2));
    expect(shardDatabases(items, 5).flat().sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('merges 3 shards into the report and run file of the single run, byte for byte but for the times and the run id', async () => {
    const single = { out: tempFile('single.json'), run: tempFile('single.run.json') };
    expect((await runCli([...base, '--out', single.out, '--run-out', single.run])).code).toBe(0);
    const shards = [1, 2, 3].map((k) => ({ out: tempFile(`shard${k}.json`), run: tempFile(`shard${k}.run.json`) }));
    for (const [i, s] of shards.entries()) {
      const r = await runCli([...base, '--shard', `${i + 1}/3`, '--out', s.out, '--run-out', s.run]);
      expect(r.code, r.stderr).toBe(0);
    }
    // Each shard holds whole databases, and none is in two shards.
    const dbsOf = (f: string) => new Set((JSON.parse(readFileSync(f, 'utf8')).items as { db_id: string }[]).map((x) => x.db_id));
    const sets = shards.map((s) => dbsOf(s.out));
    expect(sets.reduce((n, s) => n + s.size, 0)).toBe(new Set(sets.flatMap((s) => [...s])).size);

    const merged = { out: tempFile('merged.json'), run: tempFile('merged.run.json') };
    const m = await runCli(['merge', '--out', merged.out, '--run-out', merged.run, ...shards.flatMap((s) => [s.run, s.out]).reverse()]);
    expect(m.code, m.stderr).toBe(0);
    expect(stable(merged.out)).toBe(stable(single.out));
    expect(stable(merged.run)).toBe(stable(single.run));
  }, 240_000);

  it('refuses a merge with a shard missing or given twice, naming it', async () => {
    const s1 = tempFile('m1.json');
    expect((await runCli([...base, '--shard', '1/2', '--out', s1])).code).toBe(0);
    const missing = await runCli(['merge', '--out', tempFile('x.json'), s1]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/shard 2\/2 missing/);
    const twice = await runCli(['merge', '--out', tempFile('y.json'), s1, s1]);
    expect(twice.code).toBe(2);
  }, 120_000);
});
