/**
 * The RaR run service (src/app/rubric-run-service.ts) over the shipped example dataset: the run
 * header it stores (name, policy record with the replayed file's sha256, judge, planned count),
 * samples equal to the core's runRar on the same inputs, the lock, resume after a cancel, a full
 * disk, and refusals. The judge is the real Judge and the real OpenAI engine against a local
 * server answering with recorded texts (a test double for a model whose weights cannot run
 * here); the repository is an in-memory test double of the RarRepository port (IndexedDB and Web
 * Locks do not exist in Node; the browser's repository runs in tests/browser/rar-runs.test.ts).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RarDatasetRecord, RarRunHeader, StoredRarSample } from '../../src/app/rar-records.ts';
import type { RarRepository } from '../../src/app/rubric-ports.ts';
import { createRubricRunService, type NewRarRunInput, type RubricRunPorts } from '../../src/app/rubric-run-service.ts';
import { createOpenAiEngine } from '../../src/adapters/engines/openai-engine.ts';
import { GREEDY } from '../../src/core/engine/engine.ts';
import { Judge } from '../../src/core/rubric/judge.ts';
import { MemoryJudgeCache } from '../../src/core/rubric/judge-cache.ts';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import {
  RAR_POLICY_PROMPT_VERSION,
  RAR_POLICY_SYSTEM,
  pairCompletions,
  replayCompletions,
  runRar,
  type RarSample,
} from '../../src/core/rubric/rar-run.ts';
import { DEFAULT_EXPLICIT_OPTIONS } from '../../src/core/rubric/scores.ts';
import { ROOT } from '../helpers/cli.ts';
import { section, startJudgeServer, type JudgeServer } from '../rubric/helpers/openai-server.ts';

const DATASET = path.join(ROOT, 'public/rubrics/example-rar.jsonl');
const COMPLETIONS = path.join(ROOT, 'public/rubrics/example-completions.jsonl');
const datasetText = readFileSync(DATASET, 'utf8');
const rows = parseRarJsonl(datasetText, 'example-rar.jsonl');
const completionsText = readFileSync(COMPLETIONS, 'utf8');

/** Recorded answers: the policy says the same per question; the judge passes a completion unless it hedges. */
function respond(req: { messages: Array<{ role: string; content: string }> }): string {
  const system = req.messages.find((m) => m.role === 'system')?.content ?? '';
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  if (system === RAR_POLICY_SYSTEM) return `Answer to: ${user.slice(0, 40)}`;
  const bad = /probably|air bubbles|Answer to/.test(section(req as never, 'response'));
  if (user.includes('<criterion>')) {
    const pitfall = /Pitfall/i.test(section(req as never, 'criterion'));
    return JSON.stringify({ criteria_met: bad ? pitfall : !pitfall, explanation: 'recorded' });
  }
  if (user.includes('<rubric>')) return `{"score": ${bad ? 2 : 9}, "explanation": "recorded"}`;
  return `{"score": ${bad ? 3 : 8}, "explanation": "recorded"}`;
}

/** Test double of the RarRepository port: Maps in memory, a Set for the locks, an optional full disk. */
function memoryRarRepository(dataset: RarDatasetRecord) {
  const runs = new Map<string, RarRunHeader>();
  const samples = new Map<string, StoredRarSample>();
  const locks = new Set<string>();
  const quota = { fullAfterWrites: Infinity, writes: 0 };
  const repo: RarRepository = {
    importDataset: async () => dataset,
    listDatasets: async () => [dataset],
    getDataset: async (id) => (id === dataset.id ? dataset : undefined),
    deleteDataset: async () => undefined,
    listRuns: async () => [...runs.values()],
    getRun: async (id) => runs.get(id),
    samples: async (runId) =>
      [...samples.values()].filter((s) => s.runId === runId).sort((a, b) => a.index - b.index || a.sample - b.sample),
    deleteRun: async (id) => void runs.delete(id),
    activeRunIds: async () => [...locks],
    putRun: async (run) => void runs.set(run.id, structuredClone(run)),
    sampleKeys: async (runId) =>
      [...samples.values()].filter((s) => s.runId === runId).map((s) => ({ index: s.index, sample: s.sample })),
    putSamples: async (runId, xs) => {
      if (++quota.writes > quota.fullAfterWrites) throw new DOMException('full', 'QuotaExceededError');
      for (const s of xs) samples.set(`${runId}/${s.index}/${s.sample}`, { ...structuredClone(s), runId });
    },
    lockRun: async (runId) => {
      if (locks.has(runId)) return null;
      locks.add(runId);
      return () => void locks.delete(runId);
    },
  };
  return { repo, runs, locks, quota };
}

const dataset: RarDatasetRecord = {
  id: 'ds-1',
  name: 'Example',
  file: { name: 'example-rar.jsonl', sha256: 'not-checked', bytes: datasetText.length },
  importedAt: '2026-01-01T00:00:00.000Z',
  rows,
};

let server: JudgeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function setup() {
  server = await startJudgeServer((req) => respond(req));
  const engine = (model: string) => createOpenAiEngine({ baseUrl: server!.url, model, maxRetries: 0 });
  const judgeEngine = engine('recorded-judge');
  await judgeEngine.load({ id: 'recorded-judge', source: server.url });
  const judgeLoaded = { engine: judgeEngine, model: { id: 'recorded-judge', source: server.url } };
  const mem = memoryRarRepository(dataset);
  const cache = new MemoryJudgeCache();
  let ids = 0;
  const ports: RubricRunPorts = {
    rar: mem.repo,
    judgeCache: () => cache,
    hashText: async (text) => ({
      sha256: createHash('sha256').update(text).digest('hex'),
      bytes: Buffer.byteLength(text),
    }),
    newId: () => `run-${++ids}`,
    now: () => '2026-01-02T00:00:00.000Z',
  };
  return { mem, ports, engine, judgeLoaded, service: createRubricRunService(ports) };
}

const replayInput = (judge: NewRarRunInput['judge']): NewRarRunInput => ({
  name: '',
  datasetId: dataset.id,
  policy: { kind: 'replay', file: { name: 'example-completions.jsonl', text: async () => completionsText } },
  judge,
  samplesPerQuestion: 4,
  aggregations: ['explicit', 'implicit', 'likert'],
  explicit: DEFAULT_EXPLICIT_OPTIONS,
  weighting: 'as-given',
});

const plain = (xs: readonly RarSample[]) =>
  xs.map(({ index, sample, rowId, completion, scores }) =>
    JSON.parse(
      JSON.stringify({ index, sample, rowId, completion, scores }, (k, v) => (k === 'cached' ? undefined : v)),
    ),
  );

describe('the RaR run service', { timeout: 60_000 }, () => {
  it('a replay run stores the header of its file and judge, and samples equal to runRar on the same inputs', async () => {
    const { mem, service, judgeLoaded } = await setup();
    const judges: Judge[] = [];
    const progress: number[] = [];
    const done = await service.start(
      replayInput(async () => judgeLoaded),
      { onJudge: (j) => judges.push(j), onProgress: (p) => progress.push(p.done) },
    );
    const jobs = pairCompletions(completionsText, 'example-completions.jsonl', rows);
    const perRow = replayCompletions(jobs);
    expect(done).toMatchObject({
      id: 'run-1',
      name: 'Example · example-completions.jsonl · judged by recorded-judge',
      status: 'done',
      error: null,
      dataset: { id: dataset.id, name: 'Example', file: dataset.file },
      judge: { model: 'recorded-judge' },
      planned: rows.reduce((n, r) => n + Math.min(4, perRow.get(r.index)?.length ?? 0), 0),
      policy: {
        kind: 'replay',
        file: {
          name: 'example-completions.jsonl',
          sha256: createHash('sha256').update(completionsText).digest('hex'),
          bytes: Buffer.byteLength(completionsText),
        },
        completions: Object.fromEntries(perRow),
      },
    });
    expect(judges).toHaveLength(1);
    expect(mem.locks.size).toBe(0);
    expect(progress.at(-1)).toBe(done.planned);

    // The same run through the core alone.
    const direct: RarSample[] = [];
    await runRar({
      rows,
      samples: 4,
      policy: { kind: 'replay', completions: perRow },
      judge: new Judge({ engine: judgeLoaded.engine, model: 'recorded-judge', cache: new MemoryJudgeCache() }),
      aggregations: ['explicit', 'implicit', 'likert'],
      explicit: DEFAULT_EXPLICIT_OPTIONS,
      weighting: 'as-given',
      done: new Set(),
      write: async (s) => void direct.push(...s),
    });
    const stored = await mem.repo.samples(done.id);
    expect(stored).toHaveLength(done.planned);
    expect(plain(stored)).toEqual(plain(direct));
  });

  it('an engine run records the policy engine and model it loaded, and asks for the judge only after the policy', async () => {
    const { mem, service, engine, judgeLoaded } = await setup();
    const order: string[] = [];
    const policy = engine('recorded-policy');
    const params = { ...GREEDY, n: 1, maxTokens: 64, seed: 3 };
    const done = await service.start({
      ...replayInput(async () => (order.push('judge'), judgeLoaded)),
      name: '  mine  ',
      samplesPerQuestion: 1,
      policy: {
        kind: 'engine',
        load: async () => {
          order.push('policy');
          await policy.load({ id: 'recorded-policy', source: server!.url });
          return { engine: policy, model: { id: 'recorded-policy', source: server!.url } };
        },
        params,
      },
    });
    expect(order).toEqual(['policy', 'judge']);
    expect(done).toMatchObject({
      name: 'mine',
      status: 'done',
      planned: rows.length,
      policy: {
        kind: 'engine',
        engine: 'openai',
        model: { id: 'recorded-policy', source: server!.url },
        prompt: RAR_POLICY_PROMPT_VERSION,
        params,
      },
    });
    const stored = await mem.repo.samples(done.id);
    expect(stored.map((s) => s.completion)).toEqual(rows.map((r) => `Answer to: ${r.question.slice(0, 40)}`));
  });

  it('cancelled midway, the run is stored as cancelled; resumed, it judges only what is missing and ends like an uninterrupted run', async () => {
    const whole = await setup();
    const full = await whole.service.start(replayInput(async () => whole.judgeLoaded));
    const expected = plain(await whole.mem.repo.samples(full.id));
    await server!.close();

    const { mem, service, judgeLoaded } = await setup();
    const abort = new AbortController();
    const cancelled = await service.start(
      replayInput(async () => judgeLoaded),
      {
        signal: abort.signal,
        onProgress: (p) => {
          if (p.done >= 4) abort.abort();
        },
      },
    );
    expect(cancelled.status).toBe('cancelled');
    const kept = (await mem.repo.samples(cancelled.id)).length;
    expect(kept).toBeGreaterThanOrEqual(4);
    expect(kept).toBeLessThan(cancelled.planned);
    const judgeCalls = server!.requests.length;

    const written: number[] = [];
    const realPut = mem.repo.putSamples;
    mem.repo.putSamples = async (runId, xs) => {
      written.push(...xs.map((x) => x.index * 100 + x.sample));
      return realPut(runId, xs);
    };
    const resumed = await service.resume(cancelled.id, { policy: null, judge: judgeLoaded });
    expect(resumed.status).toBe('done');
    expect(written).toHaveLength(cancelled.planned - kept);
    expect(server!.requests.length).toBeGreaterThan(judgeCalls);
    expect(plain(await mem.repo.samples(cancelled.id))).toEqual(expected);
  });

  it('refuses a run whose lock another tab holds, a resume without its policy engine, and names the question a full disk stopped', async () => {
    const { mem, service, judgeLoaded } = await setup();
    // A full disk at the second question: the run fails naming it, the first question's samples stay.
    mem.quota.fullAfterWrites = 1;
    await expect(service.start(replayInput(null))).rejects.toThrow(
      new RegExp(
        `Browser storage is full: the samples of question "${rows[1]!.id}" were not stored \\(the \\d+ stored before are kept`,
      ),
    );
    const failed = (await mem.repo.listRuns())[0]!;
    expect(failed).toMatchObject({ status: 'failed', error: expect.stringContaining('Browser storage is full') });
    expect(mem.locks.size).toBe(0);

    // Another tab holds the lock.
    mem.quota.fullAfterWrites = Infinity;
    const release = await mem.repo.lockRun(failed.id);
    await expect(service.resume(failed.id, { policy: null, judge: judgeLoaded })).rejects.toThrow(
      `run "${failed.name}" is running in another tab`,
    );
    release!();

    // An engine run resumed without its policy engine.
    const engineRun: RarRunHeader = {
      ...failed,
      id: 'engine-run',
      policy: {
        kind: 'engine',
        engine: 'openai',
        model: { id: 'p' },
        params: GREEDY,
        prompt: RAR_POLICY_PROMPT_VERSION,
      },
    };
    await mem.repo.putRun(engineRun);
    await expect(service.resume('engine-run', { policy: null, judge: null })).rejects.toThrow(
      'needs its policy engine (openai · p) loaded',
    );
    await expect(service.resume('gone', { policy: null, judge: null })).rejects.toThrow(
      'this rubric run is no longer stored',
    );
    await expect(service.start({ ...replayInput(null), datasetId: 'gone' })).rejects.toThrow(
      'the rubric dataset is no longer stored: import it again',
    );
  });
});
