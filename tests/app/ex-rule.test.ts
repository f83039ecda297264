/**
 * The EX rule of questions read from files, one function for the CLI's `eval` and `series`: the
 * flag wins, else Spider's levels in the questions, else (no questions file) Spider's tables.json
 * beside the gold file.
 */
import { describe, expect, it } from 'vitest';
import { questionsExRule } from '../../src/app/ex-rule.ts';

const bird = [{ difficulty: 'simple' }, { difficulty: 'challenging' }] as const;
const spider = [{ difficulty: 'simple' }, { difficulty: 'extra' }] as const;

describe('questionsExRule', () => {
  it("gives Spider's rule for questions with Spider's levels, else BIRD's", () => {
    expect(questionsExRule([...spider])).toBe('spider');
    expect(questionsExRule([...bird])).toBe('bird');
  });

  it("without a questions file, gives Spider's rule only when tables.json lies beside the gold", () => {
    expect(questionsExRule(null, null, true)).toBe('spider');
    expect(questionsExRule(null, null, false)).toBe('bird');
    expect(questionsExRule(null)).toBe('bird');
  });

  it("the flag's choice wins over the questions and over tables.json", () => {
    expect(questionsExRule([...spider], 'bird')).toBe('bird');
    expect(questionsExRule([...bird], 'spider')).toBe('spider');
    expect(questionsExRule(null, 'bird', true)).toBe('bird');
  });

  it('questions decide even when tables.json lies beside the gold', () => {
    expect(questionsExRule([...bird], null, true)).toBe('bird');
  });
});
