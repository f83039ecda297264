import { describe, expect, it } from 'vitest';
import { GREEDY } from '../../src/core/engine/engine.ts';
import { parsePredictions } from '../../src/core/formats/predictions.ts';
import type { Question } from '../../src/core/types.ts';
import { createReplayEngine, replaySource } from '../../src/adapters/engines/replay-engine.ts';
import { engineContract } from './contract.ts';

const question = (questionId: number): Question => ({ questionId, dbId: 'db', question: 'q', evidence: '', goldSql: 'SELECT 1', difficulty: 'simple' });
const prompt = (questionId: number) => ({ messages: [{ role: 'user' as const, content: 'question' }], questionId });

const jsonl = [
  { question_id: 7, completion: '<think>hmm</think><answer>SELECT 1</answer>' },
  { question_id: 7, completion: 'I cannot answer that.' },
  { question_id: 7, completion: '```sql\nSELECT 3\n```' },
  { question_id: 8, sql: 'SELECT 8' },
]
  .map((o) => JSON.stringify(o))
  .join('\n');

const source = () => replaySource('samples.jsonl', parsePredictions(jsonl, 'samples.jsonl'), [question(7), question(8)]);

engineContract('replay of a JSONL predictions file', () => ({
  create: () => createReplayEngine(source()),
  model: { id: 'samples.jsonl', source: 'samples.jsonl' },
  prompt: prompt(7),
  expectedRules: ['answer-tag', 'none', 'fenced-sql-last'],
}));

describe('replay engine', () => {
  it('serves the recorded samples of a question in order, raw completions as written', async () => {
    const engine = createReplayEngine(source());
    await engine.load({ id: 'samples.jsonl' });
    const out = await engine.generate(prompt(7), { ...GREEDY, n: 3, seed: 5 });
    expect(out.map((c) => c.text)).toEqual(['<think>hmm</think><answer>SELECT 1</answer>', 'I cannot answer that.', '```sql\nSELECT 3\n```']);
    expect(out.map((c) => c.seed)).toEqual([5, 6, 7]);
  });

  it('reports device none once loaded: no model runs', async () => {
    const engine = createReplayEngine(source());
    expect(engine.device()).toBeNull();
    await engine.load({ id: 'samples.jsonl' });
    expect(engine.device()).toEqual({ device: 'none', reason: null });
  });

  it('serves the SQL of a prediction that has no raw completion', async () => {
    const engine = createReplayEngine(source());
    await engine.load({ id: 'samples.jsonl' });
    expect((await engine.generate(prompt(8), GREEDY))[0]!.text).toBe('SELECT 8');
  });

  it('turns missing samples into error samples that name the file and the question', async () => {
    const engine = createReplayEngine(source());
    await engine.load({ id: 'samples.jsonl' });
    const [a, b] = await engine.generate(prompt(8), { ...GREEDY, n: 2 });
    expect(a!.finishReason).toBe('stop');
    expect(b).toMatchObject({ finishReason: 'error', error: 'samples.jsonl has 1 sample(s) for question 8; sample 2 was asked for' });
    const [c] = await engine.generate(prompt(9), GREEDY);
    expect(c).toMatchObject({ finishReason: 'error', error: 'samples.jsonl has no prediction for question 9' });
  });

  it('pairs a positional BIRD predictions file with the questions by position', async () => {
    const bird = JSON.stringify({ '0': 'SELECT a\t----- bird -----\tdb', '1': 'SELECT b\t----- bird -----\tdb', '2': 'SELECT c\t----- bird -----\tdb' });
    const src = replaySource('predict.json', parsePredictions(bird, 'predict.json'), [question(30), question(31)]);
    expect(src.warnings).toEqual(['predict.json: 1 predictions beyond the 2 questions were ignored']);
    const engine = createReplayEngine(src);
    await engine.load({ id: 'predict.json' });
    expect((await engine.generate(prompt(31), GREEDY))[0]!.text).toBe('SELECT b');
  });

  it('needs the question id on the prompt', async () => {
    const engine = createReplayEngine(source());
    await engine.load({ id: 'x' });
    await expect(engine.generate({ messages: [] }, GREEDY)).rejects.toThrow('samples.jsonl: the replay engine needs Prompt.questionId');
  });
});
