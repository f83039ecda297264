import { describe, expect, it } from 'vitest';
import { ALL_QUESTIONS, parseIdList, selectSubset } from '../../../src/core/views/subset.ts';
import type { Difficulty, Question } from '../../../src/core/types.ts';

const q = (questionId: number, dbId: string, difficulty: Difficulty): Question => ({
  questionId,
  dbId,
  difficulty,
  question: `q${questionId}`,
  evidence: '',
  goldSql: 'SELECT 1',
});
const QUESTIONS: Question[] = [
  q(10, 'a', 'simple'),
  q(11, 'a', 'moderate'),
  q(12, 'b', 'simple'),
  q(13, 'b', 'challenging'),
  q(14, 'c', 'simple'),
  q(15, 'a', 'simple'),
  q(16, 'c', 'moderate'),
  q(17, 'b', 'simple'),
];

describe('parseIdList', () => {
  it.each([
    ['3, 7 10-12', [3, 7, 10, 11, 12]],
    ['  ', []],
    ['5;5;4', [4, 5]],
    ['1 – 3', [1, 2, 3]],
  ])('reads %j as %j', (text, ids) => {
    expect(parseIdList(text)).toEqual(ids);
  });
  it('names the first item that is not an id', () => {
    expect(() => parseIdList('3, x7')).toThrow('"x7" is not a question id');
    expect(() => parseIdList('9-2')).toThrow('ends before it starts');
  });
});

describe('selectSubset', () => {
  it('keeps every question when nothing is chosen', () => {
    expect(selectSubset(QUESTIONS, ALL_QUESTIONS)).toEqual({
      indices: [0, 1, 2, 3, 4, 5, 6, 7],
      description: 'all 8 questions',
    });
  });
  it('filters by database, difficulty and question id together', () => {
    const s = selectSubset(QUESTIONS, {
      ...ALL_QUESTIONS,
      dbIds: ['a', 'b'],
      difficulties: ['simple'],
      questionIds: [10, 12, 14, 17],
    });
    expect(s.indices).toEqual([0, 2, 7]);
    expect(s.description).toBe('3 of 8 questions: databases a, b; difficulty simple; 4 chosen question id(s)');
  });
  it('draws the same seeded sample every time, in question order', () => {
    const spec = { ...ALL_QUESTIONS, sample: { n: 3, seed: 42 } };
    const first = selectSubset(QUESTIONS, spec).indices;
    expect(first).toHaveLength(3);
    expect(first).toEqual([...first].sort((a, b) => a - b));
    expect(selectSubset(QUESTIONS, spec).indices).toEqual(first);
    const seeds = new Set(
      Array.from({ length: 20 }, (_, seed) =>
        selectSubset(QUESTIONS, { ...spec, sample: { n: 3, seed } }).indices.join(),
      ),
    );
    expect(seeds.size).toBeGreaterThan(5);
  });
  it('samples after filtering and never more than what is left', () => {
    const s = selectSubset(QUESTIONS, { ...ALL_QUESTIONS, dbIds: ['c'], sample: { n: 10, seed: 1 } });
    expect(s.indices).toEqual([4, 6]);
  });
  it('refuses a sample size below 1', () => {
    expect(() => selectSubset(QUESTIONS, { ...ALL_QUESTIONS, sample: { n: 0, seed: 1 } })).toThrow('at least 1');
  });
});
