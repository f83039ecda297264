/**
 * Parquet in: RaR splits, question files and predictions written by hyparquet-writer in the
 * published schemas are read by the app's reader (hyparquet, src/adapters/parquet) into the
 * same rows as their JSONL twins, group by group, with errors naming file, row group, row and column.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isWorkbenchError } from '../../../src/core/errors.ts';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { BIRD_SEPARATOR } from '../../../src/core/formats/predictions.ts';
import { parseQuestions, questionsFromRecords } from '../../../src/core/formats/questions.ts';
import { parseRarJsonl, rarFromRecords } from '../../../src/core/rubric/rar-dataset.ts';
import { planReplay } from '../../../src/core/run/replay.ts';
import { parquetRecordGroups, readParquetRecords } from '../../../src/adapters/parquet/read-parquet.ts';
import {
  birdQuestionsTable,
  int64,
  listOf,
  memoryBuffer,
  parquetBytes,
  predictionLinesTable,
  RAR_SCHEMA,
  utf8,
} from '../../helpers/parquet-files.ts';
import { demoFile as demo, readSharedText } from '../../helpers/shared-data.ts';

async function errorOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}

const rarRows = [
  {
    question: 'Chest pain at rest?',
    reference_answer: 'ECG first.',
    question_source: 'medqa',
    rubric: [
      { description: 'Essential Criteria: Orders an ECG within 10 minutes.', title: 'ECG', weight: 5 },
      { description: 'Important Criteria: Mentions troponin.', title: 'Troponin', weight: 3 },
      { description: 'Pitfall Criteria: Does not mention discharge without work-up.', title: 'Discharge', weight: -1 },
    ],
  },
  {
    question: 'Why does ice float?',
    reference_answer: null,
    question_source: 'sci',
    rubric: [
      { description: 'Essential Criteria: Ice is less dense than water.', title: 'Density', weight: 5 },
      { description: 'Optional Criteria: Names hydrogen bonds.', title: 'H-bonds', weight: 1 },
    ],
  },
  {
    question: 'Balance propane combustion.',
    reference_answer: 'C3H8 + 5O2 -> 3CO2 + 4H2O',
    question_source: 'sci',
    rubric: [{ description: 'Essential Criteria: Gives the balanced equation.', title: 'Equation', weight: 5 }],
  },
];

function rarParquet(rows = rarRows, rowGroupSize = 2): Uint8Array {
  return parquetBytes(
    RAR_SCHEMA,
    [
      { name: 'question', data: rows.map((r) => r.question) },
      { name: 'reference_answer', data: rows.map((r) => r.reference_answer) },
      { name: 'question_source', data: rows.map((r) => r.question_source) },
      { name: 'rubric', data: rows.map((r) => r.rubric.map((c) => ({ ...c, weight: BigInt(c.weight) }))) },
      { name: 'rubric_list', data: rows.map((r) => r.rubric.map((c) => c.description)) },
      { name: 'rubric_count', data: rows.map((r) => BigInt(r.rubric.length)) },
    ],
    rowGroupSize,
  );
}

describe('Parquet in: a RaR split in the published schema (list of {description, title, weight: int64} structs)', () => {
  it('imports every row with every criterion, weight and category, as its JSONL twin does', async () => {
    const bytes = rarParquet();
    const groups = [];
    for await (const g of parquetRecordGroups({ name: 'train-00000-of-00001.parquet', file: memoryBuffer(bytes) }))
      groups.push(g.records.length);
    expect(groups).toEqual([2, 1]); // read one row group at a time
    const records = await readParquetRecords({ name: 'train-00000-of-00001.parquet', file: memoryBuffer(bytes) });
    const fromParquet = rarFromRecords(records, 'train-00000-of-00001.parquet');
    const jsonl = rarRows.map((r) => JSON.stringify(r)).join('\n');
    const fromJsonl = parseRarJsonl(jsonl, 'train-00000-of-00001.parquet');
    expect(fromParquet).toEqual(fromJsonl);
    expect(fromParquet.map((r) => r.rubric.items.map((i) => [i.title, i.weight, i.category]))).toEqual([
      [
        ['ECG', 5, 'essential'],
        ['Troponin', 3, 'important'],
        ['Discharge', -1, 'pitfall'],
      ],
      [
        ['Density', 5, 'essential'],
        ['H-bonds', 1, 'optional'],
      ],
      [['Equation', 5, 'essential']],
    ]);
    expect(fromParquet[1]!.referenceAnswer).toBeNull();
    expect(fromParquet.map((r) => r.id)).toEqual([
      'train-00000-of-00001.parquet:1',
      'train-00000-of-00001.parquet:2',
      'train-00000-of-00001.parquet:3',
    ]);
  });

  it('names the file, the row, the row group and the column of a bad value', async () => {
    const rows = structuredClone(rarRows);
    rows[2]!.question = '';
    const records = await readParquetRecords({ name: 'val.parquet', file: memoryBuffer(rarParquet(rows)) });
    const err = (() => {
      try {
        rarFromRecords(records, 'val.parquet');
      } catch (e) {
        return e as Error;
      }
      throw new Error('no error');
    })();
    expect(err.message).toBe(
      'val.parquet row 3 (row group 1): "question" must be a non-empty string, found an empty string',
    );
  });
});

describe('Parquet in: errors of the file itself', () => {
  it('a file that is not Parquet is named, with what to do', async () => {
    const err = await errorOf(
      readParquetRecords({
        name: 'preds.parquet',
        file: memoryBuffer(new TextEncoder().encode('{"question_id": 0, "sql": "SELECT 1"}\n')),
      }),
    );
    expect(isWorkbenchError(err)).toBe(true);
    expect(err.message).toMatch(
      /^preds\.parquet: not a Parquet file: it does not start with "PAR1"\. Export the table as Parquet/,
    );
  });

  it('a damaged column chunk names the row group, its rows and the column', async () => {
    const bytes = rarParquet(rarRows, 2);
    // Overwrite the middle of the second row group's "question" chunk with garbage.
    const { parquetMetadata } = await import('hyparquet');
    const md = parquetMetadata(bytes.buffer as ArrayBuffer);
    const chunk = md.row_groups[1]!.columns[0]!.meta_data!;
    const start = Number(chunk.data_page_offset);
    const damaged = bytes.slice();
    damaged.fill(0xff, start, start + Number(chunk.total_compressed_size));
    const err = await errorOf(readParquetRecords({ name: 'test.parquet', file: memoryBuffer(damaged) }));
    expect(err.message).toMatch(
      /^test\.parquet: row group 1 \(rows 3–3\), column "question" cannot be decoded: .+ write it again/,
    );
  });
});

describe('Parquet in: BIRD questions and predictions', () => {
  it('BIRD dev.json as Parquet (question_id int64) gives the same 1534 questions', async () => {
    const text = readSharedText('bird', 'dev', 'dev.json');
    const rows = JSON.parse(text) as Array<Record<string, unknown>>;
    const bytes = parquetBytes(...birdQuestionsTable(rows), 500);
    const questions = questionsFromRecords(
      await readParquetRecords({ name: 'dev.parquet', file: memoryBuffer(bytes) }),
      'dev.parquet',
    );
    expect(questions).toHaveLength(1534);
    expect(questions).toEqual(parseQuestions(text, 'dev.json'));
  });

  it('a predictions Parquet pairs and extracts exactly like its JSONL twin (sql, completion, sqls/completions, mean_logprob)', async () => {
    const preds = JSON.parse(readFileSync(demo('predictions.json'), 'utf8')) as Record<string, string>;
    const sqlOf = (k: string) => preds[k]!.split(BIRD_SEPARATOR)[0]!;
    const keys = Object.keys(preds);
    // Even ids: an explicit sql; odd ids: a completion to extract from, with a mean logprob.
    const lines = keys.map((k, i) =>
      i % 2 === 0
        ? { question_id: i, sql: sqlOf(k) }
        : { question_id: i, completion: `Here:\n\`\`\`sql\n${sqlOf(k)}\n\`\`\``, mean_logprob: -0.25 * i },
    );
    const jsonl = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
    const bytes = parquetBytes(...predictionLinesTable(lines), 7);
    const gold = parseGoldSql(readFileSync(demo('gold.sql'), 'utf8'), 'gold.sql');
    const questions = parseQuestions(readFileSync(demo('questions.json'), 'utf8'), 'questions.json');
    const records = await readParquetRecords({ name: 'p.parquet', file: memoryBuffer(bytes) });
    const fromParquet = planReplay({ predictions: { name: 'p.parquet', records }, gold, questions });
    const fromJsonl = planReplay({ predictions: { name: 'p.parquet', text: jsonl }, gold, questions });
    // The JSONL twin is named .parquet above only so that messages match; its format is detected from the text.
    expect(fromParquet).toEqual(fromJsonl);
    expect(fromParquet.items).toHaveLength(20);
    expect(fromParquet.items.filter((i) => i.extraction.rule.startsWith('fenced-sql-'))).toHaveLength(10);

    // Several samples per row: list<string> columns.
    const multi = parquetBytes(
      [{ name: 'schema', num_children: 2 }, int64('question_id'), ...listOf('sqls', [utf8('element')])],
      [
        { name: 'question_id', data: [0n, 1n] },
        {
          name: 'sqls',
          data: [
            [sqlOf('0'), 'SELECT 1'],
            [sqlOf('1'), sqlOf('1')],
          ],
        },
      ],
      10,
    );
    const plan = planReplay({
      predictions: {
        name: 'm.parquet',
        records: await readParquetRecords({ name: 'm.parquet', file: memoryBuffer(multi) }),
      },
      gold,
      questions,
    });
    expect(plan.items.map((i) => [i.index, i.sample, i.predSql])).toEqual([
      [0, 0, sqlOf('0')],
      [0, 1, 'SELECT 1'],
      [1, 0, sqlOf('1')],
      [1, 1, sqlOf('1')],
    ]);
  });

  it('a predictions row with a bad question_id names file, row, row group and column', async () => {
    const bytes = parquetBytes(
      [{ name: 'schema', num_children: 2 }, utf8('question_id'), utf8('sql')],
      [
        { name: 'question_id', data: ['0', '1', 'x7'] },
        { name: 'sql', data: ['SELECT 1', 'SELECT 2', 'SELECT 3'] },
      ],
      2,
    );
    const records = await readParquetRecords({ name: 'p.parquet', file: memoryBuffer(bytes) });
    expect(() => planReplay({ predictions: { name: 'p.parquet', records }, gold: [], questions: null })).toThrow(
      'p.parquet row 3 (row group 1): "question_id" must be a non-negative integer (or a string of digits), found the string "x7"',
    );
  });
});
