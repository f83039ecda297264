/**
 * `harness`: a fixture per trainer/harness format, built from the fields each project writes
 * (docs/formats.md cites the source), is mapped to the demo questions, evaluated, and scores
 * exactly like the same completions given to `eval` as JSONL; unmatched rows are reported.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { BlobWriter, TextReader, ZipWriter } from '@zip.js/zip.js';
import { describe, expect, it } from 'vitest';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { jsonlFile, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { lmEvalSampleRow } from '../helpers/harness-rows.ts';
import { demoFile as demo, demoFlags, readBirdQuestions } from '../helpers/shared-data.ts';

const questions = readBirdQuestions(demo('questions.json'));
const preds = JSON.parse(readFileSync(demo('predictions.json'), 'utf8')) as Record<string, string>;
const predSql = (i: number) => preds[String(i)]!.split(BIRD_SEPARATOR)[0]!;
/** Step 10 answers question i with question i+1's SQL for even i; step 20 with the demo's own SQL. */
const answer = (step: number, i: number) => (step === 10 && i % 2 === 0 ? predSql((i + 1) % 20) : predSql(i));
const chat = (q: (typeof questions)[number]) =>
  `<|im_start|>system\nYou write SQLite.<|im_end|>\n<|im_start|>user\nDatabase: ${q.db_id}\nQuestion: ${q.question}\nHint: ${q.evidence}<|im_end|>\n<|im_start|>assistant\n`;
const base = (completions: string, extra: string[] = []) => [
  'harness',
  '--completions',
  completions,
  ...demoFlags(),
  ...extra,
];

/** (index, sample, ex) of each sample of a run file. */
const samplesOf = (file: string): Array<[number, number, number]> =>
  readJson(file).samples.map((s: { index: number; sample: number; ex: number }) => [s.index, s.sample, s.ex]);

/** `harness` over `file`, writing its run to a temporary `runName`; the run's path, once it exited 0. */
async function harnessRun(file: string, runName: string): Promise<{ out: string; stdout: string; stderr: string }> {
  const out = tempFile(runName);
  const run = await runCli(base(file, ['--run-out', out]));
  expect(run.code, run.stderr).toBe(0);
  return { out, stdout: run.stdout, stderr: run.stderr };
}

/** The same completions as a workbench JSONL file, scored by `eval`: the reference. */
async function evalTwin(
  completions: Array<{ question_id: number; completion: string }>,
): Promise<Array<[number, number, number]>> {
  const file = jsonlFile('twin.jsonl', completions);
  const out = tempFile('twin.run.json');
  const run = await runCli(['eval', '--predictions', file, ...demoFlags(), '--run-out', out]);
  expect(run.code, run.stderr).toBe(0);
  return samplesOf(out);
}

describe('harness: verl validation generations (input, output, gts, score, step)', () => {
  it('makes one run per step, maps rows by the question text in the prompt, lists the unmatched row, and scores like eval', async () => {
    const lines = [10, 20].flatMap((step) =>
      questions.map((q, i) => ({
        input: chat(q),
        output: `Let me think.\n\`\`\`sql\n${answer(step, i)}\n\`\`\``,
        gts: q.SQL,
        score: step === 10 ? 0.5 : 1.0,
        step,
        acc: step === 10 ? 0.5 : 1.0,
      })),
    );
    lines.push({
      input: '<|im_start|>user\nQuestion: How many dragons live in the library?<|im_end|>',
      output: 'SELECT 1',
      gts: 'SELECT 42',
      score: 0,
      step: 20,
      acc: 0,
    });
    const { out, ...run } = await harnessRun(jsonlFile('val_generations.jsonl', lines), 'verl.run.json');
    expect(run.stderr).toContain(
      'val_generations.jsonl (verl): step 10: 20 rows, mapped 20 by question text; its own mean score 0.5000',
    );
    expect(run.stderr).toMatch(
      /step 20: 21 rows, mapped 20 by question text; its own mean score 0\.9524; 1 unmatched: val_generations\.jsonl:41 \(no question's text is in its prompt and its ground truth is no question's gold SQL\)/,
    );
    expect(run.stdout).toContain('val_generations.jsonl step 10 (verl)');
    expect(run.stdout).toContain('val_generations.jsonl step 20 (verl)');
    const step10 = samplesOf(out.replace('.json', '.step-10.json'));
    const step20 = samplesOf(out.replace('.json', '.step-20.json'));
    expect(step10).toEqual(
      await evalTwin(questions.map((q, i) => ({ question_id: q.question_id, completion: lines[i]!.output }))),
    );
    expect(step20).toEqual(
      await evalTwin(questions.map((q, i) => ({ question_id: q.question_id, completion: lines[20 + i]!.output }))),
    );
    expect(step20.filter(([, , ex]: number[]) => ex === 1).length).toBeGreaterThan(
      step10.filter(([, , ex]: number[]) => ex === 1).length,
    );
  });
});

describe('harness: lm-evaluation-harness --log_samples (doc_id, doc, arguments, resps, filtered_resps, filter)', () => {
  it('maps by doc.question_id, keeps the first filter only, takes every raw generation as a sample', async () => {
    const lines = questions.flatMap((q, i) =>
      ['none', 'strict-match'].map((filter) =>
        lmEvalSampleRow(q, {
          docId: i,
          prompt: chat(q),
          genKwargs: { until: ['<|im_end|>'], do_sample: true },
          resps: [`\`\`\`sql\n${predSql(i)}\n\`\`\``, `\`\`\`sql\n${answer(10, i)}\n\`\`\``],
          filtered: filter === 'none' ? predSql(i) : '',
          filter,
          exactMatch: 1.0,
        }),
      ),
    );
    const { out, ...run } = await harnessRun(
      jsonlFile('samples_bird_sql_2025-01-01T00-00-00.jsonl', lines),
      'lm.run.json',
    );
    expect(run.stderr).toContain('(lm-eval): 20 rows, mapped 20 by question_id; its own mean score 1.0000');
    expect(samplesOf(out)).toEqual(
      await evalTwin(
        questions.flatMap((q, i) => [
          { question_id: q.question_id, completion: `\`\`\`sql\n${predSql(i)}\n\`\`\`` },
          { question_id: q.question_id, completion: `\`\`\`sql\n${answer(10, i)}\n\`\`\`` },
        ]),
      ),
    );
  });
});

describe('harness: Inspect eval logs (.eval zip and .json)', () => {
  const sample = (q: (typeof questions)[number], i: number, epoch: number, withId: boolean) => ({
    id: i + 1,
    epoch,
    input: [
      { role: 'system', content: 'You write SQLite.' },
      { role: 'user', content: [{ type: 'text', text: `Question: ${q.question}` }] },
    ],
    target: q.SQL,
    output: {
      model: 'openai/gpt-4o',
      choices: [
        {
          message: { role: 'assistant', content: `\`\`\`sql\n${epoch === 1 ? predSql(i) : answer(10, i)}\n\`\`\`` },
          stop_reason: 'stop',
        },
      ],
    },
    scores: { match: { value: epoch === 1 ? 1 : 0 } },
    metadata: withId ? { question_id: q.question_id } : {},
  });

  it('reads the samples of a .eval zip: epochs are samples, rows map by metadata.question_id or the question text', async () => {
    const zip = new ZipWriter(new BlobWriter('application/zip'));
    await zip.add(
      'header.json',
      new TextReader(JSON.stringify({ version: 2, status: 'success', eval: { task: 'bird_sql' } })),
    );
    for (const [i, q] of questions.entries())
      for (const epoch of [1, 2])
        await zip.add(
          `samples/${i + 1}_epoch_${epoch}.json`,
          new TextReader(JSON.stringify(sample(q, i, epoch, i < 10))),
        );
    const file = tempFile('2025-01-01_bird-sql_abc.eval');
    writeFileSync(file, new Uint8Array(await (await zip.close()).arrayBuffer()));
    const { out, ...run } = await harnessRun(file, 'inspect.run.json');
    expect(run.stderr).toContain(
      '(inspect): 40 rows, mapped 20 by question_id, 20 by question text; its own mean score 0.5000',
    );
    expect(samplesOf(out)).toEqual(
      await evalTwin(
        questions.flatMap((q, i) =>
          [1, 2].map((epoch) => ({
            question_id: q.question_id,
            completion: sample(q, i, epoch, false).output.choices[0]!.message.content,
          })),
        ),
      ),
    );
  });

  it('reads a .json log and lists a sample whose question is not in the dataset', async () => {
    const samples = questions.slice(0, 3).map((q, i) => sample(q, i, 1, true));
    samples.push({
      ...sample(questions[0]!, 0, 1, false),
      input: [{ role: 'user', content: 'Question: something else entirely' }],
      target: 'SELECT nothing',
      id: 99,
    });
    const file = tempFile('log.json');
    writeFileSync(file, JSON.stringify({ version: 2, status: 'success', eval: { task: 'bird_sql' }, samples }));
    const run = await runCli(base(file));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      'log.json (inspect): 4 rows, mapped 3 by question_id; its own mean score 1.0000; 1 unmatched: log.json samples[3]',
    );
  });
});
