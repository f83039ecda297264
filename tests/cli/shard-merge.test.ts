import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseShard, shardDatabases } from '../../src/core/batch/shard.ts';
import { runCli, tempFile } from '../helpers/cli.ts';
import { gpt4oEvalArgs } from '../helpers/shared-data.ts';

const base = gpt4oEvalArgs();

/** The bytes of an output without what measures the machine or the moment: times, the run's id and dates. */
function stable(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/"(elapsed_ms|elapsedMs)": [^,\n]+/g, '"$1": 0')
    .replace(/"(id|createdAt|updatedAt)": "[^"]*"/g, '"$1": ""');
}

describe('sharded evaluation and merge', () => {
  it('parses K/N and refuses anything else, naming the flag', () => {
    expect(parseShard('2/3')).toEqual({ k: 2, n: 3 });
    for (const bad of ['0/3', '4/3', '3', 'a/b', '1/0'])
      expect(() => parseShard(bad)).toThrow(/--shard: expected K\/N/);
  });

  it('gives every database to exactly one shard, balanced by items, the same on every call', () => {
    const items = [...'aaaaabbbccd'].map((dbId, index) => ({ index, dbId }) as never);
    expect(shardDatabases(items, 2)).toEqual([
      ['a', 'd'],
      ['b', 'c'],
    ]);
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
    const dbsOf = (f: string) =>
      new Set((JSON.parse(readFileSync(f, 'utf8')).items as { db_id: string }[]).map((x) => x.db_id));
    const sets = shards.map((s) => dbsOf(s.out));
    expect(sets.reduce((n, s) => n + s.size, 0)).toBe(new Set(sets.flatMap((s) => [...s])).size);

    const merged = { out: tempFile('merged.json'), run: tempFile('merged.run.json') };
    const m = await runCli([
      'merge',
      '--out',
      merged.out,
      '--run-out',
      merged.run,
      ...shards.flatMap((s) => [s.run, s.out]).reverse(),
    ]);
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

  it('refuses shards of different runs, naming the field that differs: another predictions file, --timeout-s, --read-only or metrics; a missing count is no 0', async () => {
    const shard = async (k: number, ...extra: string[]) => {
      const f = { out: tempFile(`s${k}.json`), run: tempFile(`s${k}.run.json`) };
      const args = [...base, '--shard', `${k}/2`, '--out', f.out, '--run-out', f.run];
      const r = await runCli([...args, ...extra]);
      expect(r.code, r.stderr).toBe(0);
      return f;
    };
    const gpt4o = [await shard(1), await shard(2)];
    const other = { out: tempFile('turbo.json'), run: tempFile('turbo.run.json') };
    const turbo = await runCli([
      ...base.map((a) => a.replace('gpt-4-o', 'gpt-4-turbo')),
      '--shard',
      '2/2',
      '--out',
      other.out,
      '--run-out',
      other.run,
    ]);
    expect(turbo.code, turbo.stderr).toBe(0);
    const merge = (files: string[]) =>
      runCli(['merge', '--out', tempFile('m.json'), '--run-out', tempFile('m.run.json'), ...files]);
    const mixed = await merge([gpt4o[0]!.out, other.out]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(
      /inputs\.predictions differs: .*s1\.json has ".*predict_mini_dev_gpt-4-o_cot_SQLite\.json", .*turbo\.json has ".*gpt-4-turbo.*merge only the shards of one eval command/,
    );
    const mixedRuns = await runCli(['merge', '--run-out', tempFile('m.run.json'), gpt4o[0]!.run, other.run]);
    expect(mixedRuns.code).toBe(2);
    expect(mixedRuns.stderr).toMatch(/source\.predictions \(the predictions file\) differs/);

    const timeout = await shard(2, '--timeout-s', '10');
    const t = await merge([gpt4o[0]!.out, timeout.out]);
    expect(t.code).toBe(2);
    expect(t.stderr).toMatch(/inputs\.timeout_s \(--timeout-s\) differs: .* has 30, .* has 10/);
    const readOnly = await shard(2, '--read-only');
    expect((await runCli(['merge', '--run-out', tempFile('m.run.json'), gpt4o[0]!.run, readOnly.run])).stderr).toMatch(
      /config\.readOnly \(--read-only\) differs: .* has false, .* has true/,
    );
    const exOnly = await shard(2, '--metrics', 'ex');
    expect((await merge([gpt4o[0]!.out, exOnly.out])).stderr).toMatch(
      /metrics differs: .* has \["ex","soft-f1"\], .* has \["ex"\]/,
    );

    // A shard without its execution counts, or an item without its Soft-F1: refused, never summed as 0.
    const edited = tempFile('edited.json');
    const report = JSON.parse(readFileSync(gpt4o[1]!.out, 'utf8'));
    delete report.summary.executions.items;
    writeFileSync(edited, JSON.stringify(report));
    expect((await merge([gpt4o[0]!.out, edited])).stderr).toMatch(
      /edited\.json: has no executions\.items while other shards do/,
    );
    const noF1 = JSON.parse(readFileSync(gpt4o[1]!.out, 'utf8'));
    delete noF1.items[0].soft_f1;
    writeFileSync(edited, JSON.stringify(noF1));
    expect((await merge([gpt4o[0]!.out, edited])).stderr).toMatch(
      /edited\.json: item \d+ has no soft_f1 although the run's metrics include soft-f1/,
    );
    // The matching pair still merges.
    expect((await merge([gpt4o[0]!.out, gpt4o[1]!.out, gpt4o[0]!.run, gpt4o[1]!.run])).code).toBe(0);
  }, 600_000);
});
