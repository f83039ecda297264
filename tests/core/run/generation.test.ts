import { describe, expect, it } from 'vitest';
import type { Completion, Engine, Prompt, SamplingParams } from '../../../src/core/engine/engine.ts';
import { EngineError } from '../../../src/core/engine/engine-error.ts';
import type { DatabaseContext } from '../../../src/core/prompt/build-prompt.ts';
import { BIRD_MINIDEV_V1 } from '../../../src/core/prompt/templates.ts';
import {
  PAUSE,
  exWithInterval,
  quickCheckIndices,
  remainingJobs,
  runGeneration,
  wilsonInterval,
  type GenerationSpec,
} from '../../../src/core/run/generation.ts';
import { DEFAULT_RUN_CONFIG, type RunHeader, type SampleRecord } from '../../../src/core/run/types.ts';
import { runFileJson, toRunFile } from '../../../src/core/runfile/export.ts';
import { parseRunFile } from '../../../src/core/runfile/run-file.ts';
import type { EvalItem, ItemResult, Question } from '../../../src/core/types.ts';
import { ranResult } from '../../helpers/item-results.ts';

const db: DatabaseContext = {
  dbId: 'lib',
  sampleRows: 0,
  hasDescriptionFiles: false,
  tables: [
    {
      name: 'books',
      createSql: 'CREATE TABLE books (id INTEGER, genre TEXT)',
      columns: ['id', 'genre'],
      sample: null,
      description: null,
    },
  ],
};
const questions: Question[] = [0, 1, 2].map((i) => ({
  questionId: 10 + i,
  dbId: 'lib',
  question: `question ${i}?`,
  evidence: '',
  goldSql: `SELECT ${i}`,
  difficulty: 'simple',
}));
const gold = questions.map((q) => ({ sql: q.goldSql }));

/** Answers `SELECT <questionId - 10>` in a fence (correct) for sample 0, prose for the others. */
function fakeEngine(opts: { nativeN?: boolean; loseGpuAt?: number } = {}): Engine & { calls: SamplingParams[] } {
  const calls: SamplingParams[] = [];
  return {
    kind: 'fake',
    calls,
    capabilities: { streaming: true, nativeN: opts.nativeN ?? false, logprobs: false, tokenize: false },
    async load() {},
    async generate(prompt: Prompt, params: SamplingParams, hooks) {
      calls.push(params);
      if (opts.loseGpuAt !== undefined && calls.length > opts.loseGpuAt)
        throw new EngineError('GPU_LOST', 'the GPU device was lost');
      const out: Completion[] = [];
      for (let i = 0; i < params.n; i++) {
        const seed = params.seed === null ? null : params.seed + i;
        const text =
          seed === 0 || seed === 100
            ? '```sql\nSELECT ' + ((prompt.questionId ?? 10) - 10) + '\n```'
            : 'Once upon a time';
        hooks?.onToken?.(i, text);
        out.push({ text, finishReason: 'stop', tokensIn: 40, tokensOut: 5, latencyMs: 3, seed, meanLogprob: null });
      }
      return out;
    },
    contextWindow: () => 4096,
    async interrupt() {},
    async unload() {},
  };
}

const evaluate = async (items: EvalItem[]): Promise<ItemResult[]> =>
  items.map((it) => ranResult(it, it.predSql === it.goldSql ? 1 : 0));

function spec(n: number, seed = 0): GenerationSpec {
  return {
    engine: 'fake',
    model: { id: 'm' },
    template: BIRD_MINIDEV_V1,
    params: { n, temperature: 0.7, topP: 1, maxTokens: 64, seed, stop: [], logprobs: false },
  };
}

describe('generation runs (pure loop over ports)', () => {
  it('generates each missing sample with seed + sample, extracts, scores and records prompt and tokens', async () => {
    const stored: SampleRecord[] = [];
    const jobs = remainingJobs({ indices: [0, 1, 2], questions, gold, n: 2 }, new Set(['1/0']));
    expect(jobs.map((j) => [j.index, j.samples])).toEqual([
      [0, [0, 1]],
      [1, [1]],
      [2, [0, 1]],
    ]);
    const engine = fakeEngine();
    const out = await runGeneration(
      spec(2),
      { fence: 'last', rewardFormula: 'ex' },
      jobs,
      {
        engine,
        database: async () => db,
        evaluate,
        store: (s) => stored.push(...s),
      },
      { signal: new AbortController().signal, doneBefore: 1, total: 6 },
    );
    expect(out).toEqual({ kind: 'done' });
    expect(engine.calls.map((c) => [c.n, c.seed])).toEqual([
      [1, 0],
      [1, 1],
      [1, 1],
      [1, 0],
      [1, 1],
    ]);
    expect(stored.map((s) => [s.index, s.sample, s.ex, s.extraction.rule])).toEqual([
      [0, 0, 1, 'fenced-sql-last'],
      [0, 1, 0, 'none'],
      [1, 1, 0, 'none'],
      [2, 0, 1, 'fenced-sql-last'],
      [2, 1, 0, 'none'],
    ]);
    const g = stored[0]!.generation!;
    expect(g.prompt[0]!.content).toContain('-- question 0?');
    expect(g).toMatchObject({
      tokensIn: 40,
      tokensOut: 5,
      seed: 0,
      engine: 'fake',
      model: 'm',
      finishReason: 'stop',
      templateId: 'bird-minidev-v1',
    });
    expect(g.fit).toMatchObject({ counter: 'chars/4', fits: true, limit: 4096 - 64 });
    expect(stored[0]!.completion).toContain('SELECT 0');
  });

  it("a run file keeps each sample's generation record (prompt, fit, tokens, seed, engine, model)", async () => {
    const stored: SampleRecord[] = [];
    await runGeneration(
      spec(2),
      { fence: 'last', rewardFormula: 'ex' },
      remainingJobs({ indices: [0, 1], questions, gold, n: 2 }, new Set()),
      {
        engine: fakeEngine(),
        database: async () => db,
        evaluate,
        store: (s) => stored.push(...s),
      },
      { signal: new AbortController().signal, doneBefore: 0, total: 4 },
    );
    const header: RunHeader = {
      id: 'g',
      name: 'gen',
      createdAt: 'x',
      updatedAt: 'x',
      status: 'done',
      source: { kind: 'generation', engine: 'fake', model: 'm', template: 'bird-minidev-v1' },
      dataset: { id: 'd', name: 'd', questions: { name: 'q.json', sha256: 'a', bytes: 1 }, gold: null, databases: {} },
      subset: { description: 'two', indices: [0, 1] },
      config: DEFAULT_RUN_CONFIG,
      samplesPerQuestion: 2,
      executor: 'test',
    };
    const back = parseRunFile(runFileJson(toRunFile(header, stored)), 'gen.run.json');
    expect(back.run.source).toEqual(header.source);
    expect(back.samples.map((s) => s.generation)).toEqual(stored.map((s) => s.generation));
  });

  it('keeps several questions in flight when asked (server engines), each sample stored once', async () => {
    const many: Question[] = Array.from({ length: 9 }, (_, i) => ({
      ...questions[0]!,
      questionId: 10 + i,
      question: `q${i}?`,
      goldSql: `SELECT ${i}`,
    }));
    let inFlight = 0;
    let most = 0;
    const base = fakeEngine();
    const engine: Engine = {
      ...base,
      async generate(p, params, hooks) {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return base.generate(p, params, hooks);
      },
    };
    const stored: SampleRecord[] = [];
    const out = await runGeneration(
      spec(1),
      { fence: 'last', rewardFormula: 'ex' },
      remainingJobs(
        { indices: many.map((_, i) => i), questions: many, gold: many.map((q) => ({ sql: q.goldSql })), n: 1 },
        new Set(),
      ),
      {
        engine,
        database: async () => db,
        evaluate,
        store: (s) => stored.push(...s),
      },
      { signal: new AbortController().signal, doneBefore: 0, total: 9, concurrency: 3 },
    );
    expect(out).toEqual({ kind: 'done' });
    expect(most).toBe(3);
    expect(stored.map((s) => s.index).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(stored.every((s) => s.ex === 1)).toBe(true);
  });

  it('asks an engine with native n once per question', async () => {
    const engine = fakeEngine({ nativeN: true });
    const stored: SampleRecord[] = [];
    await runGeneration(
      spec(3, 100),
      { fence: 'last', rewardFormula: 'ex' },
      remainingJobs({ indices: [0], questions, gold, n: 3 }, new Set()),
      {
        engine,
        database: async () => db,
        evaluate,
        store: (s) => stored.push(...s),
      },
      { signal: new AbortController().signal, doneBefore: 0, total: 3 },
    );
    expect(engine.calls.map((c) => c.n)).toEqual([3]);
    expect(stored.map((s) => s.generation!.seed)).toEqual([100, 101, 102]);
  });

  it('pauses on GPU_LOST with a message, keeping the questions already stored', async () => {
    const stored: SampleRecord[] = [];
    const out = await runGeneration(
      spec(1),
      { fence: 'last', rewardFormula: 'ex' },
      remainingJobs({ indices: [0, 1, 2], questions, gold, n: 1 }, new Set()),
      {
        engine: fakeEngine({ loseGpuAt: 1 }),
        database: async () => db,
        evaluate,
        store: (s) => stored.push(...s),
      },
      { signal: new AbortController().signal, doneBefore: 0, total: 3 },
    );
    expect(out.kind).toBe('gpu-lost');
    expect(out.kind === 'gpu-lost' && out.message).toMatch(
      /device was lost.*samples generated so far are kept.*resume/,
    );
    expect(stored.map((s) => s.index)).toEqual([0]);
  });

  it('stops between samples on pause, reporting progress', async () => {
    const ctl = new AbortController();
    const stored: SampleRecord[] = [];
    const out = await runGeneration(
      spec(1),
      { fence: 'last', rewardFormula: 'ex' },
      remainingJobs({ indices: [0, 1, 2], questions, gold, n: 1 }, new Set()),
      {
        engine: fakeEngine(),
        database: async () => db,
        evaluate,
        store: (s) => {
          stored.push(...s);
          ctl.abort(PAUSE);
        },
      },
      { signal: ctl.signal, doneBefore: 0, total: 3 },
    );
    expect(out).toEqual({ kind: 'paused', message: 'paused by the user' });
    expect(stored).toHaveLength(1);
  });

  it('quick check: 50 seeded questions among those with a database, in gold order; all when fewer', () => {
    const avail = Array.from({ length: 140 }, (_, i) => i * 2);
    const a = quickCheckIndices(avail);
    expect(a).toHaveLength(50);
    expect(a).toEqual(quickCheckIndices(avail));
    expect(a).toEqual([...a].sort((x, y) => x - y));
    expect(a.every((x) => avail.includes(x))).toBe(true);
    expect(quickCheckIndices([5, 3, 9])).toEqual([3, 5, 9]);
  });

  it('Wilson interval', () => {
    const [lo, hi] = wilsonInterval(25, 50);
    expect(lo).toBeCloseTo(0.366, 3);
    expect(hi).toBeCloseTo(0.634, 3);
    expect(wilsonInterval(0, 3)[0]).toBe(0);
    expect(wilsonInterval(0, 3)[1]).toBeCloseTo(0.5615, 3);
    expect(
      exWithInterval([
        { index: 0, sample: 0, ex: 1 },
        { index: 0, sample: 1, ex: 0 },
        { index: 1, sample: 0, ex: 0 },
      ]),
    ).toMatchObject({ ex: 0.5, n: 2, correct: 1 });
  });
});
