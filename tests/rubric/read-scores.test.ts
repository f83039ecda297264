import { describe, expect, it } from 'vitest';
import { readRubricScores } from '../../src/core/rubric/read-scores.ts';
import { validateRubric } from '../../src/core/rubric/model.ts';
import { scoreSample } from '../../src/core/rubric/score.ts';
import { JsonReader } from '../../src/core/formats/validate.ts';

const rubric = validateRubric({
  id: 'r',
  items: [
    {
      id: 'sql',
      title: 'Selects',
      category: 'essential',
      check: { kind: 'regex', pattern: '^select', flags: 'i', target: 'sql' },
    },
    { id: 'n/a', title: 'Matches gold', category: 'important', check: { kind: 'sql', name: 'matches-gold' } },
    { id: 'judge', title: 'Explains', category: 'optional' },
  ],
});

async function stored() {
  const s = await scoreSample(rubric, { question: 'q', completion: 'give 10', sql: { sql: 'SELECT 1' } });
  return JSON.parse(JSON.stringify({ rubric: s })) as Record<string, unknown>;
}

describe('reading stored rubric scores at the boundary', () => {
  it('round-trips a scored sample through JSON', async () => {
    const o = await stored();
    const r = new JsonReader('run.json');
    expect(r.optional(o, 'rubric', 'samples[0]', readRubricScores)).toEqual(o.rubric);
    expect(r.optional({}, 'rubric', 'samples[0]', readRubricScores)).toBeUndefined();
  });

  it('names the file and the field path of a bad value', async () => {
    const o = await stored();
    const bad = o.rubric as { criteria: Array<Record<string, unknown>>; explicit: Record<string, unknown> };
    bad.criteria[0]!.met = 'yes';
    const r = new JsonReader('run.json');
    expect(() => r.optional(o, 'rubric', 'samples[3]', readRubricScores)).toThrow(
      'run.json: samples[3].rubric.criteria[0].met must be true or false, found the string "yes"',
    );
    bad.criteria[0]!.met = true;
    bad.explicit.status = 'great';
    expect(() => r.optional(o, 'rubric', 'samples[3]', readRubricScores)).toThrow(
      'samples[3].rubric.explicit.status must be one of "ok", "incomplete", "no-positive-weight"',
    );
  });
});
