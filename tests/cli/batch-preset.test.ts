/**
 * `batch export --preset`, `batch import` of a preset plan, and `harness --preset`, on BIRD
 * mini-dev's real questions and databases. The exported messages are checked against the texts
 * the ORIGINAL Python produced (tests/core/prompt/fixtures/preset-prompts.json, how it was made:
 * tests/core/prompt/fixtures/README.md), not against our own renderer. The batch output lines are
 * written from vLLM's documented schema (tests/helpers/batch-fixtures.ts); the references for the
 * verdicts are `eval` runs of the SQL each preset's rule should take.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCustomId, type BatchRequestLine } from '../../src/core/batch/batch.ts';
import {
  ARCTIC_TEXT2SQL_R1_PRESET,
  OMNISQL_PRESET,
  presetFingerprint,
  type PolicyPreset,
} from '../../src/core/prompt/presets.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { planFileOf, readBatchRequests, vllmOkLine } from '../helpers/batch-fixtures.ts';
import { jsonlFile, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, minidevQuestions, sharedData } from '../helpers/shared-data.ts';
import { predictionsOf, skyrlLines, skyrlResponse } from '../helpers/trainer-dumps.ts';

interface FixtureMessage {
  role: string;
  sha256: string;
  chars: number;
}
const fixture = JSON.parse(
  readFileSync(new URL('../core/prompt/fixtures/preset-prompts.json', import.meta.url), 'utf8'),
) as { presets: Record<string, Array<{ questionId: number; prefill: string; messages: FixtureMessage[] }>> };
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

const all = minidevQuestions();
const goldLines = readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '');
const dbRoot = sharedData('bird', 'databases');
const tables = sharedData('bird', 'minidev', 'dev_tables.json');

/** A dataset of the given mini-dev questions (in this order) and its gold file, as temporary files. */
function subset(ids: number[]): { dataset: string; gold: string; golds: string[] } {
  const at = ids.map((id) => all.findIndex((q) => q.question_id === id));
  const dataset = tempFile('questions.json');
  writeFileSync(dataset, JSON.stringify(at.map((i) => all[i])));
  const gold = tempFile('gold.sql');
  writeFileSync(gold, at.map((i) => goldLines[i]).join('\n') + '\n');
  return { dataset, gold, golds: at.map((i) => all[i]!.SQL) };
}
const flagsOf = (d: { dataset: string; gold: string }) => [
  '--dataset',
  d.dataset,
  '--gold',
  d.gold,
  '--db-root',
  dbRoot,
];

/** The request's messages (the prefill aside) equal the original's text for the question, byte for byte. */
function expectOriginalMessages(preset: PolicyPreset, questionId: number, line: BatchRequestLine): void {
  const item = fixture.presets[preset.id]!.find((x) => x.questionId === questionId)!;
  expect(item, `fixture of ${preset.id} q${questionId}`).toBeDefined();
  const sent = item.prefill ? line.body.messages.slice(0, -1) : line.body.messages;
  expect(sent.map((m) => m.role)).toEqual(item.messages.map((m) => m.role));
  sent.forEach((m, i) =>
    expect(sha(m.content), `${preset.id} q${questionId} message ${i}`).toBe(item.messages[i]!.sha256),
  );
  if (item.prefill) expect(line.body.messages.at(-1)).toEqual({ role: 'assistant', content: item.prefill });
}

/** (question id, sample, ex) of each sample of a run file. */
const verdicts = (file: string): Array<[number, number, number]> =>
  parseRunFile(readFileSync(file, 'utf8'), 'run.json').samples.map((s) => [s.questionId, s.sample, s.ex]);

/** `eval` of explicit SQL per (question, sample): the reference verdicts. */
async function evalOf(
  d: { dataset: string; gold: string },
  rows: Array<{ question_id: number; sql: string }>,
): Promise<Array<[number, number, number]>> {
  const out = tempFile('ref.run.json');
  const run = await runCli([
    'eval',
    '--predictions',
    jsonlFile('ref.jsonl', rows),
    ...flagsOf(d),
    '--no-cache',
    '--run-out',
    out,
  ]);
  expect(run.code, run.stderr).toBe(0);
  return verdicts(out);
}

describe('batch export --preset', () => {
  const ids = [1312, 717, 195]; // student_club, superhero, toxicology

  it("omnisql-v1 with its self-consistency: OmniSQL's own prompt for 3 questions, 1 greedy + 8 at T=0.8, its stop token and max tokens; the plan records the preset", async () => {
    const d = subset(ids);
    const out = tempFile('omnisql.jsonl');
    const exp = await runCli([
      'batch',
      'export',
      ...flagsOf(d),
      '--tables',
      tables,
      '--model',
      'seeklhy/OmniSQL-7B',
      '--out',
      out,
      '--preset',
      'omnisql-v1',
      '--self-consistency',
      '--seed',
      '7',
    ]);
    expect(exp.code, exp.stderr).toBe(0);
    expect(exp.stdout).toContain('wrote 27 requests (3 questions x 9 samples)');
    const lines = readBatchRequests(out);
    expect(lines).toHaveLength(27);
    for (const line of lines) {
      const { index, sample } = parseCustomId(line.custom_id)!;
      expectOriginalMessages(OMNISQL_PRESET, ids[index]!, line);
      const greedy = sample === 0;
      expect(line.body).toMatchObject({
        model: 'seeklhy/OmniSQL-7B',
        temperature: greedy ? 0 : 0.8,
        top_p: 1,
        max_tokens: 2048,
        seed: 7 + sample,
        n: 1,
        stop_token_ids: [151645],
      });
      expect(line.body.stop).toBeUndefined();
      expect(line.body.continue_final_message).toBeUndefined();
    }
    const plan = readJson(planFileOf(out));
    expect(plan.version).toBe(2);
    expect(plan.preset).toEqual({
      id: 'omnisql-v1',
      fingerprint: presetFingerprint(OMNISQL_PRESET),
      content: JSON.parse(JSON.stringify(OMNISQL_PRESET)),
      selfConsistency: true,
    });
  });

  it("arctic-text2sql-r1-v1: the system + user messages of Arctic's infer.py and its prefill continued (vLLM's continue_final_message); tables.json found beside the questions", async () => {
    const out = tempFile('arctic.jsonl');
    const exp = await runCli([
      'batch',
      'export',
      ...minidevFlags(),
      '--model',
      'Snowflake/Arctic-Text2SQL-R1-7B',
      '--out',
      out,
      '--preset',
      'arctic-text2sql-r1-v1',
      '--limit',
      '3',
    ]);
    expect(exp.code, exp.stderr).toBe(0);
    const lines = readBatchRequests(out);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      const q = all[parseCustomId(line.custom_id)!.index]!;
      expectOriginalMessages(ARCTIC_TEXT2SQL_R1_PRESET, q.question_id, line);
      expect(line.body).toMatchObject({
        temperature: 0,
        max_tokens: 8192,
        stop_token_ids: [151645],
        continue_final_message: true,
        add_generation_prompt: false,
      });
    }
  });

  for (const id of ['skyrl-sql-v1', 'verl-text2sql-v1'])
    it(`${id}, a multi-turn preset, is refused by name with what to do, and no file is written`, async () => {
      const out = tempFile('multi.jsonl');
      const exp = await runCli([
        'batch',
        'export',
        ...minidevFlags(),
        '--model',
        'm',
        '--out',
        out,
        '--preset',
        id,
        '--limit',
        '2',
      ]);
      expect(exp.code).not.toBe(0);
      expect(exp.stderr).toContain(`preset ${id} is multi-turn`);
      expect(exp.stderr).toContain(`generate --endpoint URL --model NAME --preset ${id}`);
      expect(existsSync(out)).toBe(false);
      expect(existsSync(planFileOf(out))).toBe(false);
    });

  it('a flag the preset fixes is refused beside it, naming the flag', async () => {
    const exp = await runCli([
      'batch',
      'export',
      ...minidevFlags(),
      '--model',
      'm',
      '--out',
      tempFile('x.jsonl'),
      '--preset',
      'omnisql-v1',
      '--temperature',
      '0.2',
    ]);
    expect(exp.code).not.toBe(0);
    expect(exp.stderr).toContain('--temperature');
    expect(exp.stderr).toContain('is fixed by --preset omnisql-v1');
  });
});

describe('batch import of a preset plan', () => {
  it("omnisql-v1: each completion's SQL is OmniSQL's last ```sql block (a bare ``` block is none), scored like eval of that SQL; the run records the preset", async () => {
    const ids = [1312, 717, 195];
    const d = subset(ids);
    const out = tempFile('omni.jsonl');
    const exp = await runCli([
      'batch',
      'export',
      ...flagsOf(d),
      '--tables',
      tables,
      '--model',
      'seeklhy/OmniSQL-7B',
      '--out',
      out,
      '--preset',
      'omnisql-v1',
      '--n',
      '3',
    ]);
    expect(exp.code, exp.stderr).toBe(0);
    const lines = readBatchRequests(out);
    expect(lines).toHaveLength(9);
    const fence = (sql: string) => '```sql\n' + sql + '\n```';
    // Sample 0: a draft then the gold (the last block wins); sample 1: the gold then a wrong
    // query; sample 2: the gold in a fence without `sql` (OmniSQL's parse_response finds none).
    const completion = (index: number, sample: number) => {
      const gold = d.golds[index]!;
      if (sample === 0) return `Draft:\n${fence('SELECT 1')}\nFixed:\n${fence(gold)}`;
      if (sample === 1) return `${fence(gold)}\nOn second thought:\n${fence('SELECT 0')}`;
      return '```\n' + gold + '\n```';
    };
    const expected = (index: number, sample: number) =>
      sample === 0 ? d.golds[index]! : sample === 1 ? 'SELECT 0' : '';
    const output = tempFile('omni.out.jsonl');
    writeFileSync(
      output,
      lines
        .map((l) => {
          const { index, sample } = parseCustomId(l.custom_id)!;
          return vllmOkLine(l.custom_id, completion(index, sample));
        })
        .join('\n') + '\n',
    );
    const runOut = tempFile('omni.run.json');
    const imp = await runCli([
      'batch',
      'import',
      '--plan',
      planFileOf(out),
      '--output',
      output,
      ...flagsOf(d),
      '--tables',
      tables,
      '--run-out',
      runOut,
    ]);
    expect(imp.code, imp.stderr).toBe(0);
    const run = parseRunFile(readFileSync(runOut, 'utf8'), 'run.json');
    expect(run.run.preset?.id).toBe('omnisql-v1');
    expect(run.run.preset?.fingerprint).toBe(presetFingerprint(OMNISQL_PRESET));
    expect(run.run.source).toMatchObject({ engine: 'batch', template: 'omnisql-v1' });
    for (const s of run.samples) {
      expect(s.sql, `q${s.questionId} s${s.sample}`).toBe(expected(s.index, s.sample));
      expect(s.extraction.rule).toBe(s.sample === 2 ? 'none' : 'fenced-sql-last');
      expect(s.generation?.error).toBeUndefined();
    }
    const reference = await evalOf(
      d,
      ids.flatMap((id, index) => [0, 1, 2].map((sample) => ({ question_id: id, sql: expected(index, sample) }))),
    );
    expect(verdicts(runOut)).toEqual(reference);
    // The gold in sample 0 is right on every question: the last block was the one scored.
    expect(run.samples.filter((s) => s.sample === 0).map((s) => s.ex)).toEqual([1, 1, 1]);
  });

  it('arctic-text2sql-r1-v1: the prefill is put back before each completion, the rebuilt prompts match the exported ones, and a missing line is re-exported exactly', async () => {
    const out = tempFile('arctic2.jsonl');
    const exp = await runCli([
      'batch',
      'export',
      ...minidevFlags(),
      '--model',
      'a',
      '--out',
      out,
      '--preset',
      'arctic-text2sql-r1-v1',
      '--limit',
      '3',
    ]);
    expect(exp.code, exp.stderr).toBe(0);
    const lines = readBatchRequests(out);
    const [missing, ...answered] = lines;
    const output = tempFile('arctic2.out.jsonl');
    const body = (i: number) => ` I read the schema. </think>\n<answer>\n\`\`\`sql\n${all[i]!.SQL}\n\`\`\`\n</answer>`;
    writeFileSync(
      output,
      answered.map((l) => vllmOkLine(l.custom_id, body(parseCustomId(l.custom_id)!.index))).join('\n') + '\n',
    );
    const runOut = tempFile('arctic2.run.json');
    const missingOut = tempFile('arctic2.missing.jsonl');
    const imp = await runCli([
      'batch',
      'import',
      '--plan',
      planFileOf(out),
      '--output',
      output,
      ...minidevFlags(),
      '--run-out',
      runOut,
      '--missing-out',
      missingOut,
    ]);
    expect(imp.code, imp.stderr).toBe(0);
    expect(readBatchRequests(missingOut)).toEqual([missing]);
    const run = parseRunFile(readFileSync(runOut, 'utf8'), 'run.json');
    expect(run.samples).toHaveLength(3);
    const lost = run.samples.find((s) => s.index === parseCustomId(missing!.custom_id)!.index)!;
    expect(lost.generation?.error).toContain(`no line with custom_id ${missing!.custom_id}`);
    for (const s of run.samples.filter((x) => x !== lost)) {
      expect(s.generation?.error).toBeUndefined();
      expect(s.completion).toBe(ARCTIC_TEXT2SQL_R1_PRESET.prefill + body(s.index));
      expect(s.ex).toBe(1);
    }
  });
});

describe('harness --preset', () => {
  it("skyrl-sql-v1: each completion's SQL is SkyRL's <solution> under its format rule (no <think>, or two <solution>s: no SQL), scored like eval of that SQL; the default rules take the <solution> anyway", async () => {
    // SkyRL-style episodes (tests/helpers/trainer-dumps.ts) in a verl validation file: the verl
    // reader has no SkyRL rule of its own, so the preset's rule is what changes the SQL.
    const preds = predictionsOf(0).slice(0, 12);
    const broken = (k: number) => k % 4 === 1 || k % 4 === 2;
    const response = (sql: string, k: number) => {
      const text = skyrlResponse(sql, k % 3);
      if (k % 4 === 1) return text.replace(/<think>[^]*?<\/think>/g, ''); // no <think>: format failure
      if (k % 4 === 2) return text.replace('<solution>', '<solution>SELECT 1</solution>\n<solution>'); // two solutions
      return text;
    };
    const file = jsonlFile(
      'skyrl-in-verl.jsonl',
      preds.map(({ q, sql }, k) => ({
        input: `<|im_start|>user\n${q.question}<|im_end|>`,
        output: response(sql, k),
        gts: q.SQL,
        score: 0,
        step: 3,
        question_id: q.question_id,
      })),
    );
    const d = {
      dataset: sharedData('bird', 'minidev', 'mini_dev_sqlite.json'),
      gold: sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
    };
    const out = tempFile('skyrl-preset.run.json');
    const run = await runCli([
      'harness',
      '--completions',
      file,
      ...flagsOf(d),
      '--preset',
      'skyrl-sql-v1',
      '--run-out',
      out,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('preset skyrl-sql-v1: skyrl-solution');
    const file1 = parseRunFile(readFileSync(out, 'utf8'), 'run.json');
    expect(file1.run.preset?.id).toBe('skyrl-sql-v1');
    for (const s of file1.samples) {
      const k = preds.findIndex((p) => p.q.question_id === s.questionId);
      expect(s.sql, `q${s.questionId}`).toBe(broken(k) ? '' : preds[k]!.sql);
      expect(s.extraction.rule).toBe(broken(k) ? 'none' : 'solution-tag');
    }
    const reference = await evalOf(
      d,
      preds.map(({ q, sql }, k) => ({ question_id: q.question_id, sql: broken(k) ? '' : sql })),
    );
    expect(verdicts(out)).toEqual(reference);

    // Without the preset the default rules take a <solution> whatever its format: the broken
    // episodes' right answers then count, which SkyRL's evaluation does not.
    const plain = tempFile('skyrl-plain.run.json');
    const run2 = await runCli(['harness', '--completions', file, ...flagsOf(d), '--run-out', plain]);
    expect(run2.code, run2.stderr).toBe(0);
    const noPreset = parseRunFile(readFileSync(plain, 'utf8'), 'run.json');
    expect(noPreset.run.preset).toBeUndefined();
    const brokenRight = noPreset.samples.filter(
      (s) => broken(preds.findIndex((p) => p.q.question_id === s.questionId)) && s.ex === 1,
    );
    expect(brokenRight.length).toBeGreaterThan(0);
  });

  it("skyrl-sql-v1 on a SkyRL eval dump: the preset's rule reads the episode without the chat template's tokens, as SkyRL's reward does, and gives the dump's own verdicts", async () => {
    const file = tempFile('bird.jsonl');
    writeFileSync(file, skyrlLines(0).slice(0, 12).join('\n') + '\n');
    const d = {
      dataset: sharedData('bird', 'minidev', 'mini_dev_sqlite.json'),
      gold: sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
    };
    const [withPreset, without] = [tempFile('a.run.json'), tempFile('b.run.json')];
    for (const [out, extra] of [
      [withPreset, ['--preset', 'skyrl-sql-v1']],
      [without, []],
    ] as const) {
      const run = await runCli([
        'harness',
        '--completions',
        file,
        '--from',
        'skyrl',
        ...flagsOf(d),
        ...extra,
        '--run-out',
        out,
      ]);
      expect(run.code, run.stderr).toBe(0);
    }
    const a = parseRunFile(readFileSync(withPreset, 'utf8'), 'a.json').samples;
    const b = parseRunFile(readFileSync(without, 'utf8'), 'b.json').samples;
    // Episodes with probes (an observation, then <|im_end|> before the next <think>) keep their solution.
    expect(a.map((s) => [s.questionId, s.sql, s.ex])).toEqual(b.map((s) => [s.questionId, s.sql, s.ex]));
    expect(a.every((s) => s.extraction.rule === 'solution-tag')).toBe(true);
  });
});
