import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { folderDbSource, spawnNodeSqlWorker } from '../../src/adapters/node/sql-worker-host.ts';
import { SqlPool } from '../../src/adapters/sql-pool.ts';
import { toSampleRecord } from '../../src/core/run/score-run.ts';
import { compileRewardFormula } from '../../src/core/eval/reward.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { pairPredictions, parsePredictions } from '../../src/core/formats/predictions.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { birdPredictionsJson } from '../../src/core/runfile/export.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, readSharedText, sharedData } from '../helpers/shared-data.ts';

const pool = new SqlPool({
  spawn: spawnNodeSqlWorker,
  dbSource: folderDbSource(sharedData('bird', 'databases')),
  size: 2,
});
afterAll(() => pool.dispose());

describe('exported BIRD predictions reproduce the run in the CLI', () => {
  it('a run of real mini-dev predictions, exported, gives the CLI the same EX on every one of the 500 items', async () => {
    const predFile = 'predictions/sql_output_kg/predict_mini_dev_gpt-4_sqlite.json';
    const questions = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json');
    const gold = parseGoldSql(
      readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
      'mini_dev_sqlite_gold.sql',
    );
    const preds = parsePredictions(readSharedText('bird', predFile), predFile);
    const { items } = pairPredictions(preds, gold, questions, predFile);
    const results = await pool.evaluate(items, { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 30_000 });
    const samples = results.map((r, i) => toSampleRecord(items[i]!, r, compileRewardFormula('ex')));
    expect(samples.filter((s) => s.status !== 'missing-db')).toHaveLength(140);

    const exported = tempFile('exported.json');
    writeFileSync(exported, birdPredictionsJson(samples));
    const out = tempFile('out.json');
    const cli = await runCli(['eval', '--predictions', exported, ...minidevFlags(), '--out', out]);
    expect(cli.code, cli.stderr).toBe(0);
    const got = readJson<{ items: Array<{ index: number; ex: number | null; status: string }> }>(out);
    // An item never scored (database missing) is null in the report, never EX 0.
    expect(got.items.map((i) => [i.index, i.ex, i.status === 'missing-db'])).toEqual(
      samples.map((s) => [s.index, s.status === 'missing-db' ? null : s.ex, s.status === 'missing-db']),
    );
    expect(samples.reduce((n, s) => n + s.ex, 0)).toBeGreaterThan(50);
    // Two evaluations of 500 items: past the default 60 s when the machine is loaded, so a bound
    // the work cannot reach (the verdict is the comparison, never the time).
  }, 600_000);
});
