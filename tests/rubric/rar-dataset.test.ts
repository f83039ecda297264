import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { categoryFromWeight, parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import { ROOT } from '../helpers/cli.ts';

const line = (v: unknown) => JSON.stringify(v);
const row = (over: Record<string, unknown> = {}) => ({
  question: 'Q?',
  reference_answer: 'A.',
  rubric: [{ title: 'Answer', description: 'Essential Criteria: Gives A.', weight: 5 }],
  ...over,
});

describe('RaR-style JSONL import', () => {
  it('reads the shipped example: medical and science questions, 7–12 criteria each, with reference answers', () => {
    const rows = parseRarJsonl(
      readFileSync(path.join(ROOT, 'public/rubrics/example-rar.jsonl'), 'utf8'),
      'example-rar.jsonl',
    );
    expect(rows.map((r) => r.id)).toEqual([
      'med-chest-pain',
      'med-t2d-first-line',
      'sci-ice-floats',
      'sci-falling-ball',
      'sci-propane-combustion',
    ]);
    for (const r of rows) {
      expect(r.rubric.items.length).toBeGreaterThanOrEqual(7);
      expect(r.rubric.items.length).toBeLessThanOrEqual(12);
      expect(r.referenceAnswer).toMatch(/\w{3}/);
      // Every category comes from the description's prefix and agrees with the integer weight.
      for (const i of r.rubric.items) expect(categoryFromWeight(i.weight, true)).toBe(i.category);
      expect(r.rubric.items.some((i) => i.category === 'pitfall' && i.weight < 0)).toBe(true);
    }
  });

  it('derives the category from an explicit field, a title or description prefix, else the weight', () => {
    const [r] = parseRarJsonl(
      line(
        row({
          rubric: [
            { title: 'x', description: 'no prefix', weight: 1, category: 'Essential' },
            { title: 'Important Criteria: Explains why', description: 'd', weight: 5 },
            { title: 'Tone', description: 'Optional Criteria: Is concise.', weight: 4 },
            { title: 'Big', description: 'd', weight: 5 },
            { title: 'Mid', description: 'd', weight: 3 },
            { title: 'Small', description: 'd', weight: 2 },
            { title: 'Fault', description: 'Does not mention X.', weight: -1 },
          ],
        }),
      ),
      'd.jsonl',
    );
    expect(r!.rubric.items.map((i) => [i.id, i.category, i.weight])).toEqual([
      ['c1', 'essential', 1],
      ['c2', 'important', 5],
      ['c3', 'optional', 4],
      ['c4', 'essential', 5],
      ['c5', 'important', 3],
      ['c6', 'optional', 2],
      ['c7', 'pitfall', -1],
    ]);
    expect(r!.id).toBe('d.jsonl:1');
  });

  it('reads weights on the paper scale (all |w| <= 1) by the paper mapping', () => {
    expect([1, 0.7, 0.3, -0.9].map((w) => categoryFromWeight(w, false))).toEqual([
      'essential',
      'important',
      'optional',
      'pitfall',
    ]);
    const [r] = parseRarJsonl(
      line(
        row({
          rubric: [
            { title: 'a', weight: 1 },
            { title: 'b', weight: 0.7 },
            { title: 'c', weight: 0.3 },
          ],
        }),
      ),
      'p.jsonl',
    );
    expect(r!.rubric.items.map((i) => i.category)).toEqual(['essential', 'important', 'optional']);
  });

  it.each([
    ['a line that is not JSON', `${line(row())}\n{"question": `, 'bad.jsonl:2: this line is not valid JSON'],
    ['no question', line(row({ question: '' })), 'bad.jsonl:1: "question" must be a non-empty string'],
    ['a rubric that is not a list', line(row({ rubric: { a: 1 } })), 'bad.jsonl:1: "rubric" must be an array'],
    ['an empty rubric', line(row({ rubric: [] })), 'bad.jsonl:1: rubric "bad.jsonl:1": has no items'],
    [
      'a weight that is not a number',
      line(row({ rubric: [{ title: 't', weight: 'high' }] })),
      'bad.jsonl:1: rubric item 1: weight must be a finite number, found the string "high"',
    ],
    [
      'a criterion without a title',
      `${line(row())}\n\n${line(row({ rubric: [{ description: 'd', weight: 2 }] }))}`,
      'bad.jsonl:3: rubric "bad.jsonl:3" item "c1": missing "title"',
    ],
    [
      'an unknown category',
      line(row({ rubric: [{ title: 't', weight: 2, category: 'nice-to-have' }] })),
      'unknown category the string "nice-to-have"',
    ],
    ['a duplicate id', `${line(row({ id: 'a' }))}\n${line(row({ id: 'a' }))}`, 'bad.jsonl:2: duplicate id "a"'],
    ['a reference answer that is not text', line(row({ reference_answer: 42 })), '"reference_answer" must be a string'],
    ['an empty file', '\n\n', 'bad.jsonl: no rows'],
  ])('rejects %s with a message naming the line', (_, text, message) => {
    expect(() => parseRarJsonl(text, 'bad.jsonl')).toThrow(message);
  });
});
