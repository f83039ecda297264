import { describe, expect, it } from 'vitest';
import { isWorkbenchError } from '../../src/core/errors.ts';
import { validateRubric } from '../../src/core/rubric/model.ts';

const item = (over: Record<string, unknown> = {}) => ({
  id: 'a',
  title: 'Correct answer',
  description: 'd',
  category: 'essential',
  ...over,
});

function errorOf(input: unknown): string {
  try {
    validateRubric(input, {}, 'my.json');
  } catch (err) {
    expect(isWorkbenchError(err)).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected a validation error');
}

describe('rubric validation names the rubric and the item', () => {
  it.each([
    [
      'unknown category',
      { id: 'r', items: [item({ category: 'critical' })] },
      'my.json: rubric "r" item "a": unknown category the string "critical"; use one of essential, important, optional, pitfall',
    ],
    [
      'missing title',
      { id: 'r', items: [item({ title: undefined })] },
      'my.json: rubric "r" item "a": missing "title"',
    ],
    [
      'weight not finite',
      { id: 'r', items: [item({ weight: Number.POSITIVE_INFINITY })] },
      'my.json: rubric "r" item "a": weight must be a finite number, found number Infinity',
    ],
    [
      'weight as a string',
      { id: 'r', items: [item({ weight: '5' })] },
      'weight must be a finite number, found the string "5"',
    ],
    [
      'regex that does not compile',
      { id: 'r', items: [item({ check: { kind: 'regex', pattern: '(unclosed', target: 'completion' } })] },
      'item "a": the regex "(unclosed" does not compile',
    ],
    [
      'stateful regex flag',
      { id: 'r', items: [item({ check: { kind: 'regex', pattern: 'x', flags: 'g' } })] },
      'regex flags the string "g" are not allowed',
    ],
    [
      'duplicate ids',
      { id: 'r', items: [item(), item({ title: 'other' })] },
      'my.json: rubric "r": duplicate item id "a" (item 2); ids must be unique',
    ],
    ['0 items', { id: 'r', items: [] }, 'my.json: rubric "r": has no items; a rubric needs at least one criterion'],
    ['no id', { items: [item()] }, 'my.json: the rubric needs a non-empty string "id", found missing'],
    [
      'unknown SQL check',
      { id: 'r', items: [item({ check: { kind: 'sql', name: 'fast' } })] },
      'unknown SQL check the string "fast"; use one of executes, matches-gold',
    ],
    [
      'negative weight outside pitfalls',
      { id: 'r', items: [item({ weight: -1 })] },
      'negative weight -1 on a essential item; only pitfall items may subtract',
    ],
    [
      'unknown check kind',
      { id: 'r', items: [item({ check: { kind: 'python' } })] },
      'unknown check kind the string "python"',
    ],
  ])('%s', (_, input, message) => {
    expect(errorOf(input)).toContain(message);
  });

  it('fills defaults: judge check, weight from the chosen weighting, ids by position', () => {
    const r = validateRubric(
      {
        id: 'r',
        items: [
          { title: 'x', category: 'Important' },
          { title: 'y', category: 'pitfall' },
        ],
      },
      { weighting: 'rar-integers' },
    );
    expect(r.items).toEqual([
      { id: 'c1', title: 'x', description: '', category: 'important', weight: 4, check: { kind: 'judge' } },
      { id: 'c2', title: 'y', description: '', category: 'pitfall', weight: -2, check: { kind: 'judge' } },
    ]);
    expect(r.title).toBe('r');
  });

  it('keeps valid programmatic and regex checks', () => {
    const r = validateRubric({
      id: 'r',
      items: [
        item({ check: { kind: 'sql', name: 'column-count', expected: 2 } }),
        item({ id: 'b', check: { kind: 'regex', pattern: '^SELECT', flags: 'i', target: 'sql' } }),
      ],
    });
    expect(r.items.map((i) => i.check)).toEqual([
      { kind: 'sql', name: 'column-count', expected: 2 },
      { kind: 'regex', pattern: '^SELECT', flags: 'i', target: 'sql' },
    ]);
  });
});
