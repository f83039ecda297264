/**
 * RaR runs (src/core/rubric/rar-run.ts) end to end over the OpenAI protocol: the shipped example
 * dataset, a policy and a judge on one local server on 127.0.0.1 that answers with recorded
 * texts (a test double for the models, whose weights cannot run here), the real OpenAI engine
 * and the real judge. Checks scores against scoring each completion alone, exactly-once resume
 * after an interruption, replayed completions and a policy failure naming the question.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiEngine } from '../../src/adapters/engines/openai-engine.ts';
import { GREEDY } from '../../src/core/engine/engine.ts';
import { Judge } from '../../src/core/rubric/judge.ts';
import { MemoryJudgeCache } from '../../src/core/rubric/judge-cache.ts';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import {
  RAR_POLICY_SYSTEM,
  pairCompletions,
  rarKey,
  replayCompletions,
  runRar,
  type RarRunOptions,
  type RarSample,
} from '../../src/core/rubric/rar-run.ts';
import { scoreSample } from '../../src/core/rubric/score.ts';
import { DEFAULT_EXPLICIT_OPTIONS } from '../../src/core/rubric/scores.ts';
import { ROOT } from '../helpers/cli.ts';
import { section, startJudgeServer, type ChatRequest, type JudgeServer } from './helpers/openai-server.ts';

const DATASET = path.join(ROOT, 'public/rubrics/example-rar.jsonl');
const COMPLETIONS = path.join(ROOT, 'public/rubrics/example-completions.jsonl');
const rows = parseRarJsonl(readFileSync(DATASET, 'utf8'), 'example-rar.jsonl');
const exampleText = readFileSync(COMPLETIONS, 'utf8');

/** Answers of the recorded policy per question: the example completions of its row, in turn. */
const answers = new Map<string, string[]>();
for (const j of pairCompletions(exampleText, 'example-completions.jsonl', rows))
  answers.set(j.row.question, [...(answers.get(j.row.question) ?? []), j.completion]);

/** Recorded judge: a completion that says "probably" or "air bubbles" meets only negative-weight items; others meet the positive ones. */
function respond(
  req: ChatRequest,
  turn: Map<string, number>,
  failOn: string | null,
): string | { status: number; body: string } {
  const system = req.messages.find((m) => m.role === 'system')?.content ?? '';
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  if (system === RAR_POLICY_SYSTEM) {
    if (failOn && user.includes(failOn))
      return { status: 400, body: '{"error":{"message":"prompt rejected by the test server"}}' };
    const list = answers.get(user) ?? ['I do not know.'];
    const k = turn.get(user) ?? 0;
    turn.set(user, k + 1);
    return list[k % list.length]!;
  }
  const response = section(req, 'response');
  const bad = /probably|air bubbles|I do not know/.test(response);
  if (user.includes('<criterion>')) {
    const pitfall = /Pitfall/i.test(section(req, 'criterion'));
    return JSON.stringify({ criteria_met: bad ? pitfall : !pitfall, explanation: 'recorded' });
  }
  if (user.includes('<rubric>')) return `{"score": ${bad ? 2 : 9}, "explanation": "recorded"}`;
  return `{"score": ${bad ? 3 : 8}, "explanation": "recorded"}`;
}

/** Scores without the `cached` flags (a judge answer read from the cache is the same answer). */
const uncached = <T>(x: T): T => JSON.parse(JSON.stringify(x, (k, v) => (k === 'cached' ? undefined : v))) as T;

let server: JudgeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function setup(failOn: string | null = null) {
  const turn = new Map<string, number>();
  server = await startJudgeServer((req) => respond(req, turn, failOn));
  const policy = createOpenAiEngine({ baseUrl: server.url, model: 'recorded-policy', maxRetries: 0 });
  await policy.load({ id: 'recorded-policy', source: server.url });
  const judgeEngine = createOpenAiEngine({ baseUrl: server.url, model: 'recorded-judge', maxRetries: 0 });
  await judgeEngine.load({ id: 'recorded-judge', source: server.url });
  const judge = new Judge({ engine: judgeEngine, model: 'recorded-judge', cache: new MemoryJudgeCache() });
  const base = (write: RarRunOptions['write'], done = new Set<string>()): RarRunOptions => ({
    rows,
    samples: 2,
    policy: { kind: 'engine', engine: policy, params: { ...GREEDY, temperature: 0.7, seed: 11, maxTokens: 256 } },
    judge,
    aggregations: ['explicit', 'implicit', 'likert'],
    explicit: DEFAULT_EXPLICIT_OPTIONS,
    weighting: 'as-given',
    done,
    write,
  });
  return { judge, base };
}

describe('RaR runs: generate with an engine, judge with another, every sample stored once', { timeout: 60_000 }, () => {
  it("scores each generated sample exactly as scoring that completion alone, with the row's own rubric", async () => {
    const ok = rows;
    const { judge, base } = await setup();
    const stored: RarSample[] = [];
    const progress: number[] = [];
    const outcome = await runRar({
      ...base(async (s) => void stored.push(...s)),
      onProgress: (p) => progress.push(p.done),
    });
    expect(outcome).toBe('done');
    expect(stored.map((s) => rarKey(s.index, s.sample))).toEqual(
      ok.flatMap((r) => [rarKey(r.index, 0), rarKey(r.index, 1)]),
    );
    expect(progress.at(-1)).toBe(ok.length * 2);
    for (const s of stored) {
      const row = rows[s.index]!;
      expect(s.rowId).toBe(row.id);
      expect(s.generation).toMatchObject({ finishReason: 'stop', tokensIn: 10 });
      const alone = await scoreSample(
        row.rubric,
        { question: row.question, reference: row.referenceAnswer, completion: s.completion },
        { judge },
      );
      expect(uncached(s.scores)).toEqual(uncached(alone));
      expect(s.scores.criteria).toHaveLength(row.rubric.items.length);
    }
    // The bad answers get low implicit scores, the good ones high: the judge read each completion.
    const chest = stored.filter((s) => s.rowId === 'med-chest-pain');
    expect(chest.map((s) => s.scores.implicit?.score)).toEqual([8 / 9, 1 / 9]);
    expect(chest[0]!.scores.explicit!.score!).toBeGreaterThan(chest[1]!.scores.explicit!.score!);
  });

  it('interrupted after two questions and resumed, it ends with the samples of an uninterrupted run, none generated twice', async () => {
    const { base } = await setup();
    const whole: RarSample[] = [];
    await runRar(base(async (s) => void whole.push(...s)));
    const wholeCalls = server!.requests.filter((r) => r.messages[0]?.content === RAR_POLICY_SYSTEM).length;
    await server!.close();

    const again = await setup();
    const kept = new Map<string, RarSample>();
    let writes = 0;
    const closingTab = async (s: RarSample[]) => {
      if (++writes > 2) throw new Error('the tab was closed');
      for (const x of s) kept.set(rarKey(x.index, x.sample), x);
    };
    await expect(runRar(again.base(closingTab))).rejects.toThrow('the tab was closed');
    expect(kept.size).toBe(4);
    const before = server!.requests.filter((r) => r.messages[0]?.content === RAR_POLICY_SYSTEM).length;
    const outcome = await runRar(
      again.base(async (s) => {
        for (const x of s) {
          expect(kept.has(rarKey(x.index, x.sample))).toBe(false);
          kept.set(rarKey(x.index, x.sample), x);
        }
      }, new Set(kept.keys())),
    );
    expect(outcome).toBe('done');
    const after = server!.requests.filter((r) => r.messages[0]?.content === RAR_POLICY_SYSTEM).length;
    // Only the questions not stored were asked again (the third one was generated before the tab closed).
    expect(after - before).toBe(wholeCalls - 4);
    const byKey = (xs: Iterable<RarSample>) =>
      [...xs]
        .map(({ generation: _g, ...rest }) => uncached(rest))
        .sort((a, b) => a.index - b.index || a.sample - b.sample);
    expect(byKey(kept.values())).toEqual(byKey(whole));
  });

  it('a question the policy fails on stops the run with a message naming it; earlier questions stay written', async () => {
    const { base } = await setup('propane');
    const stored: RarSample[] = [];
    await expect(runRar(base(async (s) => void stored.push(...s)))).rejects.toThrow(
      /the policy failed on question "sci-propane-combustion": .*prompt rejected by the test server/,
    );
    expect([...new Set(stored.map((s) => s.rowId))]).toEqual(rows.slice(0, 4).map((r) => r.id));
  });

  it("replays a completions file: each line is a sample of its row, scored with that row's rubric", async () => {
    const { base } = await setup();
    const jobs = pairCompletions(exampleText, 'example-completions.jsonl', rows);
    const stored: RarSample[] = [];
    const outcome = await runRar({
      ...base(async (s) => void stored.push(...s)),
      samples: 4,
      policy: { kind: 'replay', completions: replayCompletions(jobs) },
    });
    expect(outcome).toBe('done');
    expect(stored.map((s) => [s.rowId, s.sample, s.completion])).toEqual(
      [...jobs]
        .sort((a, b) => a.row.index - b.row.index || a.sample - b.sample)
        .map((j) => [j.row.id, j.sample, j.completion]),
    );
    expect(stored.every((s) => s.generation === null)).toBe(true);
  });
});
