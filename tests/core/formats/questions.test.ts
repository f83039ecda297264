import { describe, expect, it } from 'vitest';
import { jsonErrorOffset, parseQuestions } from '../../../src/core/formats/questions.ts';
import type { Question } from '../../../src/core/types.ts';
import { readSharedText } from '../../helpers/shared-data.ts';
import { workbenchErrorOf as errorOf } from '../../helpers/errors.ts';

const bird = (over: Record<string, unknown> = {}) => ({
  question_id: 7,
  db_id: 'financial',
  question: 'How many?',
  evidence: 'hint',
  SQL: 'SELECT 1',
  difficulty: 'simple',
  ...over,
});

function counts(questions: Question[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const q of questions) out[q.difficulty] = (out[q.difficulty] ?? 0) + 1;
  return out;
}

describe('parseQuestions', () => {
  it('reads a BIRD JSON array into normalised questions', () => {
    expect(parseQuestions(JSON.stringify([bird()]), 'dev.json')).toEqual([
      {
        questionId: 7,
        dbId: 'financial',
        question: 'How many?',
        evidence: 'hint',
        goldSql: 'SELECT 1',
        difficulty: 'simple',
      },
    ]);
  });

  it("reads Spider questions with the position as id, no evidence and Spider's hardness of the query", () => {
    const spider = [
      { db_id: 'a', query: 'SELECT 1', question: 'q0', sql: {} },
      { db_id: 'b', query: 'SELECT 2', question: 'q1' },
    ];
    expect(parseQuestions(JSON.stringify(spider), 'dev.json')).toEqual([
      { questionId: 0, dbId: 'a', question: 'q0', evidence: '', goldSql: 'SELECT 1', difficulty: 'easy' },
      { questionId: 1, dbId: 'b', question: 'q1', evidence: '', goldSql: 'SELECT 2', difficulty: 'easy' },
    ]);
  });

  it('reads JSON Lines, skipping blank lines', () => {
    const text = `${JSON.stringify(bird())}\n\n${JSON.stringify(bird({ question_id: 8 }))}\n`;
    expect(parseQuestions(text, 'mini_dev_sqlite.jsonl').map((q) => q.questionId)).toEqual([7, 8]);
  });

  it.each([
    ['moderate', 'moderate'],
    ['challenging', 'challenging'],
    ['Simple', 'unknown'],
    ['hard', 'unknown'],
    [3, 'unknown'],
    [undefined, 'unknown'],
  ])('maps difficulty %j to %s', (difficulty, expected) => {
    expect(parseQuestions(JSON.stringify([bird({ difficulty })]), 'dev.json')[0]!.difficulty).toBe(expected);
  });

  it.each([
    ['missing', undefined],
    ['null', null],
  ])('treats %s evidence as empty', (_title, evidence) => {
    expect(parseQuestions(JSON.stringify([bird({ evidence })]), 'dev.json')[0]!.evidence).toBe('');
  });

  it('accepts a repeated question_id when both entries are identical (BIRD mini-dev 137/138)', () => {
    expect(parseQuestions(JSON.stringify([bird(), bird({ question_id: 8 }), bird()]), 'dev.json')).toHaveLength(3);
  });

  it.each([
    ['db_id missing', [bird({ db_id: undefined })], 'dev.json[0]', /"db_id" must be a non-empty string, found missing/],
    [
      'db_id empty',
      [bird(), bird({ question_id: 8, db_id: ' ' })],
      'dev.json[1]',
      /"db_id" must be a non-empty string/,
    ],
    ['db_id a number', [bird({ db_id: 3 })], 'dev.json[0]', /"db_id".*number 3/],
    ['question not a string', [bird({ question: null })], 'dev.json[0]', /"question" must be a string, found null/],
    [
      'SQL not a string',
      [bird(), bird({ question_id: 9, SQL: ['x'] })],
      'dev.json[1]',
      /"SQL" must be a string, found an array/,
    ],
    ['evidence a number', [bird({ evidence: 1 })], 'dev.json[0]', /"evidence" must be a string/],
    [
      'question_id a string',
      [bird({ question_id: '7' })],
      'dev.json[0]',
      /"question_id" must be a non-negative integer/,
    ],
    ['question_id negative', [bird({ question_id: -1 })], 'dev.json[0]', /non-negative integer/],
    ['question_id fractional', [bird({ question_id: 1.5 })], 'dev.json[0]', /non-negative integer/],
    ['an element that is not an object', [bird(), 'x'], 'dev.json[1]', /expected a question object/],
    [
      'neither SQL nor query',
      [{ db_id: 'a', question: 'q' }],
      'dev.json[0]',
      /neither "SQL" \(BIRD\) nor "query" \(Spider\)/,
    ],
    [
      'a duplicate id for different questions',
      [bird(), bird({ question: 'Other?' })],
      'dev.json[1]',
      /question_id 7 is already used .* dev.json\[0\]/,
    ],
  ])('rejects %s, naming the element', (_title, value, where, message) => {
    const e = errorOf(() => parseQuestions(JSON.stringify(value), 'dev.json'));
    expect(e.code).toBe('BAD_FORMAT');
    expect(e.where).toBe(where);
    expect(e.message).toMatch(message);
  });

  it.each([
    ['an empty file', '  \n', 'q.json', /empty/],
    ['an empty array', '[]', 'q.json', /no questions/],
    ['a JSON object that is not an array', '{"a": 1}', 'q.json:1', /neither "SQL"/],
  ])('rejects %s', (_title, text, where, message) => {
    const e = errorOf(() => parseQuestions(text, 'q.json'));
    expect(e.where).toBe(where);
    expect(e.message).toMatch(message);
  });

  it('names file, line and column of a truncated JSON array', () => {
    const text = JSON.stringify([bird(), bird({ question_id: 8 })], null, 2);
    const e = errorOf(() => parseQuestions(text.slice(0, 200), 'dev.json'));
    expect(e.code).toBe('BAD_JSON');
    expect(e.where).toMatch(/^dev\.json:\d+:\d+$/);
    expect(e.message).toMatch(/ends too early/);
  });

  it('names the line of a JSON Lines line that is not JSON', () => {
    const text = `${JSON.stringify(bird())}\n{"question_id": 8, oops}\n`;
    const e = errorOf(() => parseQuestions(text, 'mini.jsonl'));
    expect(e.code).toBe('BAD_JSON');
    expect(e.where).toBe('mini.jsonl:2');
    expect(e.message).toMatch(/column 20: unexpected "o"/);
  });

  it('names the line of a JSON Lines element with a wrong type', () => {
    const text = `${JSON.stringify(bird())}\n${JSON.stringify(bird({ question_id: 8, db_id: null }))}\n`;
    expect(errorOf(() => parseQuestions(text, 'mini.jsonl')).where).toBe('mini.jsonl:2');
  });
});

describe('jsonErrorOffset', () => {
  it.each([
    ['valid JSON', '{"a": [1, 2.5e3, "x\\n", true, null]}', -1],
    ['a missing value', '{"a": }', 6],
    ['a trailing comma', '[1,]', 3],
    ['truncated input', '{"a": "xy', 9],
    ['a raw newline inside a string', '"a\nb"', 2],
    ['a bad escape', '"a\\qb"', 3],
    ['text after the value', '{} x', 3],
  ])('locates the error in %s', (_title, text, offset) => {
    expect(jsonErrorOffset(text)).toBe(offset);
  });
});

describe('real question files', () => {
  it('parses BIRD mini-dev: 500 questions, 148 simple / 250 moderate / 102 challenging', () => {
    const questions = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json');
    expect(questions).toHaveLength(500);
    expect(counts(questions)).toEqual({ simple: 148, moderate: 250, challenging: 102 });
    expect(new Set(questions.map((q) => q.questionId)).size).toBe(498);
  });

  it('parses mini-dev converted to JSON Lines to the same questions', () => {
    const array = JSON.parse(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json')) as unknown[];
    const jsonl = array.map((q) => JSON.stringify(q)).join('\n') + '\n';
    expect(parseQuestions(jsonl, 'mini_dev_sqlite.jsonl')).toEqual(
      parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json'),
    );
  });

  it('parses BIRD dev: 1534 questions, 925 simple / 464 moderate / 145 challenging', () => {
    const questions = parseQuestions(readSharedText('bird', 'dev', 'dev.json'), 'dev.json');
    expect(questions).toHaveLength(1534);
    expect(counts(questions)).toEqual({ simple: 925, moderate: 464, challenging: 145 });
  });

  it("parses Spider dev: 1034 questions numbered by position, levels by Spider's hardness rule", () => {
    const questions = parseQuestions(readSharedText('spider', 'dev.json'), 'dev.json');
    expect(questions).toHaveLength(1034);
    expect(questions[1033]!.questionId).toBe(1033);
    expect(counts(questions)).toEqual({ easy: 248, medium: 446, hard: 174, extra: 166 });
  });
});
