/**
 * A generation run over the real OpenAI-compatible engine against a local server speaking the
 * protocol (tests/helpers/openai-server.ts): n native in one request per question, several
 * questions in flight, every sample extracted, scored and recorded with its generation data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiEngine } from '../../src/adapters/engines/openai-engine.ts';
import type { DatabaseContext } from '../../src/core/prompt/build-prompt.ts';
import { REASONING_V1 } from '../../src/core/prompt/templates.ts';
import { remainingJobs, runGeneration } from '../../src/core/run/generation.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';
import type { EvalItem, ItemResult, Question } from '../../src/core/types.ts';
import { startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.ts';
import { ranResult } from '../helpers/item-results.ts';

let server: OpenAiServer;
beforeAll(async () => {
  server = await startOpenAiServer({ fingerprint: 'fp_test_1' });
});
afterAll(async () => {
  await server?.close();
});

const db: DatabaseContext = {
  dbId: 'lib',
  sampleRows: 0,
  hasDescriptionFiles: false,
  tables: [
    { name: 'books', createSql: 'CREATE TABLE books (id INTEGER)', columns: ['id'], sample: null, description: null },
  ],
};
const questions: Question[] = Array.from({ length: 5 }, (_, i) => ({
  questionId: i,
  dbId: 'lib',
  question: `question ${i}?`,
  evidence: 'e',
  goldSql: 'SELECT 1;',
  difficulty: 'moderate',
}));
const evaluate = async (items: EvalItem[]): Promise<ItemResult[]> =>
  items.map((it) => ranResult(it, it.predSql.trim() === it.goldSql ? 1 : 0));

describe('generation run over the OpenAI-compatible engine (local server)', () => {
  it('asks each question once with n = 2, four questions in flight, and records every sample', async () => {
    const engine = createOpenAiEngine({ baseUrl: server.url, model: 'test-model' });
    await engine.load({ id: 'test-model' });
    const before = server.requests.length;
    const stored: SampleRecord[] = [];
    const out = await runGeneration(
      {
        engine: 'openai',
        model: { id: 'test-model', source: server.url },
        template: REASONING_V1,
        params: { n: 2, temperature: 0.7, topP: 1, maxTokens: 64, seed: 3, stop: [], logprobs: false },
      },
      { fence: 'last', rewardFormula: 'ex' },
      remainingJobs(
        { indices: [0, 1, 2, 3, 4], questions, gold: questions.map((q) => ({ sql: q.goldSql })), n: 2 },
        new Set(),
      ),
      { engine, database: async () => db, evaluate, store: (s) => stored.push(...s) },
      { signal: new AbortController().signal, doneBefore: 0, total: 10, concurrency: 4 },
    );
    expect(out).toEqual({ kind: 'done' });
    const completions = server.requests.slice(before).filter((r) => r.path.endsWith('/chat/completions'));
    expect(completions).toHaveLength(5);
    expect(completions.every((r) => r.body?.n === 2 && r.body?.model === 'test-model')).toBe(true);
    const sorted = [...stored].sort((a, b) => a.index - b.index || a.sample - b.sample);
    expect(sorted.map((s) => [s.index, s.sample, s.extraction.rule, s.ex])).toEqual(
      [0, 1, 2, 3, 4].flatMap((i) => [
        [i, 0, 'fenced-sql-last', 1],
        [i, 1, 'fenced-sql-last', 0],
      ]),
    );
    const g = sorted[0]!.generation!;
    expect(g).toMatchObject({
      engine: 'openai',
      model: 'test-model',
      templateId: 'reasoning-v1',
      finishReason: 'stop',
      servedModel: 'test-model',
      systemFingerprint: 'fp_test_1',
    });
    // The device: the server, named by the model and fingerprint of its replies (read after each call).
    expect(g.device).toBe('server');
    expect(g.deviceDetail).toMatch(/^model test-model, .*system_fingerprint fp_test_1 at http:\/\/127\.0\.0\.1:\d+$/);
    expect(g.prompt.map((m) => m.role)).toEqual(['system', 'user']);
    expect(g.prompt[1]!.content).toContain('Question: question 0?');
  });
});
