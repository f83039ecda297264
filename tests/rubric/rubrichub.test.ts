/**
 * RubricHub's released layout (verl-style rows: prompt messages, reward_model {ground_truth,
 * rubrics: [{criterion, points}]}, or a flat Rubrics list) read as a rubric dataset.
 */
import { describe, expect, it } from 'vitest';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';

const row = (over: Record<string, unknown> = {}) => ({
  data_source: 'RubricHub_Medical',
  ability: 'medical',
  prompt: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'What should I do for a mild burn?' },
  ],
  reward_model: {
    style: 'rubric',
    ground_truth: 'Cool it under running water for 20 minutes.',
    rubrics: [
      { criterion: 'Advises cooling the burn under cool running water.', points: 8 },
      { criterion: 'Says how long to cool it (about 20 minutes).', points: 4 },
      { criterion: 'Mentions covering it with cling film.', points: 1 },
      { criterion: 'Recommends putting butter or ice on the burn.', points: -6 },
    ],
  },
  ...over,
});
const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

describe('RubricHub rows as a rubric dataset', () => {
  it('maps the prompt, reference, criteria and points (categories from the points)', () => {
    const [r] = parseRarJsonl(jsonl([row()]), 'rubrichub.jsonl');
    expect(r!.id).toBe('rubrichub.jsonl:1');
    expect(r!.question).toBe('You are a helpful assistant.\n\nWhat should I do for a mild burn?');
    expect(r!.referenceAnswer).toBe('Cool it under running water for 20 minutes.');
    expect(r!.rubric.items.map((i) => [i.id, i.title, i.category, i.weight, i.check.kind])).toEqual([
      ['c1', 'Advises cooling the burn under cool running water.', 'essential', 8, 'judge'],
      ['c2', 'Says how long to cool it (about 20 minutes).', 'important', 4, 'judge'],
      ['c3', 'Mentions covering it with cling film.', 'optional', 1, 'judge'],
      ['c4', 'Recommends putting butter or ice on the burn.', 'pitfall', -6, 'judge'],
    ]);
  });

  it('prefers the flat Rubrics list, takes a string prompt, and an empty ground truth is no reference', () => {
    const [r] = parseRarJsonl(
      jsonl([
        row({
          prompt: 'Write a haiku about rain.',
          reward_model: { ground_truth: '', rubrics: [{ criterion: 'ignored', points: 3 }] },
          Rubrics: [
            { criterion: 'Has three lines.', points: 5 },
            { criterion: 'Mentions rain.', points: 3 },
          ],
          id: 'w-7',
        }),
      ]),
      'w.jsonl',
    );
    expect(r!.id).toBe('w-7');
    expect(r!.question).toBe('Write a haiku about rain.');
    expect(r!.referenceAnswer).toBeNull();
    expect(r!.rubric.items.map((i) => i.title)).toEqual(['Has three lines.', 'Mentions rain.']);
  });

  it.each([
    ['no rubric', row({ reward_model: { ground_truth: 'x', rubrics: [] } }), /w\.jsonl:2.*no rubric/],
    [
      'a criterion without text',
      row({ Rubrics: [{ criterion: ' ', points: 2 }] }),
      /w\.jsonl:2.*rubric item 1: "criterion" must be a non-empty string/,
    ],
    [
      'points that are not a number',
      row({ Rubrics: [{ criterion: 'a', points: 'five' }] }),
      /w\.jsonl:2.*rubric item 1: "points" must be a non-zero number, found the string "five"/,
    ],
    ['zero points', row({ Rubrics: [{ criterion: 'a', points: 0 }] }), /rubric item 1: "points" must be a non-zero/],
    ['a prompt message without content', row({ prompt: [{ role: 'user' }] }), /w\.jsonl:2.*"prompt" message 1 must be/],
  ])('refuses %s, naming the file and line', (_, bad, message) => {
    expect(() => parseRarJsonl(jsonl([row(), bad]), 'w.jsonl')).toThrow(message);
  });
});
