/**
 * The app's run start (the import worker's pair job) with a trainer's dump: a one-step verl
 * file of real mini-dev questions is mapped, with the mapping report among the warnings, and
 * pairs like the same completions as JSONL; a dump with several steps is refused with what to do.
 */
import { describe, expect, it } from 'vitest';
import { pairRunPredictions } from '../../src/adapters/import/pair-run.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { readSharedText } from '../helpers/shared-data.ts';

const miniQ = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json');
const miniG = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'mini_dev_sqlite_gold.sql');
const some = miniQ.filter((q) => q.dbId === 'superhero').slice(0, 12);
const verlLine = (q: (typeof some)[number], step: number) =>
  JSON.stringify({
    input: `<|im_start|>user\n-- ${q.dbId}\n${q.question}\n${q.evidence}<|im_end|>\n<|im_start|>assistant\n`,
    output: `\`\`\`sql\n${q.goldSql}\n\`\`\``,
    gts: q.goldSql,
    score: 1,
    step,
  });

describe('a verl generations dump in the new-run form', () => {
  it('maps every row to its question (reported) and pairs like the JSONL twin', async () => {
    const text =
      some.map((q) => verlLine(q, 30)).join('\n') +
      '\n' +
      JSON.stringify({
        input: 'Question: not a BIRD question at all',
        output: 'SELECT 1',
        gts: 'SELECT 1',
        score: 0,
        step: 30,
      }) +
      '\n';
    const r = await pairRunPredictions({
      predictionsName: '30.jsonl',
      predictionsText: text,
      questions: miniQ,
      gold: miniG,
      fence: 'last',
      strict: false,
    });
    const twin = some
      .map((q) => JSON.stringify({ question_id: q.questionId, completion: `\`\`\`sql\n${q.goldSql}\n\`\`\`` }))
      .join('\n');
    const ref = await pairRunPredictions({
      predictionsName: '30.jsonl',
      predictionsText: twin,
      questions: miniQ,
      gold: miniG,
      fence: 'last',
      strict: false,
    });
    expect(r.items).toEqual(ref.items);
    expect(r.items).toHaveLength(12);
    expect(r.warnings[0]).toBe(
      "30.jsonl (verl): step 30: 13 rows, mapped 12 by question text; its own mean score 0.9231; 1 unmatched: 30.jsonl:13 (no question's text is in its prompt and its ground truth is no question's gold SQL)",
    );
  });

  it('refuses a dump with several steps, naming them and what to do', async () => {
    const text = [...some.map((q) => verlLine(q, 10)), ...some.map((q) => verlLine(q, 20))].join('\n');
    await expect(
      pairRunPredictions({
        predictionsName: 'val.jsonl',
        predictionsText: text,
        questions: miniQ,
        gold: miniG,
        fence: 'last',
      }),
    ).rejects.toThrow(
      /^val\.jsonl: holds 2 training steps \(10, 20\): the app makes one run per file\. Import it on the Training runs page.* harness command/,
    );
  });
});
