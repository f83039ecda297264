/**
 * Parquet out, read back by a second, independent reader (DuckDB's Node package): a run of
 * 100,000 samples (100 samples evaluated for real by the sql.js pool on the demo databases,
 * each repeated as 1,000 samples) exports as the samples table, and DuckDB's `avg(ex)` is the
 * run's EX; every row and every column type is the one the table documents.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeParquetFile } from '../../src/adapters/parquet/node-sink.ts';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import { summarize } from '../../src/core/eval/summary.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { compileRewardFormula } from '../../src/core/eval/reward.ts';
import { planReplay, runEvaluation } from '../../src/core/run/replay.ts';
import { toSampleRecords } from '../../src/core/run/score-run.ts';
import { SAMPLES_TABLE, sampleRows, runTableMetadata, type ColumnType } from '../../src/core/views/tables.ts';
import type { RunHeader, RunQuestion, SampleRecord } from '../../src/core/run/types.ts';
import { readFileSync } from 'node:fs';

const demo = (f: string) => new URL(`../../public/demo/${f}`, import.meta.url).pathname;
const DUCKDB_TYPE: Record<ColumnType, string> = {
  BOOLEAN: 'BOOLEAN',
  INT32: 'INTEGER',
  INT64: 'BIGINT',
  DOUBLE: 'DOUBLE',
  STRING: 'VARCHAR',
  JSON: 'JSON',
  DOUBLE_LIST: 'DOUBLE[]',
};

let real: SampleRecord[] = [];
let questions: RunQuestion[] = [];
const dir = mkdtempSync(path.join(tmpdir(), 'wb-parquet-out-'));

beforeAll(async () => {
  const preds = JSON.parse(readFileSync(demo('predictions.json'), 'utf8')) as Record<string, string>;
  const sqlOf = (i: number) => preds[String(i)]!.split(BIRD_SEPARATOR)[0]!;
  // 5 samples per question: the demo's SQL, the gold-free `SELECT 1`, a syntax error, a completion and another question's SQL.
  const jsonl = Array.from({ length: 20 }, (_, i) =>
    JSON.stringify({
      question_id: i,
      completions: [
        `\`\`\`sql\n${sqlOf(i)}\n\`\`\``,
        'SELECT 1',
        'SELEC oops',
        `<answer>${sqlOf(i)}</answer>`,
        `\`\`\`sql\n${sqlOf((i + 1) % 20)}\n\`\`\``,
      ],
      mean_logprobs: [-0.1, -0.2, -0.3, -0.4, -0.5],
    }),
  ).join('\n');
  const gold = parseGoldSql(readFileSync(demo('gold.sql'), 'utf8'), 'gold.sql');
  const qs = parseQuestions(readFileSync(demo('questions.json'), 'utf8'), 'questions.json');
  const { items } = planReplay({ predictions: { name: 'p.jsonl', text: jsonl }, gold, questions: qs });
  const pool = createNodeSqlPool({ dbRoot: demo(''), workers: 2 });
  try {
    const { results } = await runEvaluation(
      items,
      { metrics: ['ex', 'soft-f1'], timeoutMs: 30_000, readOnly: false, vesIterations: 100, previewRows: 0 },
      { executor: pool },
    );
    real = toSampleRecords(items, results, compileRewardFormula('ex + 0.1 * format'));
  } finally {
    await pool.dispose();
  }
  questions = qs.map((q, index) => ({
    index,
    questionId: q.questionId,
    dbId: q.dbId,
    question: q.question,
    evidence: q.evidence,
  }));
}, 120_000);

let instance: DuckDBInstance;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
});
afterAll(() => instance?.closeSync());

async function query(sql: string) {
  const conn = await instance.connect();
  try {
    const r = await conn.runAndReadAll(sql);
    return {
      rows: r.getRowObjectsJson() as Array<Record<string, unknown>>,
      names: r.columnNames(),
      types: r.columnTypes().map(String),
    };
  } finally {
    conn.closeSync();
  }
}

const header = { id: 'run-1', name: 'p.jsonl' } as RunHeader;

describe('Parquet out: a run of 100,000 samples read back by DuckDB', () => {
  it('avg(ex) is the run EX, with the documented column types and the table version in the metadata', async () => {
    expect(real).toHaveLength(100);
    const samples: SampleRecord[] = [];
    for (const s of real) for (let k = 0; k < 1000; k++) samples.push({ ...s, sample: s.sample * 1000 + k });
    expect(samples).toHaveLength(100_000);
    const ex = summarize(samples, ['ex', 'soft-f1']).byDifficulty.total.ex!;
    const file = path.join(dir, 'run-100k.parquet');
    await writeParquetFile(file, SAMPLES_TABLE, sampleRows(samples, questions), {
      metadata: runTableMetadata(SAMPLES_TABLE, header),
    });

    const agg = await query(
      `SELECT count(*)::INTEGER AS n, avg(ex) AS ex, sum(ex)::INTEGER AS correct, count(DISTINCT (index, sample))::INTEGER AS keys FROM '${file}'`,
    );
    expect(agg.rows[0]).toEqual({
      n: 100_000,
      ex: expect.any(Number),
      correct: samples.filter((s) => s.ex === 1).length,
      keys: 100_000,
    });
    expect((agg.rows[0]!.ex as number) * 100).toBeCloseTo(ex, 10);
    expect(ex).toBeGreaterThan(0);
    expect(ex).toBeLessThan(100);

    const described = await query(`DESCRIBE SELECT * FROM '${file}'`);
    expect(described.rows.map((r) => [r.column_name, r.column_type])).toEqual(
      SAMPLES_TABLE.columns.map((c) => [c.name, DUCKDB_TYPE[c.type]]),
    );
    const repetition = await query(
      `SELECT name, repetition_type FROM parquet_schema('${file}') WHERE name <> 'schema'`,
    );
    expect(repetition.rows.map((r) => [r.name, r.repetition_type])).toEqual(
      SAMPLES_TABLE.columns.map((c) => [c.name, c.nullable ? 'OPTIONAL' : 'REQUIRED']),
    );

    const kv = await query(`SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata('${file}')`);
    const meta = Object.fromEntries(kv.rows.map((r) => [r.key, r.value]));
    expect(meta['rlvr-workbench.table']).toBe('samples');
    expect(meta['rlvr-workbench.version']).toBe('2');
    expect(JSON.parse(meta['rlvr-workbench.run'] as string)).toEqual(header);

    const groups = await query(`SELECT count(DISTINCT row_group_id)::INTEGER AS g FROM parquet_metadata('${file}')`);
    expect(groups.rows[0]!.g).toBe(10); // streamed as 10 row groups of 10,000
    expect(statSync(file).size).toBeGreaterThan(0);
  }, 120_000);

  it('every row holds the sample it was written from (the 100 really evaluated samples, every column, 7-row groups)', async () => {
    const file = path.join(dir, 'run-real.parquet');
    const rows = sampleRows(real, questions);
    await writeParquetFile(file, SAMPLES_TABLE, rows, {
      metadata: runTableMetadata(SAMPLES_TABLE, header),
      rowGroupRows: 7,
    });
    const read = await query(`SELECT * FROM '${file}'`);
    expect(read.rows).toHaveLength(100);
    const expected = rows.map((r) =>
      Object.fromEntries(
        SAMPLES_TABLE.columns.map((c) => {
          const v = c.value(r);
          if (v === undefined || v === null) return [c.name, null];
          if (c.type === 'INT64') return [c.name, String(v)]; // getRowObjectsJson gives BIGINT as text
          if (c.type === 'JSON') return [c.name, JSON.stringify(v)];
          return [c.name, v];
        }),
      ),
    );
    expect(read.rows).toEqual(expected);
    // And against the samples themselves, not only the table's own value functions.
    expect(
      read.rows.map((r) => [r.index, r.sample, r.ex, r.status, r.sql, r.completion, r.extraction_rule, r.question]),
    ).toEqual(
      [...real]
        .sort((a, b) => a.index - b.index || a.sample - b.sample)
        .map((s) => [
          s.index,
          s.sample,
          s.ex,
          s.status,
          s.sql,
          s.completion,
          s.extraction.rule,
          questions[s.index]!.question,
        ]),
    );
    expect(new Set(read.rows.map((r) => r.status))).toEqual(new Set(['ok', 'error']));
  }, 60_000);

  it('a generation run keeps the device that ran: gen_device* per sample, run.device in the header metadata', async () => {
    const reason = "the WebGPU adapter lacks shader-f16, which llama.cpp's WebGPU backend needs";
    const gen = (
      device: string,
      extra: { deviceReason?: string; deviceDetail?: string },
    ): SampleRecord['generation'] => ({
      prompt: [{ role: 'user', content: 'q' }],
      templateId: 't',
      templateFingerprint: 'f',
      fit: {
        limit: 100,
        tokens: 10,
        counter: 'engine',
        fits: true,
        cut: { sampleRows: [], descriptions: [], tables: [] },
      },
      tokensIn: 10,
      tokensOut: 4,
      latencyMs: 2,
      finishReason: 'stop',
      seed: 0,
      engine: 'wllama',
      model: 'm.gguf',
      device,
      ...extra,
    });
    const samples: SampleRecord[] = [
      { ...real[0]!, generation: gen('cpu', { deviceReason: reason }) },
      {
        ...real[1]!,
        generation: gen('server', { deviceDetail: 'model Qwen/Qwen2.5-Coder-7B-Instruct, system_fingerprint fp_1' }),
      },
      real[2]!,
    ];
    const run = { ...header, device: { device: 'cpu', reason } } as RunHeader;
    const file = path.join(dir, 'run-device.parquet');
    await writeParquetFile(file, SAMPLES_TABLE, sampleRows(samples, questions), {
      metadata: runTableMetadata(SAMPLES_TABLE, run),
    });
    const read = await query(
      `SELECT index, sample, gen_device, gen_device_reason, gen_device_detail FROM '${file}' ORDER BY index, sample`,
    );
    const want = [...samples]
      .sort((a, b) => a.index - b.index || a.sample - b.sample)
      .map((s) => ({
        index: s.index,
        sample: s.sample,
        gen_device: s.generation?.device ?? null,
        gen_device_reason: s.generation?.deviceReason ?? null,
        gen_device_detail: s.generation?.deviceDetail ?? null,
      }));
    expect(read.rows).toEqual(want);
    expect(read.rows.map((r) => r.gen_device).sort()).toEqual(['cpu', 'server', null].sort());
    const kv = await query(
      `SELECT decode(value) AS value FROM parquet_kv_metadata('${file}') WHERE decode(key) = 'rlvr-workbench.run'`,
    );
    expect(JSON.parse(kv.rows[0]!.value as string).device).toEqual({ device: 'cpu', reason });
  }, 60_000);
});
