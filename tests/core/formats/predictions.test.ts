import { readdirSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { BIRD_SEPARATOR, pairPredictions, parsePredictions } from '../../../src/core/formats/predictions.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { planReplay } from '../../../src/core/run/replay.ts';
import type { GoldEntry, Prediction, Question } from '../../../src/core/types.ts';
import { readSharedText, sharedData } from '../../helpers/shared-data.ts';
import { workbenchErrorOf as errorOf } from '../../helpers/errors.ts';

const sqls = (preds: Prediction[]) => preds.map((p) => p.sql);
const rules = (preds: Prediction[]) => preds.map((p) => p.extraction.rule);
const bird = (sql: string, db = 'financial') => `${sql}${BIRD_SEPARATOR}${db}`;

describe('parsePredictions: BIRD JSON', () => {
  it('takes the part before the separator, unstripped, and keeps the key and db name only for the pairing checks', () => {
    const preds = parsePredictions(
      JSON.stringify({ 0: bird('\nSELECT 1 '), 1: bird('SELECT 2', 'other_db') }),
      'p.json',
    );
    expect(preds).toEqual([
      {
        position: 0,
        questionId: null,
        sql: '\nSELECT 1 ',
        extraction: { rule: 'bird-separator', thinkStripped: false },
        key: '0',
        dbName: 'financial',
      },
      {
        position: 1,
        questionId: null,
        sql: 'SELECT 2',
        extraction: { rule: 'bird-separator', thinkStripped: false },
        key: '1',
        dbName: 'other_db',
      },
    ]);
  });

  it.each<[string, unknown, string, string]>([
    ['a string without separator is stripped whole', '  SELECT 1\n', 'SELECT 1', 'bird-no-separator'],
    [
      'a string with the separator twice is stripped whole',
      ` ${bird(bird('SELECT 1'))} `,
      bird(bird('SELECT 1')),
      'bird-no-separator',
    ],
    [
      'a separator without its tabs does not count',
      'SELECT 1 ----- bird ----- db',
      'SELECT 1 ----- bird ----- db',
      'bird-no-separator',
    ],
    ['Python strip also removes \\x1c', '\x1cSELECT 1\x85', 'SELECT 1', 'bird-no-separator'],
    ['null becomes one space', null, ' ', 'bird-non-string'],
    ['0 becomes one space', 0, ' ', 'bird-non-string'],
    ['an object becomes one space', { sql: 'SELECT 1' }, ' ', 'bird-non-string'],
  ])('%s', (_title, value, sql, rule) => {
    const [pred] = parsePredictions(JSON.stringify({ 0: value }), 'p.json');
    expect(pred!.sql).toBe(sql);
    expect(pred!.extraction.rule).toBe(rule);
  });

  it('keeps the file order of keys, which JS objects would reorder', () => {
    const text = '{"10": "a", "2": "b", "x": "c", "0": "d"}';
    expect(sqls(parsePredictions(text, 'p.json'))).toEqual(['a', 'b', 'c', 'd']);
  });

  it('handles a repeated key like a Python dict: last value, first position', () => {
    const text = '{"0": "a", "1": "b", "0": "c"}';
    expect(sqls(parsePredictions(text, 'p.json'))).toEqual(['c', 'b']);
  });

  it('reads keys and values with escapes, braces and nesting', () => {
    const text = '{"a\\"}": "x\\",}{", "b": [1, {"c": "]"}], "d": "SELECT \\"t\\""}';
    expect(sqls(parsePredictions(text, 'p.txt'))).toEqual(['x",}{', ' ', 'SELECT "t"']);
  });

  it('names file, line and column of a truncated file', () => {
    const text = JSON.stringify({ 0: bird('SELECT 1'), 1: bird('SELECT 2') }, null, 4);
    const e = errorOf(() => parsePredictions(text.slice(0, -20), 'predict_dev.json'));
    expect(e.code).toBe('BAD_JSON');
    expect(e.where).toMatch(/^predict_dev\.json:3:\d+$/);
    expect(e.message).toMatch(/ends too early/);
  });

  it('names the place of a syntax error', () => {
    const e = errorOf(() => parsePredictions('{\n  "0": "a",\n  "1": b\n}', 'p.json'));
    expect(e.where).toBe('p.json:3:8');
    expect(e.message).toMatch(/unexpected "b"/);
  });
});

describe('parsePredictions: format detection and other formats', () => {
  it('reads JSON Lines with sql fields, numeric-string ids and repeated samples', () => {
    const text = '{"question_id": 3, "sql": " SELECT 1 "}\n\n{"question_id": "3", "sql": "SELECT 2"}\n';
    expect(parsePredictions(text, 'run.jsonl')).toEqual([
      { position: 0, questionId: 3, sql: ' SELECT 1 ', extraction: { rule: 'sql-field', thinkStripped: false } },
      { position: 2, questionId: 3, sql: 'SELECT 2', extraction: { rule: 'sql-field', thinkStripped: false } },
    ]);
  });

  it('extracts SQL from a JSONL completion and keeps the completion', () => {
    const completion = '<think>hm</think>```sql\nSELECT 1\n```';
    const [pred] = parsePredictions(JSON.stringify({ question_id: 0, completion }), 'run.jsonl');
    expect(pred).toEqual({
      position: 0,
      questionId: 0,
      sql: 'SELECT 1',
      completion,
      extraction: { rule: 'fenced-sql-last', thinkStripped: true },
    });
  });

  it('prefers an explicit sql field over the completion, keeping both', () => {
    const [pred] = parsePredictions(
      JSON.stringify({ question_id: 0, sql: 'SELECT 2', completion: 'SELECT 1' }),
      'run.jsonl',
    );
    expect(pred).toMatchObject({ sql: 'SELECT 2', completion: 'SELECT 1', extraction: { rule: 'sql-field' } });
  });

  it('passes the fence option on to extraction', () => {
    const completion = '```sql\nSELECT 1\n```\n```sql\nSELECT 2\n```';
    const [pred] = parsePredictions(JSON.stringify({ question_id: 0, completion }), 'run.jsonl', { fence: 'first' });
    expect(pred!.sql).toBe('SELECT 1');
  });

  it.each([
    ['a .jsonl name', 'run.jsonl', '{"question_id": 0, "sql": "SELECT 1"}', 'sql-field'],
    [
      'JSONL content under another name',
      'run.txt',
      '{"question_id": 0, "sql": "A"}\n{"question_id": 1, "sql": "B"}',
      'sql-field',
    ],
    ['a single JSONL line under a .json name', 'run.json', '{"question_id": 0, "sql": "SELECT 1"}', 'sql-field'],
    ['a minified BIRD object', 'p.json', '{"0": "SELECT 1"}', 'bird-no-separator'],
    ['a .sql name', 'p.sql', '{"0": "SELECT 1"}', 'sql-line'],
    ['plain text under another name', 'p.txt', 'SELECT 1', 'sql-line'],
  ])('detects %s', (_title, name, text, rule) => {
    expect(parsePredictions(text, name)[0]!.extraction.rule).toBe(rule);
  });

  it('reads a .sql file line by line: empty middle lines are empty predictions, trailing ones are ignored', () => {
    const preds = parsePredictions('SELECT 1 \r\n\nSELECT 3\n\n\n', 'p.sql');
    expect(sqls(preds)).toEqual(['SELECT 1', '', 'SELECT 3']);
    expect(preds.map((p) => p.position)).toEqual([0, 1, 2]);
    expect(rules(preds)).toEqual(['sql-line', 'sql-line', 'sql-line']);
  });

  it.each([
    ['an empty file', 'p.json', ' \n ', 'BAD_FORMAT', 'p.json', /empty/],
    ['an empty BIRD object', 'p.json', '{}', 'BAD_FORMAT', 'p.json', /empty/],
    ['a JSON array', 'p.json', '[1]', 'BAD_FORMAT', 'p.json', /JSON array is not a predictions format/],
    ['a .json file that is not JSON', 'p.json', 'SELECT 1', 'BAD_JSON', 'p.json', /not a BIRD predictions object/],
    [
      'a JSONL line that is not JSON',
      'r.jsonl',
      '{"question_id": 0, "sql": "A"}\n{"question_id": 1, "sql": \n',
      'BAD_JSON',
      'r.jsonl:2',
      /not valid JSON/,
    ],
    [
      'a JSONL line that is not an object',
      'r.jsonl',
      '{"question_id": 0, "sql": "A"}\n[1]',
      'BAD_FORMAT',
      'r.jsonl:2',
      /expected an object/,
    ],
    ['a JSONL line without question_id', 'r.jsonl', '{"sql": "A"}', 'BAD_FORMAT', 'r.jsonl:1', /"question_id" must be/],
    [
      'a fractional question_id',
      'r.jsonl',
      '{"question_id": 1.5, "sql": "A"}',
      'BAD_FORMAT',
      'r.jsonl:1',
      /"question_id" must be/,
    ],
    [
      'a question_id that is a word',
      'r.jsonl',
      '{"question_id": "q1", "sql": "A"}',
      'BAD_FORMAT',
      'r.jsonl:1',
      /found the string "q1"/,
    ],
    [
      'a sql that is not a string',
      'r.jsonl',
      '{"question_id": 0, "sql": null}',
      'BAD_FORMAT',
      'r.jsonl:1',
      /"sql" must be a string, found null/,
    ],
    [
      'neither sql nor completion',
      'r.jsonl',
      '{"question_id": 0, "text": "A"}',
      'BAD_FORMAT',
      'r.jsonl:1',
      /needs a "sql" string or a "completion" string/,
    ],
    [
      'an empty completions array',
      'r.jsonl',
      '{"question_id": 0, "completions": []}',
      'BAD_FORMAT',
      'r.jsonl:1',
      /"completions" must be a non-empty array of strings .*an empty array/,
    ],
    [
      'a sqls array with a number',
      'r.jsonl',
      '{"question_id": 0, "sqls": ["A", 1]}',
      'BAD_FORMAT',
      'r.jsonl:1',
      /"sqls" must be .*non-string element/,
    ],
    [
      'sqls and completions of different lengths',
      'r.jsonl',
      '{"question_id": 0, "sqls": ["A"], "completions": ["a", "b"]}',
      'BAD_FORMAT',
      'r.jsonl:1',
      /"sqls" has 1 samples but "completions" has 2/,
    ],
    [
      'sql next to completions',
      'r.jsonl',
      '{"question_id": 0, "sql": "A", "completions": ["a"]}',
      'BAD_FORMAT',
      'r.jsonl:1',
      /either "sql"\/"completion" .* or "sqls"\/"completions"/,
    ],
    [
      'mean_logprobs of the wrong length',
      'r.jsonl',
      '{"question_id": 0, "sqls": ["A", "B"], "mean_logprobs": [-1]}',
      'BAD_FORMAT',
      'r.jsonl:1',
      /"mean_logprobs" must be an array of 2 numbers/,
    ],
    [
      'a mean_logprob that is a string',
      'r.jsonl',
      '{"question_id": 0, "sql": "A", "mean_logprob": "x"}',
      'BAD_FORMAT',
      'r.jsonl:1',
      /"mean_logprob" must be a finite number/,
    ],
  ])('rejects %s', (_title, name, text, code, where, message) => {
    const e = errorOf(() => parsePredictions(text, name));
    expect(e.code).toBe(code);
    expect(e.where).toBe(where);
    expect(e.message).toMatch(message);
  });
});

const gold: GoldEntry[] = [
  { sql: 'G0', dbId: 'a' },
  { sql: 'G1', dbId: 'b' },
  { sql: 'G2', dbId: 'b' },
];
const questions: Question[] = [
  { questionId: 10, dbId: 'a', question: '', evidence: '', goldSql: 'G0', difficulty: 'simple' },
  { questionId: 11, dbId: 'b', question: '', evidence: '', goldSql: 'G1', difficulty: 'moderate' },
  { questionId: 12, dbId: 'b', question: '', evidence: '', goldSql: 'G2', difficulty: 'challenging' },
];
const jsonl = (...rows: Array<[number, string]>) =>
  rows.map(([id, sql]) => JSON.stringify({ question_id: id, sql })).join('\n');

describe('pairPredictions', () => {
  it('pairs BIRD JSON by position with the gold database and question metadata', () => {
    const preds = parsePredictions(
      JSON.stringify({ 0: bird('P0', 'zzz'), 1: bird('P1', 'zzz'), 2: bird('P2', 'zzz') }),
      'p.json',
    );
    const { items, warnings } = pairPredictions(preds, gold, questions, 'p.json');
    expect(warnings).toEqual([]);
    expect(items[2]).toEqual({
      index: 2,
      questionId: 12,
      dbId: 'b',
      difficulty: 'challenging',
      predSql: 'P2',
      goldSql: 'G2',
      extraction: { rule: 'bird-separator', thinkStripped: false },
    });
  });

  it('numbers items by gold position without a questions file', () => {
    const { items } = pairPredictions(parsePredictions('P0\nP1\nP2', 'p.sql'), gold, null, 'p.sql');
    expect(items.map((i) => [i.index, i.questionId, i.difficulty])).toEqual([
      [0, 0, 'unknown'],
      [1, 1, 'unknown'],
      [2, 2, 'unknown'],
    ]);
  });

  it.each([
    [
      'extra predictions are dropped like Python zip',
      'P0\nP1\nP2\nP3\nP4',
      3,
      /2 predictions beyond the 3 gold lines were dropped/,
    ],
    [
      'missing predictions drop the last gold lines like Python zip',
      'P0',
      1,
      /only 1 predictions for 3 gold lines: the last 2/,
    ],
  ])('pairs positionally and reports a count finding when %s', (_title, text, count, warning) => {
    const { items, warnings, findings } = planReplay({ predictions: { name: 'p.sql', text }, gold, questions: null });
    expect(items).toHaveLength(count);
    expect(warnings).toEqual([]);
    expect(findings.map((f) => f.code)).toEqual(['count-mismatch']);
    expect(findings[0]!.message).toMatch(warning);
  });

  it('pairs JSONL by question_id through the questions file, in gold order', () => {
    const preds = parsePredictions(jsonl([12, 'P2'], [10, 'P0'], [11, 'P1']), 'r.jsonl');
    const { items, warnings } = pairPredictions(preds, gold, questions, 'r.jsonl');
    expect(warnings).toEqual([]);
    expect(items.map((i) => [i.index, i.questionId, i.predSql, i.goldSql])).toEqual([
      [0, 10, 'P0', 'G0'],
      [1, 11, 'P1', 'G1'],
      [2, 12, 'P2', 'G2'],
    ]);
  });

  it('reads a JSONL question_id as the gold index without a questions file', () => {
    const { items } = pairPredictions(parsePredictions(jsonl([1, 'P1']), 'r.jsonl'), gold, null, 'r.jsonl');
    expect(items.map((i) => [i.index, i.dbId, i.goldSql])).toEqual([[1, 'b', 'G1']]);
  });

  it('keeps every sample of a question, numbered in file order, and warns about unanswered questions', () => {
    const preds = parsePredictions(jsonl([10, 'first'], [12, 'other'], [10, 'second'], [10, 'third']), 'r.jsonl');
    const { items, warnings } = pairPredictions(preds, gold, questions, 'r.jsonl');
    expect(items.map((i) => [i.index, i.sample, i.predSql])).toEqual([
      [0, 0, 'first'],
      [0, 1, 'second'],
      [0, 2, 'third'],
      [2, 0, 'other'],
    ]);
    expect(warnings).toEqual(['r.jsonl: 1 gold questions have no prediction and were skipped.']);
  });

  it('turns sqls and completions arrays into samples, after the samples of earlier lines', () => {
    const text = [
      JSON.stringify({ question_id: 11, sql: 'S0' }),
      JSON.stringify({
        question_id: 11,
        completions: ['```sql\nSELECT 1\n```', 'no sql here'],
        mean_logprobs: [-0.5, -2],
      }),
      JSON.stringify({ question_id: 10, sqls: ['A', 'B'], completions: ['a', 'b'] }),
    ].join('\n');
    const { items, warnings } = pairPredictions(parsePredictions(text, 'r.jsonl'), gold, questions, 'r.jsonl');
    expect(warnings).toEqual(['r.jsonl: 1 gold questions have no prediction and were skipped.']);
    expect(items.map((i) => [i.index, i.sample, i.predSql, i.extraction.rule, i.completion, i.meanLogprob])).toEqual([
      [0, 0, 'A', 'sql-field', 'a', undefined],
      [0, 1, 'B', 'sql-field', 'b', undefined],
      [1, 0, 'S0', 'sql-field', undefined, undefined],
      [1, 1, 'SELECT 1', 'fenced-sql-last', '```sql\nSELECT 1\n```', -0.5],
      [1, 2, '', 'none', 'no sql here', -2],
    ]);
  });

  it('keeps positional files at one sample per question, without a sample number', () => {
    const { items } = pairPredictions(parsePredictions('P0\nP1\nP2', 'p.sql'), gold, null, 'p.sql');
    expect(items.map((i) => i.sample)).toEqual([undefined, undefined, undefined]);
  });

  /** Questions 10 and 11, question 11 a second time (another database). */
  const repeated = () => [questions[0]!, questions[1]!, { ...questions[1]!, dbId: 'b' }];

  it.each([
    [
      'gives every copy of a repeated question_id all its samples',
      jsonl([10, 'a'], [10, 'b'], [11, 'x'], [11, 'y'], [11, 'z']),
      [
        [0, 0, 'a'],
        [0, 1, 'b'],
        [1, 0, 'x'],
        [1, 1, 'y'],
        [1, 2, 'z'],
        [2, 0, 'x'],
        [2, 1, 'y'],
        [2, 2, 'z'],
      ],
    ],
    [
      'deals the samples of a repeated question_id out to its copies when there are copies x n of them',
      jsonl([10, 'a'], [10, 'b'], [11, 'w'], [11, 'x'], [11, 'y'], [11, 'z']),
      [
        [0, 0, 'a'],
        [0, 1, 'b'],
        [1, 0, 'w'],
        [1, 1, 'x'],
        [2, 0, 'y'],
        [2, 1, 'z'],
      ],
    ],
  ])('%s', (_title, text, expected) => {
    const { items } = pairPredictions(parsePredictions(text, 'r.jsonl'), gold, repeated(), 'r.jsonl');
    expect(items.map((i) => [i.index, i.sample, i.predSql])).toEqual(expected);
  });

  it('answers every copy of a question_id that the questions file repeats', () => {
    const { items } = pairPredictions(parsePredictions(jsonl([11, 'P']), 'r.jsonl'), gold, repeated(), 'r.jsonl');
    expect(items.map((i) => [i.index, i.questionId])).toEqual([
      [1, 11],
      [2, 11],
    ]);
  });

  it.each([
    [
      'an id missing from the questions file',
      jsonl([10, 'a'], [99, 'b']),
      questions,
      'r.jsonl:2',
      /question_id 99 is not in the questions file/,
    ],
    [
      'an id beyond the gold lines without questions',
      jsonl([0, 'a'], [3, 'b']),
      null,
      'r.jsonl:2',
      /question_id 3 is not a gold line index \(0\.\.2\)/,
    ],
  ])('rejects %s, naming the JSONL line', (_title, text, qs, where, message) => {
    const e = errorOf(() => pairPredictions(parsePredictions(text, 'r.jsonl'), gold, qs, 'r.jsonl'));
    expect(e.code).toBe('MISMATCH');
    expect(e.where).toBe(where);
    expect(e.message).toMatch(message);
  });

  it.each([
    [
      'a questions file of another length',
      questions.slice(0, 2),
      undefined,
      /2 questions but the gold file has 3 lines/,
    ],
    [
      'a db_id that differs from the gold line',
      [questions[0]!, { ...questions[1]!, dbId: 'x' }, questions[2]!],
      'questions[1]',
      /question 1 has db_id "x" but gold line 2 has "b"/,
    ],
  ])('rejects %s', (_title, qs, where, message) => {
    const e = errorOf(() => pairPredictions(parsePredictions('P0', 'p.sql'), gold, qs, 'p.sql'));
    expect(e.code).toBe('MISMATCH');
    expect(e.where).toBe(where);
    expect(e.message).toMatch(message);
  });
});

/** The 13 published mini-dev prediction files (listed so that tests collect without the data). */
const PUBLISHED: ReadonlyArray<[string, string]> = [
  ['TA_output', 'predict_mini_dev_gpt-35-turbo_cot_SQLite.json'],
  ['TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json'],
  ['TA_output', 'predict_mini_dev_gpt-4-turbo_cot_SQLite.json'],
  ['TA_output', 'predict_mini_dev_meta-llama-3-70b-instruct2_cot_SQLite.json'],
  ['sql_output_kg', 'predict_mini_dev_gpt-35-turbo-instruct_sqlite.json'],
  ['sql_output_kg', 'predict_mini_dev_gpt-35-turbo_sqlite.json'],
  ['sql_output_kg', 'predict_mini_dev_gpt-4-32k_sqlite.json'],
  ['sql_output_kg', 'predict_mini_dev_gpt-4-turbo_sqlite.json'],
  ['sql_output_kg', 'predict_mini_dev_gpt-4_sqlite.json'],
  ['sql_output_kg', 'predict_mini_dev_meta-llama-3-70b-instruct-2_sqlite.json'],
  ['sql_output_kg', 'predict_mini_dev_meta-llama-3-8b-instruct-2_sqlite.json'],
  ['sql_output_kg', 'predict_mini_dev_mistralai-mixtral-8x7b-instru-4_sqlite.json'],
  ['sql_output_kg', 'predict_mini_dev_phi-3-medium-128k-instruct-1_sqlite.json'],
];

describe('real prediction files', () => {
  const files = PUBLISHED.map(([dir, name]) => ['bird', 'predictions', dir, name]);
  let miniGold: GoldEntry[] = [];
  let miniQuestions: Question[] = [];
  beforeAll(() => {
    miniGold = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'mini_dev_sqlite_gold.sql');
    miniQuestions = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json');
  });

  it('has exactly the 13 published prediction files on disk', () => {
    const onDisk = ['TA_output', 'sql_output_kg'].flatMap((dir) =>
      readdirSync(sharedData('bird', 'predictions', dir)).map((n) => [dir, n]),
    );
    expect(onDisk.sort()).toEqual([...PUBLISHED].sort());
  });

  it.each(files.map((parts) => [parts[3]!, parts]))(
    '%s parses to 500 predictions and pairs into 500 items',
    (name, parts) => {
      const preds = parsePredictions(readSharedText(...parts), name);
      expect(preds).toHaveLength(500);
      expect(new Set(rules(preds))).toEqual(new Set(['bird-separator']));
      const { items, warnings } = pairPredictions(preds, miniGold, miniQuestions, name);
      expect(warnings).toEqual([]);
      expect(items).toHaveLength(500);
      expect(items.map((i) => i.dbId)).toEqual(miniGold.map((g) => g.dbId));
    },
  );

  it('pairs mini-dev predictions against BIRD dev gold without error: the db name is ignored, as official', () => {
    const devGold = parseGoldSql(readSharedText('bird', 'dev', 'dev_gold.sql'), 'dev_gold.sql');
    const { items, findings } = planReplay({
      predictions: { name: 'p.json', text: readSharedText(...files[0]!) },
      gold: devGold,
      questions: null,
    });
    expect(items).toHaveLength(500);
    expect(items[0]!.dbId).toBe(devGold[0]!.dbId);
    expect(findings.find((f) => f.code === 'count-mismatch')!.message).toMatch(
      /the last 1034 gold questions were dropped/,
    );
  });

  it('pairs a JSONL conversion of a mini-dev file by question_id into 500 items, covering the repeated ids', () => {
    const preds = parsePredictions(readSharedText(...files[0]!), 'p.json');
    const lines = preds.map((p, i) => JSON.stringify({ question_id: miniQuestions[i]!.questionId, sql: p.sql }));
    const { items, warnings } = pairPredictions(
      parsePredictions(lines.join('\n'), 'p.jsonl'),
      miniGold,
      miniQuestions,
      'p.jsonl',
    );
    expect(warnings).toEqual([]);
    expect(items).toHaveLength(500);
    expect(items.map((i) => i.sample)).toEqual(new Array(500).fill(0));
    expect(items.map((i) => i.predSql)).toEqual(preds.map((p) => p.sql));
  });

  it('rejects JSONL predictions whose question_id is not in the mini-dev questions', () => {
    const e = errorOf(() =>
      pairPredictions(
        parsePredictions(jsonl([1471, 'A'], [99999, 'B']), 'r.jsonl'),
        miniGold,
        miniQuestions,
        'r.jsonl',
      ),
    );
    expect(e.code).toBe('MISMATCH');
    expect(e.where).toBe('r.jsonl:2');
  });
});
