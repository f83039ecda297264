/**
 * The rubric scoring service (src/app/rubric-scoring-service.ts) over a small stored run: scores
 * equal to the core's scoreSample on the same samples and verdicts, stored and written into the
 * run's samples with their aggregations; the judge cache replays a second scoring; cancelling;
 * re-aggregating; no judge. The judge is the real Judge and the real OpenAI engine against a
 * local server answering with recorded texts (a test double for a model whose weights cannot run
 * here); the run, dataset and rubric repositories are in-memory test doubles of their ports
 * (IndexedDB does not exist in Node; the browser's run in tests/browser/rubric-view.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DatasetRecord, SampleRubric } from '../../src/app/records.ts';
import type { RubricRepository, StoredRubricRun } from '../../src/app/rubric-ports.ts';
import { createRubricScoringService, type RubricScoringPorts } from '../../src/app/rubric-scoring-service.ts';
import { createOpenAiEngine } from '../../src/adapters/engines/openai-engine.ts';
import { reaggregate } from '../../src/core/rubric/aggregate.ts';
import { birdSample } from '../../src/core/rubric/bird-rubric.ts';
import { Judge } from '../../src/core/rubric/judge.ts';
import { MemoryJudgeCache } from '../../src/core/rubric/judge-cache.ts';
import { validateRubric, type Rubric } from '../../src/core/rubric/model.ts';
import { scoreSample } from '../../src/core/rubric/score.ts';
import { DEFAULT_EXPLICIT_OPTIONS, type RubricScores } from '../../src/core/rubric/scores.ts';
import { executionFacts } from '../../src/core/rubric/sql-checks.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';
import type { Question } from '../../src/core/types.ts';
import { runHeader, sampleRecord } from '../helpers/run-records.ts';
import { section, startJudgeServer, type JudgeServer } from '../rubric/helpers/openai-server.ts';

const MODEL = 'recorded-judge';

/** Recorded answers: a criterion is met when the response aggregates; implicit 8 or 3, Likert 9 or 2 by the same rule. */
function respond(req: { messages: Array<{ role: string; content: string }> }): string {
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  const aggregates = /\b(COUNT|SUM|AVG)\s*\(/i.test(section(req as never, 'response'));
  if (user.includes('<criterion>'))
    return JSON.stringify({ criteria_met: aggregates, explanation: aggregates ? 'aggregates' : 'no aggregate' });
  if (user.includes('<rubric>')) return `{"score": ${aggregates ? 9 : 2}, "explanation": "recorded"}`;
  return `{"score": ${aggregates ? 8 : 3}, "explanation": "recorded"}`;
}

const RUBRIC: Rubric = validateRubric({
  id: 'sql-rubric',
  title: 'SQL rubric',
  items: [
    {
      id: 'agg',
      title: 'Aggregates',
      description: 'Uses COUNT when asked how many.',
      category: 'important',
      weight: 0.7,
      check: { kind: 'judge' },
    },
    {
      id: 'exec',
      title: 'Executes',
      description: '',
      category: 'essential',
      weight: 1,
      check: { kind: 'sql', name: 'executes' },
    },
    {
      id: 'schema',
      title: 'Known tables',
      description: '',
      category: 'optional',
      weight: 0.5,
      check: { kind: 'sql', name: 'schema-only' },
    },
    {
      id: 'no-star',
      title: 'Avoids SELECT *',
      description: '',
      category: 'pitfall',
      weight: 0.9,
      check: { kind: 'regex', pattern: '^(?!.*SELECT\\s+\\*)', flags: 'is', target: 'sql' },
    },
  ],
});

const SCHEMAS = { db: { users: ['id', 'name'] } };
const question = (i: number): Question => ({
  questionId: i,
  dbId: 'db',
  question: `How many users (${i})?`,
  evidence: i === 0 ? 'users are people' : '',
  goldSql: 'SELECT COUNT(*) FROM users',
  difficulty: 'simple',
});
/** Question 0: two samples (right, wrong); question 1: one erroring sample and one whose database is missing. */
const SAMPLES: SampleRecord[] = [
  sampleRecord({
    index: 0,
    sample: 0,
    ex: 1,
    sql: 'SELECT COUNT(id) FROM users',
    goldSql: 'SELECT COUNT(*) FROM users',
  }),
  sampleRecord({ index: 0, sample: 1, ex: 0, sql: 'SELECT * FROM users', goldSql: 'SELECT COUNT(*) FROM users' }),
  sampleRecord({
    index: 1,
    sample: 0,
    ex: 0,
    sql: 'SELECT SUM(x) FROM orders',
    goldSql: 'SELECT COUNT(*) FROM users',
    status: 'error',
    error: 'prediction: no such table: orders',
  }),
  sampleRecord({ index: 1, sample: 1, ex: 0, sql: 'SELECT name FROM users', status: 'missing-db' }),
];
const RUN = runHeader({ id: 'run-1', samplesPerQuestion: 2 });
const DATASET = { id: RUN.dataset.id, questions: [question(0), question(1)] } as Pick<
  DatasetRecord,
  'id' | 'questions'
> as DatasetRecord;

/** Test doubles of the run, dataset and rubric repositories: Maps and arrays in memory. */
function memoryPorts() {
  const stored = new Map<string, StoredRubricRun>();
  const written: SampleRubric[][] = [];
  const cache = new MemoryJudgeCache();
  const schemaReads: string[] = [];
  const repo: RubricRepository = {
    list: async () => [],
    save: async () => undefined,
    remove: async () => undefined,
    saveScores: async (r) => void stored.set(`${r.runId}/${r.rubricId}`, structuredClone(r)),
    getScores: async (runId, rubricId) => stored.get(`${runId}/${rubricId}`),
    cache: () => cache,
  };
  const ports: RubricScoringPorts = {
    runs: {
      samples: async (runId) => (runId === RUN.id ? structuredClone(SAMPLES) : []),
      setSampleRubrics: async (_runId, scored) => {
        written.push(structuredClone([...scored]));
        return scored.length;
      },
    },
    datasets: { get: async (id) => (id === DATASET.id ? DATASET : undefined) },
    databaseSchemas: async (runId) => {
      schemaReads.push(runId);
      return SCHEMAS;
    },
    rubrics: async () => repo,
    now: () => '2026-01-02T00:00:00.000Z',
  };
  return { ports, stored, written, schemaReads };
}

let server: JudgeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function loadJudge() {
  server ??= await startJudgeServer((req) => respond(req));
  const engine = createOpenAiEngine({ baseUrl: server.url, model: MODEL, maxRetries: 0 });
  const model = { id: MODEL, source: server.url };
  await engine.load(model);
  return { engine, model };
}

/** The core's scores of the same samples, with its own judge over the same server and a cache of its own. */
async function coreScores(rubric: Rubric, aggregations: ('explicit' | 'implicit' | 'likert')[], judged: boolean) {
  const judge = judged
    ? new Judge({ engine: (await loadJudge()).engine, model: MODEL, cache: new MemoryJudgeCache() })
    : null;
  const out: RubricScores[] = [];
  for (const s of SAMPLES) {
    const q = DATASET.questions[s.index]!;
    const sample = birdSample({
      question: { question: q.question, evidence: q.evidence, goldSql: s.goldSql },
      sql: s.sql,
      completion: s.completion,
      execution: executionFacts(s),
      schema: SCHEMAS.db,
    });
    out.push(
      await scoreSample(rubric, sample, { aggregations, judge, concurrency: 2, explicit: DEFAULT_EXPLICIT_OPTIONS }),
    );
  }
  return out;
}

const input = (judge: (() => ReturnType<typeof loadJudge>) | null) => ({
  run: RUN,
  rubric: RUBRIC,
  judge,
  withImplicit: true,
  withLikert: true,
  explicit: DEFAULT_EXPLICIT_OPTIONS,
});

describe('the rubric scoring service', () => {
  it('scores every sample as the core does with the same verdicts, stores the result and writes it into the run', async () => {
    const mem = memoryPorts();
    const service = createRubricScoringService(mem.ports);
    const progress: number[] = [];
    let judged: Judge | null = null;
    const result = await service.score(input(loadJudge), {
      onProgress: (p) => progress.push(p.done * 10 + p.total),
      onJudge: (j) => (judged = j),
    });
    const expected = await coreScores(RUBRIC, ['explicit', 'implicit', 'likert'], true);
    expect(result.samples.map((s) => s.scores)).toEqual(expected);
    expect(result.samples.map((s) => [s.index, s.sample])).toEqual(SAMPLES.map((s) => [s.index, s.sample]));
    // The judge's verdicts did vary (so equality is not of constants): met for COUNT and SUM, not for SELECT *.
    expect(result.samples.map((s) => s.scores.criteria.find((c) => c.id === 'agg')?.met)).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect(mem.schemaReads).toEqual(['run-1']);
    expect(judged!.stats.calls).toBeGreaterThan(0);
    expect(progress).toEqual([14, 24, 34, 44]);
    expect(mem.stored.get('run-1/sql-rubric')).toEqual(result);
    expect(result.scoredAt).toBe('2026-01-02T00:00:00.000Z');

    const n = await service.writeIntoRun(result, SAMPLES);
    expect(n).toBe(4);
    const [rows] = mem.written;
    expect(rows!.map((r) => r.rubricScore)).toEqual(expected.map((s) => s.explicit?.score ?? null));
    // Aggregations (EX as the rule reward) for the samples EX scored; none for the one without a database.
    expect(rows!.map((r) => Array.isArray(r.rubric.aggregations))).toEqual([true, true, true, false]);
    const ruleX = rows![1]!.rubric.aggregations?.find((a) => a.id === 'rule-x-judge');
    expect(ruleX?.score).toBe(0); // EX 0
  });

  it('a second scoring replays the judge cache: no new judge call, the same verdicts', async () => {
    const mem = memoryPorts();
    const service = createRubricScoringService(mem.ports);
    const first = await service.score(input(loadJudge));
    const calls = server!.calls;
    const second = await service.score(input(loadJudge));
    expect(server!.calls).toBe(calls);
    const uncached = (r: StoredRubricRun) =>
      JSON.parse(JSON.stringify(r.samples, (k, v) => (k === 'cached' ? undefined : v))) as unknown;
    expect(uncached(second)).toEqual(uncached(first));
    expect(second.samples.some((s) => s.scores.criteria.some((c) => c.cached))).toBe(true);
  });

  it('without a judge: the loader is not asked, judge criteria are skipped, only the explicit score', async () => {
    const mem = memoryPorts();
    const result = await createRubricScoringService(mem.ports).score(input(null));
    expect(result.samples.map((s) => s.scores)).toEqual(await coreScores(RUBRIC, ['explicit'], false));
    expect(result.samples.every((s) => s.scores.implicit === null && s.scores.likert === null)).toBe(true);
    expect(server).toBeNull();
  });

  it('a cancelled scoring stops before the next sample and stores nothing', async () => {
    const mem = memoryPorts();
    const abort = new AbortController();
    const done: number[] = [];
    const scoring = createRubricScoringService(mem.ports).score(input(null), {
      signal: abort.signal,
      onProgress: (p) => {
        done.push(p.done);
        if (p.done === 2) abort.abort();
      },
    });
    await expect(scoring).rejects.toThrow(/cancel/i);
    expect(done).toEqual([1, 2]);
    expect(mem.stored.size).toBe(0);
  });

  it('re-aggregates with new weights as the core does, and refuses when a criterion was reworded', async () => {
    const mem = memoryPorts();
    const service = createRubricScoringService(mem.ports);
    const scored = await service.score(input(null));
    const reweighted: Rubric = {
      ...RUBRIC,
      items: RUBRIC.items.map((i) => (i.id === 'exec' ? { ...i, weight: 0.2 } : i)),
    };
    const options = { ...DEFAULT_EXPLICIT_OPTIONS, unresolved: 'skip' as const };
    const next = await service.reaggregate(scored, reweighted, options);
    expect(next!.samples.map((s) => s.scores)).toEqual(
      scored.samples.map((s) => reaggregate(s.scores, reweighted.items, options)),
    );
    expect(next!.rubric).toEqual(reweighted);
    expect(mem.stored.get('run-1/sql-rubric')).toEqual(next);

    const reworded: Rubric = {
      ...RUBRIC,
      items: RUBRIC.items.map((i) => (i.id === 'agg' ? { ...i, description: 'Uses SUM.' } : i)),
    };
    expect(await service.reaggregate(next!, reworded, options)).toBeNull();
    expect(mem.stored.get('run-1/sql-rubric')).toEqual(next);
  });
});
