import { describe, expect, it } from 'vitest';
import { tableRelevance, words } from '../../src/core/prompt/relevance.ts';

describe('lexical relevance', () => {
  it('splits identifiers on underscores, digits and camelCase, in lower case and singular', () => {
    expect(words('hero_power lapTimes Player_Attributes atom_id2 Companies')).toEqual([
      'hero',
      'power',
      'lap',
      'time',
      'player',
      'attribute',
      'atom',
      'id',
      '2',
      'company',
    ]);
  });

  it('scores a mentioned table name 10 and each mentioned column 1', () => {
    const t = { name: 'hero_power', columns: ['hero_id', 'power_id'] };
    expect(tableRelevance(t, 'Which powers does each hero have?')).toBe(10);
    expect(
      tableRelevance({ name: 'budget', columns: ['spent', 'remaining', 'category'] }, 'total spent per category'),
    ).toBe(2);
  });

  it('does not count generic columns such as id or name', () => {
    expect(tableRelevance({ name: 'colour', columns: ['id', 'name'] }, 'the id and the name')).toBe(0);
  });
});
