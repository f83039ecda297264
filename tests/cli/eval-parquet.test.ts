/**
 * `eval --predictions x.parquet --dataset questions.parquet`: Parquet files written by
 * hyparquet-writer score exactly like their JSON/JSONL twins, end to end through the CLI.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { jsonlFile, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { birdQuestionsTable, predictionLinesTable, writeParquet } from '../helpers/parquet-files.ts';
import { demoFile as demo, demoFlags, minidevFlags } from '../helpers/shared-data.ts';
import { thirteenSampleRun } from '../helpers/thirteen-files.ts';

function twins(): { jsonl: string; parquet: string; questions: string } {
  const preds = JSON.parse(readFileSync(demo('predictions.json'), 'utf8')) as Record<string, string>;
  const lines = Object.keys(preds).map((k, i) => {
    const sql = preds[k]!.split(BIRD_SEPARATOR)[0]!;
    return i % 3 === 0
      ? { question_id: i, completion: `<answer>${sql}</answer>`, mean_logprob: -0.5 }
      : { question_id: i, sql };
  });
  const jsonl = jsonlFile('preds.jsonl', lines);
  const parquet = writeParquet(tempFile('preds.parquet'), ...predictionLinesTable(lines), 8);
  const qs = JSON.parse(readFileSync(demo('questions.json'), 'utf8')) as Array<Record<string, unknown>>;
  const questions = writeParquet(tempFile('questions.parquet'), ...birdQuestionsTable(qs), 8);
  return { jsonl, parquet, questions };
}

const evalArgs = (pred: string, dataset: string, out: string) => [
  'eval',
  '--predictions',
  pred,
  ...demoFlags({ dataset }),
  '--out',
  out,
];

describe('eval reads Parquet predictions and questions', () => {
  it('scores a Parquet predictions file (and a Parquet questions file) exactly like the JSONL twin', async () => {
    const { jsonl, parquet, questions } = twins();
    const [a, b] = [tempFile('a.json'), tempFile('b.json')];
    const [ra, rb] = await Promise.all([
      runCli(evalArgs(jsonl, demo('questions.json'), a)),
      runCli(evalArgs(parquet, questions, b)),
    ]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stdout).toBe(ra.stdout);
    const [ja, jb] = [readJson(a), readJson(b)];
    const strip = (items: Array<Record<string, unknown>>) =>
      items.map(({ elapsed_ms: _e, time_ratio: _t, rves: _r, ...rest }) => rest);
    expect(strip(jb.items)).toEqual(strip(ja.items));
    expect(jb.summary.by_difficulty).toEqual(ja.summary.by_difficulty);
    expect(ja.items).toHaveLength(20);
    expect(
      jb.items.filter((i: { extraction_rule?: string; extraction?: { rule: string } }) =>
        JSON.stringify(i).includes('answer-tag'),
      ),
    ).toHaveLength(7);
  });

  it('a file named .parquet that is not Parquet fails with exit 2, naming the file and what to do', async () => {
    const fake = tempFile('fake.parquet');
    writeFileSync(fake, '{"question_id": 0, "sql": "SELECT 1"}\n');
    const run = await runCli(evalArgs(fake, demo('questions.json'), tempFile('o.json')));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/fake\.parquet: not a Parquet file: it does not start with "PAR1"/);
  });
});

describe('eval --run-out run.parquet', () => {
  it('writes the samples table that DuckDB reads: avg(ex) is the EX of the JSON run file, row for row the same samples', async () => {
    const { jsonl } = twins();
    const [json, parquet] = [tempFile('run.json'), tempFile('run.parquet')];
    const base = ['eval', '--predictions', jsonl, ...demoFlags()];
    const [rj, rp] = await Promise.all([runCli([...base, '--run-out', json]), runCli([...base, '--run-out', parquet])]);
    expect(rj.code, rj.stderr).toBe(0);
    expect(rp.code, rp.stderr).toBe(0);
    const runFile = readJson(json);
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      const agg = (
        await conn.runAndReadAll(`SELECT avg(ex) AS ex, count(*)::INTEGER AS n FROM '${parquet}'`)
      ).getRowObjectsJson()[0]!;
      const ex = runFile.samples.reduce((n: number, s: { ex: number }) => n + s.ex, 0) / runFile.samples.length;
      expect(agg).toEqual({ ex, n: 20 });
      const rows = (
        await conn.runAndReadAll(
          `SELECT index, question_id, sample, ex, soft_f1, status, sql, gold_sql, completion, mean_logprob, extraction_rule, reward, question FROM '${parquet}' ORDER BY index, sample`,
        )
      ).getRowObjectsJson();
      expect(rows).toEqual(
        runFile.samples.map((s: Record<string, any>) => ({
          index: s.index,
          question_id: String(s.questionId),
          sample: s.sample,
          ex: s.ex,
          soft_f1: s.softF1,
          status: s.status,
          sql: s.sql,
          gold_sql: s.goldSql,
          completion: s.completion ?? null,
          mean_logprob: s.meanLogprob ?? null,
          extraction_rule: s.extraction.rule,
          reward: s.reward,
          question: runFile.questions.find((q: { index: number }) => q.index === s.index).question,
        })),
      );
      const kv = (
        await conn.runAndReadAll(
          `SELECT decode(value) AS v FROM parquet_kv_metadata('${parquet}') WHERE decode(key) = 'rlvr-workbench.run'`,
        )
      ).getRowObjectsJson();
      expect(JSON.parse(kv[0]!.v as string).source.kind).toBe('replay');
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});

describe('stats --parquet', () => {
  it('writes the prompt-stats table: one row per question, pass@k columns, advantages as a list of doubles', async () => {
    const { jsonl } = twins();
    const run = tempFile('run.json');
    const r = await runCli(['eval', '--predictions', jsonl, ...demoFlags(), '--run-out', run]);
    expect(r.code, r.stderr).toBe(0);
    const [json, parquet] = [tempFile('prompts.json'), tempFile('prompts.parquet')];
    const s = await runCli(['stats', '--run', run, '--k', '1', '--prompts-json', json, '--parquet', parquet]);
    expect(s.code, s.stderr).toBe(0);
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      const reader = await conn.runAndReadAll(
        `SELECT index, n, correct, pass_rate, pass_at_1, advantages FROM '${parquet}' ORDER BY index`,
      );
      expect(reader.columnTypes().map(String)).toEqual([
        'INTEGER',
        'INTEGER',
        'INTEGER',
        'DOUBLE',
        'DOUBLE',
        'DOUBLE[]',
      ]);
      expect(reader.getRowObjectsJson()).toEqual(
        readJson(json).map((p: Record<string, unknown>) => ({
          index: p.index,
          n: p.n,
          correct: p.correct,
          pass_rate: p.pass_rate,
          pass_at_1: p.pass_at_1,
          advantages: p.advantages,
        })),
      );
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});

describe('stats and compare read a run from its samples Parquet', () => {
  it('give the same statistics from run.parquet as from run.json on 4 real mini-dev samples per question, and name the file given by mistake', async () => {
    // Four real prediction files as four samples of each mini-dev question with a database here.
    const items = thirteenSampleRun().filter((it) => (it.sample ?? 0) < 4);
    const jsonl = tempFile('four.jsonl');
    writeFileSync(
      jsonl,
      items.map((it) => JSON.stringify({ question_id: it.questionId, sql: it.predSql })).join('\n') + '\n',
    );
    const [json, parquet] = [tempFile('run.json'), tempFile('run.parquet')];
    const base = ['eval', '--predictions', jsonl, ...minidevFlags()];
    for (const out of [json, parquet]) {
      const r = await runCli([...base, '--run-out', out]);
      expect(r.code, r.stderr).toBe(0);
    }
    // The run file names the SQLite that gave its verdicts, as the app's runs do.
    expect(readJson(json).run.sqliteVersion).toMatch(/^3\.\d+\.\d+$/);
    const stats = async (run: string) => {
      const out = tempFile('stats.json');
      const r = await runCli(['stats', '--run', run, '--k', '1,2,4', '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      return { stdout: r.stdout, json: readJson(out) };
    };
    const [fromJson, fromParquet] = [await stats(json), await stats(parquet)];
    // The two evaluations are two runs: only their ids differ.
    expect(fromJson.json.run.id).not.toBe(fromParquet.json.run.id);
    expect(fromJson.stdout).toBe(fromParquet.stdout);
    expect(JSON.stringify(fromParquet.json).replaceAll(fromParquet.json.run.id, fromJson.json.run.id)).toBe(
      JSON.stringify(fromJson.json),
    );
    const cmp = await runCli(['compare', json, parquet]);
    expect(cmp.code, cmp.stderr).toBe(0);
    expect(cmp.stdout).toContain('0 questions fixed');
    expect(cmp.stdout).toContain('0 questions broken');
    expect(cmp.stdout).toMatch(/\d+ questions right in both runs/);
    // Another of the workbench's tables, and a Parquet file that is no run at all, are named as such.
    const prompts = tempFile('prompts.parquet');
    expect((await runCli(['stats', '--run', json, '--parquet', prompts])).code).toBe(0);
    const wrongTable = await runCli(['stats', '--run', prompts]);
    expect(wrongTable.code).toBe(2);
    expect(wrongTable.stderr).toContain(
      `prompts.parquet: is the workbench's "prompt-stats" table, not a run's samples: give the run's samples Parquet (\`eval --parquet\`) or its run file`,
    );
    const { parquet: predictionsTable } = twins();
    const notARun = await runCli(['stats', '--run', predictionsTable]);
    expect(notARun.code).toBe(2);
    expect(notARun.stderr).toContain('preds.parquet: is a Parquet file without the workbench run it came from');
  }, 180_000);
});
