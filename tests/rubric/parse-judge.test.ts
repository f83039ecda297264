import { describe, expect, it } from 'vitest';
import { parseCriterionAnswer, parseScoreAnswer } from '../../src/core/rubric/parse-judge.ts';

describe('strict parsing of a criterion verdict', () => {
  it.each([
    ['well-formed', '{"criteria_met": true, "explanation": "Mentions metformin."}', true, 'Mentions metformin.'],
    [
      'fenced json block',
      'Here is my grading:\n```json\n{"explanation": "No aspirin advice.", "criteria_met": false}\n```',
      false,
      'No aspirin advice.',
    ],
    [
      'wrapped in prose',
      'After reading the response carefully, {"criteria_met": true, "explanation": "ok"} is my verdict.',
      true,
      'ok',
    ],
    [
      'reasoning in a think block with a draft verdict',
      '<think>maybe {"criteria_met": false}? no.</think>{"criteria_met": true, "explanation": "x"}',
      true,
      'x',
    ],
    ['explanation may be absent', '{"criteria_met": false}', false, ''],
    [
      'braces in strings do not confuse it',
      '{"explanation": "uses {curly} braces and \\"quotes\\"", "criteria_met": true}',
      true,
      'uses {curly} braces and "quotes"',
    ],
    [
      'two objects that agree',
      '{"criteria_met": true, "explanation": "a"}\n{"criteria_met": true, "explanation": "b"}',
      true,
      'a',
    ],
  ])('accepts: %s', (_, text, met, explanation) => {
    expect(parseCriterionAnswer(text)).toEqual({ ok: true, value: { met, explanation } });
  });

  it.each([
    ['free text, no JSON', 'The criterion is met.', 'no JSON object with "criteria_met"'],
    [
      'a string instead of a boolean',
      '{"criteria_met": "true", "explanation": "x"}',
      '"criteria_met" must be true or false, found "true"',
    ],
    ['Python booleans', "{'criteria_met': True, 'explanation': 'x'}", 'no JSON object'],
    ['trailing comma', '{"criteria_met": true, "explanation": "x",}', 'no JSON object'],
    ['a number instead of a boolean', '{"criteria_met": 1}', 'must be true or false, found 1'],
    ['objects that disagree', '{"criteria_met": true} or maybe {"criteria_met": false}', 'disagree'],
    ['explanation of the wrong type', '{"criteria_met": true, "explanation": ["a"]}', '"explanation" must be a string'],
    ['the verdict nested in a wrapper', '{"result": {"criteria_met": true}}', 'no JSON object'],
    ['cut off mid-object', '{"criteria_met": true, "explanation": "the resp', 'no JSON object'],
    ['empty answer', '', 'no JSON object'],
  ])('rejects: %s', (_, text, reason) => {
    const r = parseCriterionAnswer(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(reason);
  });
});

describe('strict parsing of a 1..10 score', () => {
  it.each([
    ['well-formed', '{"score": 7, "explanation": "Good."}', 7],
    ['fenced', '```json\n{"score": 10, "explanation": "All met."}\n```', 10],
    ['prose around it', 'Final answer: {"explanation": "weak", "score": 1}. Thanks!', 1],
  ])('accepts: %s', (_, text, score) => {
    const r = parseScoreAnswer(text);
    expect(r.ok && r.value.score).toBe(score);
  });

  it.each([
    ['a fraction', '{"score": 7.5}', 'integer from 1 to 10, found 7.5'],
    ['out of range', '{"score": 11}', 'found 11'],
    ['zero', '{"score": 0}', 'found 0'],
    ['a string', '{"score": "8"}', 'found "8"'],
    ['a bare number', '8', 'no JSON object with "score"'],
    ['"8/10" in prose', 'I would give it 8/10.', 'no JSON object'],
  ])('rejects: %s', (_, text, reason) => {
    const r = parseScoreAnswer(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(reason);
  });
});
