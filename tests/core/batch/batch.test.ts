import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import type { SqlPool } from '../../../src/adapters/sql-pool.ts';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { loadDatabaseContext, type DatabaseContext } from '../../../src/core/prompt/build-prompt.ts';
import { BIRD_MINIDEV_V1, REASONING_V1 } from '../../../src/core/prompt/templates.ts';
import {
  batchJsonl,
  batchRequests,
  withPromptHashes,
  makeBatchPlan,
  parseBatchPlan,
  batchPlanJson,
  checkPlanFitsDataset,
  parseCustomId,
  type BatchPlan,
} from '../../../src/core/batch/batch.ts';
import { runBatchImport } from '../../../src/core/batch/batch-engine.ts';
import { batchCoverage, mergeBatchOutputs, parseBatchOutput } from '../../../src/core/batch/batch-output.ts';
import { planReplay, runEvaluation } from '../../../src/core/run/replay.ts';
import { DEFAULT_RUN_CONFIG, type SampleRecord } from '../../../src/core/run/types.ts';
import { evalOptionsOf } from '../../../src/core/run/score-run.ts';
import type { GoldEntry, Question } from '../../../src/core/types.ts';
import { vllmErrorLine, vllmOkLine } from '../../helpers/batch-fixtures.ts';
import { readSharedText, sharedData } from '../../helpers/shared-data.ts';
import { sqljsSchemaSource } from '../../prompt/sqljs-schema-source.ts';

const questions: Question[] = parseQuestions(
  readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'),
  'mini_dev_sqlite.json',
);
const gold: GoldEntry[] = parseGoldSql(
  readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
  'mini_dev_sqlite_gold.sql',
);
const HERE = new Set(['superhero', 'student_club', 'toxicology']);
/** Four mini-dev questions whose databases are in ../shared/data. */
const indices = questions.flatMap((q, i) => (HERE.has(q.dbId) ? [i] : [])).slice(0, 4);

let source: Awaited<ReturnType<typeof sqljsSchemaSource>>;
let pool: SqlPool;
const contexts = new Map<string, Promise<DatabaseContext>>();
const database = (plan: BatchPlan) => (dbId: string) => {
  const key = `${plan.spec.template.id}/${dbId}`;
  if (!contexts.has(key))
    contexts.set(
      key,
      loadDatabaseContext(source, dbId, {
        sampleRows: plan.spec.template.sampleRows,
        descriptions: plan.spec.template.descriptions,
      }),
    );
  return contexts.get(key)!;
};

beforeAll(async () => {
  source = await sqljsSchemaSource(sharedData('bird', 'databases'));
  pool = createNodeSqlPool({ dbRoot: sharedData('bird', 'databases'), workers: 1 });
});
afterAll(async () => {
  source?.close();
  await pool?.dispose();
});

function plan(n = 2, template = BIRD_MINIDEV_V1, contextWindow: number | null = null): BatchPlan {
  return makeBatchPlan({
    spec: {
      model: { id: 'Qwen/Qwen2.5-Coder-7B-Instruct' },
      template,
      params: { n, temperature: 0.8, topP: 0.95, maxTokens: 256, seed: 100, stop: [], logprobs: false },
    },
    contextWindow,
    dataset: { name: 'mini_dev_sqlite.json', questions: null, gold: null },
    indices,
    questions,
    now: new Date('2026-12-01T00:00:00Z'),
  });
}

describe('batch export (OpenAI batch input JSONL)', () => {
  it('writes one request per (question, sample) with a unique custom_id, the chat prompt and seed + sample', async () => {
    const p = plan(3);
    const { lines, tooLong } = await batchRequests(p, questions, database(p));
    expect(tooLong).toEqual([]);
    expect(lines).toHaveLength(indices.length * 3);
    expect(new Set(lines.map((l) => l.custom_id)).size).toBe(lines.length);
    for (const l of lines) {
      const { index, sample } = parseCustomId(l.custom_id)!;
      expect(indices).toContain(index);
      expect(l).toMatchObject({ method: 'POST', url: '/v1/chat/completions' });
      expect(l.body).toMatchObject({
        model: 'Qwen/Qwen2.5-Coder-7B-Instruct',
        temperature: 0.8,
        top_p: 0.95,
        max_tokens: 256,
        seed: 100 + sample,
        n: 1,
      });
      // BIRD's own prompt: one user message with the question and its evidence.
      expect(l.body.messages).toHaveLength(1);
      expect(l.body.messages[0]!.content).toContain(`-- ${questions[index]!.question}`);
      expect(l.body.messages[0]!.content).toContain('CREATE TABLE');
    }
    const text = batchJsonl(lines);
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((t) => JSON.parse(t).custom_id),
    ).toEqual(lines.map((l) => l.custom_id));
  });

  it('round-trips its plan file and refuses a plan without a seed or a model, naming the setting', () => {
    const p = plan();
    expect(parseBatchPlan(batchPlanJson(p), 'in.plan.json')).toEqual(p);
    const noSeed = () =>
      makeBatchPlan({
        ...{ spec: { ...p.spec, params: { ...p.spec.params, seed: null } } },
        contextWindow: null,
        dataset: p.dataset,
        indices,
        questions,
      });
    expect(noSeed).toThrow(/needs an integer seed/);
    expect(() =>
      makeBatchPlan({
        spec: { ...p.spec, model: { id: ' ' } },
        contextWindow: null,
        dataset: p.dataset,
        indices,
        questions,
      }),
    ).toThrow(/model name/);
    expect(() => parseBatchPlan('{"custom_id":"q1-s0"}', 'in.jsonl')).toThrow(
      /in\.jsonl: format must be "rlvr-workbench-batch-plan"/,
    );
  });

  it('leaves out prompts that do not fit the context window and lists them', async () => {
    const p = plan(1, REASONING_V1, 300);
    const { lines, tooLong } = await batchRequests(p, questions, database(p));
    expect(lines.length + tooLong.length).toBe(indices.length);
    expect(tooLong.length).toBeGreaterThan(0);
    for (const t of tooLong) expect(t.tokens).toBeGreaterThan(t.limit!);
  });
});

describe('batch output (vLLM run_batch format)', () => {
  it('keeps text, finish reason, token counts, model and fingerprint; errors per line; lists missing lines', () => {
    const [a, b] = indices;
    const text = [
      vllmOkLine(`q${a}-s0`, 'SELECT 1', {
        finish: 'length',
        promptTokens: 900,
        completionTokens: 256,
        fingerprint: 'fp-1',
        logprobs: [-0.5, -1.5],
      }),
      vllmErrorLine(`q${a}-s1`, "This model's maximum context length is 4096 tokens."),
      JSON.stringify({
        id: 'x',
        custom_id: `q${b}-s1`,
        response: { status_code: 500, request_id: 'r', body: null },
        error: { error: { message: 'engine dead', type: 'InternalServerError', code: 500 } },
      }),
      '{"id": "cut', // a job killed mid-write
      '',
    ].join('\n');
    const out = parseBatchOutput(text, 'out.jsonl');
    expect(out.problems).toEqual(['out.jsonl line 4 is not JSON (a line cut short?): its request counts as missing']);
    const ok = out.results.get(`q${a}-s0`)!.completion;
    expect(ok).toMatchObject({
      text: 'SELECT 1',
      finishReason: 'length',
      tokensIn: 900,
      tokensOut: 256,
      meanLogprob: -1,
      servedModel: 'Qwen/Qwen2.5-Coder-7B-Instruct',
      systemFingerprint: 'fp-1',
    });
    expect(out.results.get(`q${a}-s1`)!.completion).toMatchObject({
      finishReason: 'error',
      error: `out.jsonl line 2 (q${a}-s1): status 400: This model's maximum context length is 4096 tokens.`,
    });
    expect(out.results.get(`q${b}-s1`)!.completion.error).toBe(
      `out.jsonl line 3 (q${b}-s1): status 500: engine dead (500)`,
    );
    const cov = batchCoverage(plan(), out);
    expect(cov.answered).toBe(1);
    expect(cov.failed).toEqual([`q${a}-s1`, `q${b}-s1`]);
    expect(cov.missing).toEqual([`q${b}-s0`, ...indices.slice(2).flatMap((i) => [`q${i}-s0`, `q${i}-s1`])]);
    // The re-run of a failed line, in a second file, wins over the error.
    const merged = mergeBatchOutputs([out, parseBatchOutput(vllmOkLine(`q${a}-s1`, 'SELECT 2'), 'retry.jsonl')]);
    expect(merged.results.get(`q${a}-s1`)!.completion.text).toBe('SELECT 2');
    expect(() => parseBatchOutput(batchJsonl([]) + '{"custom":1}\n', 'in.jsonl')).toThrow(
      /in\.jsonl: no line is a batch output line/,
    );
  });

  it('a non-text content is a failed line, never an answer, and never wins over a good answer to the same custom_id', () => {
    const [a] = indices;
    const numeric = vllmOkLine(`q${a}-s0`, 'x').replace('"content":"x"', '"content":42');
    expect(numeric).toContain('"content":42');
    const alone = parseBatchOutput(numeric, 'out.jsonl').results.get(`q${a}-s0`)!.completion;
    expect(alone).toMatchObject({ finishReason: 'error', text: '' });
    expect(alone.error).toBe(`out.jsonl line 1 (q${a}-s0): choices[0].message.content is number 42, not text`);
    // The good answer first, the numeric one repeated after it, in one file and across two files.
    const oneFile = parseBatchOutput([vllmOkLine(`q${a}-s0`, 'SELECT 1'), numeric].join('\n'), 'out.jsonl');
    expect(oneFile.results.get(`q${a}-s0`)!.completion.text).toBe('SELECT 1');
    expect(oneFile.problems).toEqual([
      `out.jsonl line 2 repeats custom_id q${a}-s0 (first at out.jsonl line 1): the earlier answer is kept`,
    ]);
    const twoFiles = mergeBatchOutputs([
      parseBatchOutput(vllmOkLine(`q${a}-s0`, 'SELECT 1'), 'first.jsonl'),
      parseBatchOutput(numeric, 'retry.jsonl'),
    ]);
    expect(twoFiles.results.get(`q${a}-s0`)!.completion.text).toBe('SELECT 1');
    // A reply without content (null) is still an empty answer, as before.
    const empty = vllmOkLine(`q${a}-s0`, 'x').replace('"content":"x"', '"content":null');
    expect(parseBatchOutput(empty, 'out.jsonl').results.get(`q${a}-s0`)!.completion).toMatchObject({
      finishReason: 'stop',
      text: '',
    });
  });

  it('a plan that repeats a question index, or asks for one beyond the dataset, is refused naming it', () => {
    const p = plan();
    const repeated = JSON.parse(batchPlanJson(p)) as { indices: number[] };
    repeated.indices = [indices[0]!, indices[1]!, indices[0]!];
    expect(() => parseBatchPlan(JSON.stringify(repeated), 'in.plan.json')).toThrow(
      `in.plan.json: indices[2] must be a question index not listed before (indices[0])`,
    );
    expect(() => checkPlanFitsDataset({ indices: [0, 99999] }, questions.length, 'in.plan.json')).toThrow(
      `in.plan.json: asks for question index 99999, but the dataset has ${questions.length} questions (indices 0 to ${questions.length - 1}): use the plan exported from this dataset`,
    );
    expect(() => checkPlanFitsDataset(p, questions.length, 'in.plan.json')).not.toThrow();
  });

  it('re-exports only the missing and failed requests, identical to their lines in the full batch', async () => {
    const p = plan();
    const full = await batchRequests(p, questions, database(p));
    const redo = new Set([`q${indices[0]}-s1`, `q${indices[3]}-s0`]);
    const small = await batchRequests(p, questions, database(p), redo);
    expect(small.lines.map((l) => l.custom_id)).toEqual([...redo]);
    for (const l of small.lines) expect(l).toEqual(full.lines.find((f) => f.custom_id === l.custom_id));
  });
});

describe('batch import → run', () => {
  it('scores the imported completions exactly as a replay of the same completions, keeping errors and missing lines as error samples', async () => {
    const exported = await batchRequests(plan(), questions, database(plan()));
    const { lines } = exported;
    // The plan as written next to the JSONL: the import checks it rebuilds these very prompts.
    const p = withPromptHashes(plan(), exported);
    expect(Object.keys(p.prompts!)).toEqual(indices.map(String));
    // Sample 0 answers with the gold query in a fence, sample 1 with a wrong one; one error line, one missing line.
    const completionOf = (id: string) => {
      const { index, sample } = parseCustomId(id)!;
      return sample === 0 ? `Here it is:\n\`\`\`sql\n${gold[index]!.sql}\n\`\`\`` : 'SELECT 1 WHERE 0';
    };
    const errorId = lines[1]!.custom_id;
    const missingId = lines[2]!.custom_id;
    const outText =
      lines
        .filter((l) => l.custom_id !== missingId)
        .reverse()
        .map((l) =>
          l.custom_id === errorId
            ? vllmErrorLine(l.custom_id, 'boom')
            : vllmOkLine(l.custom_id, completionOf(l.custom_id), { fingerprint: 'fp-7' }),
        )
        .join('\n') + '\n';
    const output = parseBatchOutput(outText, 'out.jsonl');
    const config = { ...DEFAULT_RUN_CONFIG };
    const samples: SampleRecord[] = [];
    const outcome = await runBatchImport(p, { questions, gold, output, files: 'out.jsonl' }, config, {
      database: database(p),
      evaluate: (items, signal) => pool.evaluate(items, evalOptionsOf(config), { signal }),
      store: (s) => samples.push(...s),
    });
    expect(outcome).toEqual({ kind: 'done' });
    expect(samples).toHaveLength(indices.length * 2);
    const key = (s: { index: number; sample?: number }) => `q${s.index}-s${s.sample ?? 0}`;
    const byId = new Map(samples.map((s) => [key(s), s]));
    expect(byId.get(errorId)!.generation).toMatchObject({
      finishReason: 'error',
      error: expect.stringMatching(/boom/),
    });
    expect(byId.get(missingId)!.generation!.error).toMatch(
      new RegExp(`no line with custom_id ${missingId} in out\\.jsonl`),
    );
    expect(byId.get(errorId)!.ex).toBe(0);
    const answered = samples.filter((s) => s.generation!.finishReason !== 'error');
    for (const s of answered) {
      expect(s.generation).toMatchObject({
        engine: 'batch',
        model: 'Qwen/Qwen2.5-Coder-7B-Instruct',
        systemFingerprint: 'fp-7',
        tokensIn: 321,
        tokensOut: 17,
        seed: 100 + s.sample,
      });
      // The device: the servers that ran the batch, named by the model and fingerprint the lines report.
      expect(s.generation).toMatchObject({
        device: 'server',
        deviceDetail: 'batch output out.jsonl; model Qwen/Qwen2.5-Coder-7B-Instruct; system_fingerprint fp-7',
      });
      expect(s.generation!.prompt).toEqual(lines.find((l) => l.custom_id === key(s))!.body.messages);
    }

    // The same completions as a predictions file, replayed.
    const preds = answered
      .map((s) => JSON.stringify({ question_id: s.questionId, completion: completionOf(key(s)) }))
      .join('\n');
    const replay = planReplay({ predictions: { name: 'preds.jsonl', text: preds }, gold, questions });
    const ev = await runEvaluation(replay.items, evalOptionsOf(config), { executor: pool });
    const replayed = new Map(ev.results.map((r, i) => [replay.items[i]!.questionId, r] as const));
    // Per question the replay numbers its samples 0.. in file order, so compare by question and SQL.
    for (const s of answered) {
      const r = ev.results.find(
        (_x, i) => replay.items[i]!.questionId === s.questionId && replay.items[i]!.predSql === s.sql,
      );
      expect(r, key(s)).toBeDefined();
      expect({ ex: s.ex, softF1: s.softF1, status: s.status }).toEqual({
        ex: r!.ex,
        softF1: r!.softF1,
        status: r!.status,
      });
    }
    expect(replayed.size).toBe(indices.length);
    const correct = answered.filter((s) => s.ex === 1).length;
    expect(correct).toBe(ev.results.filter((r) => r.ex === 1).length);
    expect(correct).toBeGreaterThan(0);

    // A plan whose prompt does not match what the import rebuilds (other databases, another
    // template text) is refused, naming the question, instead of recording the wrong prompt.
    const tampered = { ...p, prompts: { ...p.prompts, [String(indices[1])]: 'f'.repeat(64) } };
    await expect(
      runBatchImport(tampered, { questions, gold, output, files: 'out.jsonl' }, config, {
        database: database(p),
        evaluate: (items, signal) => pool.evaluate(items, evalOptionsOf(config), { signal }),
        store: () => undefined,
      }),
    ).rejects.toThrow(
      new RegExp(`out\\.jsonl: the prompt of question position ${indices[1]} .* differs from the one exported`),
    );
  }, 60_000);
});
