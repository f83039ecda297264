/**
 * A sample never scored (its database is not imported) is null in every export
 * (run JSON, JSON Lines, CSV, Parquet, the --out report), never ex 0 / reward 0, with its status
 * saying why; a plain mean(ex) over each export, read by DuckDB (an independent reader), is the
 * summary's EX. Real data: gpt-4o's mini-dev file, 140 items scorable here, 360 without a database.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { duck } from '../helpers/duck.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { csvParts, samplesJsonlParts } from '../../src/core/runfile/export.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { summarize } from '../../src/core/eval/summary.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';
import { createNodeHost } from '../../src/adapters/node/node-host.ts';
import { readRunInput } from '../../src/cli/commands/tabular-input.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { gpt4oMinidevPredictions, minidevFlags } from '../helpers/shared-data.ts';

interface Agg {
  n: number;
  scored: number;
  ex: number;
  reward: number;
  unscored_ex: number;
  unscored_reward: number;
}
const AGG = (from: string, ex = 'ex', status = 'status') =>
  `SELECT count(*)::INTEGER AS n, count(${ex})::INTEGER AS scored, avg(${ex}) AS ex, avg(reward) AS reward,
     count(CASE WHEN ${status} = 'missing-db' THEN ${ex} END)::INTEGER AS unscored_ex,
     count(CASE WHEN ${status} = 'missing-db' THEN reward END)::INTEGER AS unscored_reward FROM ${from}`;

describe('unscored samples are null in every export; mean(ex) over each export is the summary EX', () => {
  const runJson = tempFile('run.json');
  const runParquet = tempFile('run.parquet');
  const report = tempFile('report.json');
  let exTotal = 0;

  beforeAll(async () => {
    const common = ['--predictions', gpt4oMinidevPredictions(), ...minidevFlags()];
    const [a, b] = await Promise.all([
      runCli(['eval', ...common, '--run-out', runJson, '--out', report]),
      runCli(['eval', ...common, '--run-out', runParquet]),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    exTotal = readJson<{ summary: { by_difficulty: { total: { ex: number; count: number } } } }>(report).summary
      .by_difficulty.total.ex;
    expect(exTotal.toFixed(2)).toBe('77.14');
  }, 300_000);

  const expectAgg = (agg: Agg | undefined) => {
    expect(agg).toMatchObject({ n: 500, scored: 140, unscored_ex: 0, unscored_reward: 0 });
    expect(agg!.ex * 100).toBeCloseTo(exTotal, 9);
    // The default reward formula is EX: its mean over the export is the same number.
    expect(agg!.reward * 100).toBeCloseTo(exTotal, 9);
  };

  it('run JSON (--run-out): null scores, status missing-db with the reason', async () => {
    const text = readFileSync(runJson, 'utf8');
    const [agg] = await duck<Agg>(
      AGG(`(SELECT unnest(samples, recursive := true) FROM read_json('${runJson}', maximum_object_size = 100000000))`),
    );
    expectAgg(agg);
    const file = JSON.parse(text) as { samples: Record<string, unknown>[] };
    const unscored = file.samples.filter((s) => s.status === 'missing-db');
    expect(unscored).toHaveLength(360);
    expect(
      unscored.every(
        (s) =>
          s.ex === null && s.softF1 === null && s.reward === null && s.rves === null && typeof s.error === 'string',
      ),
    ).toBe(true);
    // Read back, the store keeps them as before: nothing lost.
    expect(
      parseRunFile(text, 'run.json').samples.filter((s) => s.status === 'missing-db' && s.ex === 0 && s.reward === 0),
    ).toHaveLength(360);
  });

  it('the run read back from either file (stats and compare read both) is the run as stored: the same samples, the same summary', async () => {
    const fromJson = await readRunInput(createNodeHost(), '--run', runJson);
    const fromParquet = await readRunInput(createNodeHost(), '--run', runParquet);
    expect(fromParquet.samples).toHaveLength(500);
    const unscored = fromParquet.samples.filter((s) => s.status === 'missing-db');
    expect(unscored).toHaveLength(360);
    expect(unscored.every((s) => s.ex === 0 && s.reward === 0)).toBe(true);
    const key = (s: SampleRecord) => [s.index, s.sample, s.status, s.ex, s.reward, s.softF1].join('|');
    expect(fromParquet.samples.map(key)).toEqual(fromJson.samples.map(key));
    expect(summarize(fromParquet.samples, ['ex']).byDifficulty.total.ex).toBeCloseTo(exTotal, 9);
  });

  it('Parquet (--run-out .parquet): ex and reward NULL for the unscored rows', async () => {
    const [agg] = await duck<Agg>(AGG(`'${runParquet}'`));
    expectAgg(agg);
    const [meta] = await duck<{ v: string }>(
      `SELECT decode(value) AS v FROM parquet_kv_metadata('${runParquet}') WHERE decode(key) = 'rlvr-workbench.version'`,
    );
    expect(meta!.v).toBe('2');
  });

  it("CSV and JSON Lines (the app's exports, from the same run file): empty cells / null", async () => {
    const file = parseRunFile(readFileSync(runJson, 'utf8'), 'run.json');
    const csv = tempFile('run.csv');
    writeFileSync(csv, [...csvParts(file.samples)].join(''));
    const [agg] = await duck<Agg>(AGG(`read_csv('${csv}', header = true)`));
    expectAgg(agg);
    const jsonl = tempFile('run.jsonl');
    writeFileSync(jsonl, [...samplesJsonlParts(file.samples)].join(''));
    const [aggL] = await duck<Agg>(AGG(`read_json('${jsonl}', format = 'newline_delimited')`));
    expectAgg(aggL);
  });

  it('the --out report: ex null for the unscored items', async () => {
    const [agg] = await duck<Omit<Agg, 'reward' | 'unscored_reward'>>(
      `SELECT count(*)::INTEGER AS n, count(i.ex)::INTEGER AS scored, avg(i.ex) AS ex, count(CASE WHEN i.status = 'missing-db' THEN i.ex END)::INTEGER AS unscored_ex
       FROM (SELECT unnest(items) AS i FROM read_json('${report}', maximum_object_size = 100000000))`,
    );
    expect(agg).toMatchObject({ n: 500, scored: 140, unscored_ex: 0 });
    expect(agg!.ex * 100).toBeCloseTo(exTotal, 9);
  });
});
