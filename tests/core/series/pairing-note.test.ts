/**
 * The pairing note a step keeps (and its dashboard shows beside its question count): rows paired
 * and not, grouped by why, from a real verl dump of mini-dev (the 13 real prediction files'
 * first, superhero's 52 questions) with rows that match no question or several.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readSeriesDump } from '../../../src/adapters/harness/series-dump.ts';
import { pairingNote } from '../../../src/core/series/dump-step.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { MINIDEV_QUESTIONS, questions as raw, verlLines } from '../../helpers/series-dumps.ts';

const questions = parseQuestions(readFileSync(MINIDEV_QUESTIONS, 'utf8'), 'mini_dev_sqlite.json');

describe('pairingNote', () => {
  it('says how many rows of the step were paired and why the others were not, with their lines', async () => {
    const lines = verlLines(0, ['superhero']);
    const stray = (k: number) =>
      JSON.stringify({ input: `Question: stray question ${k}?`, output: '```sql\nSELECT 1\n```', score: 0, step: 100 });
    const text = [...lines, stray(1), stray(2)].join('\n') + '\n';
    const dump = await readSeriesDump('100.jsonl', new Blob([text]), questions);
    const [step] = dump.steps;
    expect(step!.pairing!.rows).toBe(54);
    expect(pairingNote(step!.pairing!)).toBe(
      `52 of 54 rows paired; 2 not: 2 no question's text is in its prompt and its ground truth is no question's gold SQL (100.jsonl:53, 100.jsonl:54)`,
    );
  });

  it('is null when every row was paired', async () => {
    const dump = await readSeriesDump(
      '100.jsonl',
      new Blob([verlLines(0, ['superhero']).join('\n') + '\n']),
      questions,
    );
    expect(dump.steps[0]!.pairing).toEqual({ rows: 52, unmatched: [] });
    expect(pairingNote(dump.steps[0]!.pairing!)).toBeNull();
  });

  it('lists at most 8 places per reason, then how many more', () => {
    const unmatched = Array.from({ length: 11 }, (_, k) => ({ where: `line ${k + 1}`, reason: 'why' }));
    expect(pairingNote({ rows: 20, unmatched })).toBe(
      '9 of 20 rows paired; 11 not: 11 why (line 1, line 2, line 3, line 4, line 5, line 6, line 7, line 8, … 3 more)',
    );
  });

  it('mini-dev’s repeated questions (the same text twice): their rows match several questions', async () => {
    // Two questions of mini-dev whose text and evidence are the same (ids 137/138 in the issue).
    const byText = new Map<string, number[]>();
    raw.forEach((q, i) =>
      byText.set(`${q.question}\n${q.evidence}`, [...(byText.get(`${q.question}\n${q.evidence}`) ?? []), i]),
    );
    const twins = [...byText.values()].find((v) => v.length > 1);
    expect(twins, 'mini-dev repeats a question').toBeDefined();
    const rows = twins!.map((i) =>
      JSON.stringify({
        input: `Question: ${raw[i]!.question}\nEvidence: ${raw[i]!.evidence}`,
        output: '```sql\nSELECT 1\n```',
        score: 0,
        step: 5,
      }),
    );
    const dump = await readSeriesDump('5.jsonl', new Blob([rows.join('\n') + '\n']), questions);
    const note = pairingNote(dump.steps[0]!.pairing!);
    expect(note).toMatch(/^0 of 2 rows paired; 2 not: 2 matches several questions by question text/);
  });
});
