/**
 * Generation runs of the app (src/app/generation-run.ts) under a policy preset, over the app's
 * ports in memory with Node's SQL workers and the real mini-dev data (its dev_tables.json stored
 * with the dataset, as the import stores it). The policy is a TEST DOUBLE (`ScriptedPolicy`: no
 * model weights run here): it plays fixed turns (a probe of the gold SQL, then an answer), and
 * records every chat it was sent. What is real: the preset's prompt as the app renders it
 * (compared with the original Python's output, tests/core/prompt/fixtures/preset-prompts.json),
 * the probes on the run's SQL pool, the episodes, the verdicts, the stored plan and the resume.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resumeGenerationRun, startGenerationRun } from '../../src/app/generation-run.ts';
import type { DatasetRecord } from '../../src/app/records.ts';
import type { ChatMessage, Completion, Engine, Prompt, SamplingParams } from '../../src/core/engine/engine.ts';
import { parseTablesJson } from '../../src/core/formats/tables-json.ts';
import {
  OMNISQL_PRESET,
  SKYRL_SQL_PRESET,
  presetFingerprint,
  type PolicyPreset,
} from '../../src/core/prompt/presets.ts';
import { BIRD_MINIDEV_V1 } from '../../src/core/prompt/templates.ts';
import { PAUSE, type GenerationSpec } from '../../src/core/run/generation.ts';
import { DEFAULT_RUN_CONFIG } from '../../src/core/run/types.ts';
import { fileDataset, memoryAppPorts } from '../helpers/memory-app-ports.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS } from '../helpers/series-dumps.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { rejectionOf } from '../helpers/errors.ts';
import { renderPlainChat } from '../../src/core/engine/plain-template.ts';
import { createWebLlmEngine } from '../../src/adapters/engines/webllm-engine.ts';
import type { GpuProbe } from '../../src/core/engine/gpu-verdict.ts';

const fixture = JSON.parse(
  readFileSync(path.join(import.meta.dirname, '..', 'core', 'prompt', 'fixtures', 'preset-prompts.json'), 'utf8'),
) as {
  presets: Record<string, Array<{ questionId: number; messages: Array<{ role: string; sha256: string }> }>>;
};
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The mini-dev dataset as the import stores it: with the entries of its dev_tables.json. */
async function minidev(withTables: boolean): Promise<DatasetRecord> {
  const d = await fileDataset({ questions: MINIDEV_QUESTIONS, gold: MINIDEV_GOLD, dbRoot: DB_ROOT });
  if (!withTables) return d;
  const text = readFileSync(sharedData('bird', 'minidev', 'dev_tables.json'), 'utf8');
  const used = new Set(d.questions.map((q) => q.dbId));
  return { ...d, tables: parseTablesJson(text, 'dev_tables.json').filter((e) => used.has(e.db_id)) };
}

/**
 * TEST DOUBLE of a policy: an engine that plays fixed turns. Multi-turn: turn 1 probes the gold
 * SQL in `<sql>` (stopped there, the stop string cut and named as vLLM does), turn 2 answers
 * `answers[questionId]` in `<solution>`. Single turn: the answer in a ```sql block.
 */
class ScriptedPolicy implements Engine {
  readonly kind: string = 'openai';
  readonly capabilities = { streaming: false, nativeN: false, logprobs: false, tokenize: false };
  readonly chats: Array<{ questionId: number; messages: ChatMessage[]; params: SamplingParams }> = [];
  constructor(
    private readonly gold: Map<number, string>,
    private readonly answers: Map<number, string>,
  ) {}
  async load(): Promise<void> {}
  contextWindow(): number | null {
    return null;
  }
  async interrupt(): Promise<void> {}
  async unload(): Promise<void> {}
  async generate(prompt: Prompt, params: SamplingParams): Promise<Completion[]> {
    const id = prompt.questionId!;
    const messages = prompt.messages.map((m) => ({ ...m }));
    this.chats.push({ questionId: id, messages, params });
    const answer = this.answers.get(id)!;
    const done = (text: string, stopReason?: string): Completion[] => [
      {
        text,
        finishReason: 'stop',
        tokensIn: 100,
        tokensOut: 10,
        latencyMs: 1,
        seed: params.seed,
        meanLogprob: null,
        ...(stopReason ? { stopReason } : {}),
      },
    ];
    if (!params.stop.includes('</sql>')) return done(`Here it is.\n\`\`\`sql\n${answer}\n\`\`\``);
    const first = !messages.some((m) => m.role === 'assistant');
    return first
      ? done(`<think>Look at the data first.</think>\n<sql>${this.gold.get(id)}`, '</sql>')
      : done(`<think>The rows look right.</think>\n<solution>${answer}`, '</solution>');
  }
}

/**
 * TEST DOUBLE of the CPU engine's context: the scripted policy as a `wllama` engine with a
 * context window and a tokenizer of one token per character, which records each text it counted.
 */
class ScriptedPolicyWithContext extends ScriptedPolicy {
  override readonly kind = 'wllama';
  override readonly capabilities = { streaming: false, nativeN: false, logprobs: false, tokenize: true };
  readonly counted: string[] = [];
  window = 0;
  override contextWindow(): number | null {
    return this.window;
  }
  async countTokens(text: string): Promise<number> {
    this.counted.push(text);
    return text.length;
  }
}

function setup(dataset: DatasetRecord, questionIds: number[], wrongFor: number[] = []) {
  const app = memoryAppPorts(dataset, DB_ROOT);
  const indices = questionIds.map((id) => dataset.questions.findIndex((q) => q.questionId === id));
  const gold = new Map(indices.map((i) => [dataset.questions[i]!.questionId, dataset.gold[i]!.sql]));
  const answers = new Map([...gold].map(([id, sql]) => [id, wrongFor.includes(id) ? 'SELECT 1' : sql]));
  return { app, indices, engine: new ScriptedPolicy(gold, answers) };
}

function request(
  dataset: DatasetRecord,
  indices: number[],
  preset: PolicyPreset,
  params: Partial<SamplingParams> = {},
) {
  const spec: GenerationSpec = {
    engine: 'openai',
    model: { id: 'scripted-policy', source: 'test double' },
    template: BIRD_MINIDEV_V1,
    params: { n: 1, temperature: 0, topP: 1, maxTokens: 64, seed: 0, stop: [], logprobs: false, ...params },
    preset,
  };
  return {
    name: `scripted · ${preset.id}`,
    datasetId: dataset.id,
    subset: { description: 'three questions', indices },
    spec,
    config: { ...DEFAULT_RUN_CONFIG, metrics: ['ex' as const] },
  };
}

/** The fixture's messages (the original Python's) of a preset and question: role and sha256. */
const originalMessages = (presetId: string, questionId: number) =>
  fixture.presets[presetId]!.find((q) => q.questionId === questionId)!.messages.map((m) => [m.role, m.sha256]);

describe('app generation runs under a policy preset', () => {
  it("skyrl-sql-v1: the original's prompt, probes on the run's pool, episodes scored by EX; the header keeps the preset; a paused run resumes with the rest only", async () => {
    const dataset = await minidev(true);
    // 1312 (student_club), 717 (superhero), 195 (toxicology): 717 answered wrong.
    const { app, indices, engine } = setup(dataset, [1312, 717, 195], [717]);
    const req = request(dataset, indices, SKYRL_SQL_PRESET, { maxTokens: 48, seed: 5 });
    const pause = new AbortController();
    const first = await startGenerationRun(app.ports, dataset, req, engine, {
      signal: pause.signal,
      onProgress: (p) => {
        if (p.done >= 1) pause.abort(PAUSE);
      },
    });
    expect(first.outcome).toEqual({ kind: 'paused', message: 'paused by the user' });
    expect(first.run.status).toBe('running');
    expect(first.run.source).toEqual({
      kind: 'generation',
      engine: 'openai',
      model: 'scripted-policy',
      template: 'skyrl-sql-v1',
    });
    expect(first.run.preset).toEqual({
      id: 'skyrl-sql-v1',
      fingerprint: presetFingerprint(SKYRL_SQL_PRESET),
      content: SKYRL_SQL_PRESET,
    });
    const plan = (await app.ports.runs.inputs(first.run.id))!.generation!;
    expect(plan.spec.preset).toEqual(SKYRL_SQL_PRESET);
    expect(plan.tables!.map((e) => e.db_id).sort()).toEqual(['student_club', 'superhero', 'toxicology']);
    const afterPause = app.samples(first.run.id).map((s) => s.questionId);
    expect(afterPause).toEqual([1312]);

    const asked = engine.chats.length;
    const resumed = await resumeGenerationRun(app.ports, first.run.id, engine);
    expect(resumed.outcome.kind).toBe('done');
    expect(resumed.run.status).toBe('done');
    // The resume asked only the two questions not stored, two turns each.
    expect(engine.chats.slice(asked).map((c) => c.questionId)).toEqual([717, 717, 195, 195]);

    const samples = app.samples(first.run.id).sort((a, b) => a.questionId - b.questionId);
    expect(samples.map((s) => [s.questionId, s.ex])).toEqual([
      [195, 1],
      [717, 0],
      [1312, 1],
    ]);
    for (const s of samples) {
      const chats = engine.chats.filter((c) => c.questionId === s.questionId);
      // The first turn's chat is the original Python's prompt for this question, byte for byte.
      expect(chats[0]!.messages.map((m) => [m.role, sha(m.content)])).toEqual(
        originalMessages('skyrl-sql-v1', s.questionId),
      );
      // Conversation mode (the engine cannot continue a final message): the probe's observation is a user turn.
      expect(chats[1]!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
      expect(chats.every((c) => c.params.maxTokens === 48 && c.params.seed === 5)).toBe(true);
      expect(chats[0]!.params.stop).toEqual(['</sql>', '</solution>']);
      const e = s.episode!;
      expect([e.turnsUsed, e.endReason, e.formatValid, e.probesFailed]).toEqual([2, 'solution', true, 0]);
      const probe = e.turns[0]!.probe!;
      expect(e.turns[0]!.probeSql).toBe(s.goldSql);
      expect(probe.error).toBeUndefined();
      expect(probe.rows.length).toBeGreaterThan(0);
      expect(e.turns[0]!.observation).toMatch(
        /^\n\n<observation>[\s\S]*You have 4 turns left[\s\S]*<\/observation>\n\n$/,
      );
      expect(chats[1]!.messages[3]!.content).toBe(e.turns[0]!.observation);
      expect(e.finalSql).toBe(s.sql);
      expect(e.presetReward).toBe(s.ex);
      expect(s.generation).toMatchObject({ templateId: 'skyrl-sql-v1', engine: 'openai', model: 'scripted-policy' });
    }
  }, 120_000);

  it("omnisql-v1 (single turn): the original's prompt, the last ```sql block scored", async () => {
    const dataset = await minidev(true);
    const { app, indices, engine } = setup(dataset, [1317, 719], [719]);
    const r = await startGenerationRun(app.ports, dataset, request(dataset, indices, OMNISQL_PRESET), engine);
    expect(r.outcome.kind).toBe('done');
    expect(r.run.preset?.id).toBe('omnisql-v1');
    const samples = app.samples(r.run.id).sort((a, b) => a.questionId - b.questionId);
    expect(samples.map((s) => [s.questionId, s.ex, s.extraction.rule])).toEqual([
      [719, 0, 'fenced-sql-last'],
      [1317, 1, 'fenced-sql-last'],
    ]);
    for (const c of engine.chats) {
      expect(c.messages.map((m) => [m.role, sha(m.content)])).toEqual(originalMessages('omnisql-v1', c.questionId));
      expect(c.params.stopTokenIds).toEqual(OMNISQL_PRESET.stopTokenIds);
    }
  }, 120_000);

  it('refuses, naming the preset and what is missing, a preset the app cannot run on the dataset; nothing is stored', async () => {
    const bare = await minidev(false);
    const { app, indices, engine } = setup(bare, [1312]);
    await expect(startGenerationRun(app.ports, bare, request(bare, indices, SKYRL_SQL_PRESET), engine)).rejects.toThrow(
      /preset skyrl-sql-v1 renders the schema from the dataset's tables\.json .* was imported without one: import the dataset again with its tables\.json \(BIRD: dev_tables\.json\)/,
    );
    const partial = { ...bare, tables: [] };
    await expect(
      startGenerationRun(app.ports, partial, request(partial, indices, OMNISQL_PRESET), engine),
    ).rejects.toThrow(/has no entry for database "student_club"/);
    expect(await app.ports.runs.list()).toEqual([]);
    expect(engine.chats).toEqual([]);
  }, 60_000);

  it("refuses before anything is stored a multi-turn run whose first prompt plus its turns cannot fit the engine's context, naming the prompt's tokens, the context and what to set; runs when it just fits", async () => {
    const dataset = await minidev(true);
    const { app, indices } = setup(dataset, [1312]);
    const gold = new Map([[1312, dataset.gold[indices[0]!]!.sql]]);
    const engine = new ScriptedPolicyWithContext(gold, gold);
    engine.window = 2048;
    const base = request(dataset, indices, SKYRL_SQL_PRESET, { maxTokens: 16 });
    const req = { ...base, spec: { ...base.spec, engine: 'wllama' } };
    const err = await rejectionOf(startGenerationRun(app.ports, dataset, req, engine));
    expect(engine.counted).toHaveLength(1);
    const tokens = engine.counted[0]!.length;
    const need = tokens + 5 * 16;
    expect(err).toMatchObject({ code: 'BAD_OPTION' });
    expect(err.message).toBe(
      `preset skyrl-sql-v1 does not fit the loaded model's context: the first prompt (question 1312) is ${tokens} tokens and ` +
        `its 5 turns of up to 16 tokens each (observations come on top) bring a request to ${need} tokens, more than the context of 2048 tokens: ` +
        `set "Context (tokens)" on the Generate screen to at least ${Math.ceil(need / 1024) * 1024} and load the model again ` +
        "(beyond the model's training context llama.cpp still runs it, and quality may drop), or lower max tokens",
    );
    expect(await app.ports.runs.list()).toEqual([]);
    expect(engine.chats).toEqual([]);

    // Exactly the need: the run plays, and the text counted is the first turn's prompt as the plain template renders it.
    engine.window = need;
    const r = await startGenerationRun(app.ports, dataset, req, engine);
    expect(r.outcome.kind).toBe('done');
    expect(engine.counted[1]).toBe(renderPlainChat(engine.chats[0]!.messages));
  }, 60_000);
});

/**
 * TEST DOUBLE of web-llm (no GPU model runs here): a module whose MLCEngine streams fixed turns
 * (a probe of the gold SQL in `<sql>`, then `<solution>`), stopping before the stop string as
 * web-llm does and naming none, and records every request. What is real: the WebLLM engine's
 * request building, streaming and stop handling (src/adapters/engines/webllm-engine.ts), the
 * episode, the probes on the run's pool and the verdicts.
 */
/** `gold`: each question's text to its gold SQL. */
function scriptedWebLlm(gold: Map<string, string>) {
  const requests: Array<{ messages: Array<{ role: string; content: string }>; stop?: string[] }> = [];
  const GiB = 1024 ** 3;
  const probe = async (): Promise<GpuProbe> => ({
    webgpu: true,
    adapter: { vendor: 'test', architecture: 'gpu', device: '', description: '', isFallbackAdapter: false },
    features: ['shader-f16'],
    limits: {
      maxBufferSize: GiB,
      maxStorageBufferBindingSize: GiB,
      maxComputeWorkgroupStorageSize: 32768,
      maxStorageBuffersPerShaderStage: 10,
    },
    storage: { quotaBytes: 100 * GiB, usageBytes: 0 },
  });
  const engine = {
    chat: {
      completions: {
        async create(req: { messages: Array<{ role: string; content: string }>; stop?: string[] }) {
          requests.push(req);
          const user = req.messages.find((m) => m.role === 'user')!.content;
          // The question whose text the prompt holds (the longest match: no text is part of another here).
          const sql = [...gold]
            .filter(([text]) => user.includes(text))
            .sort((a, b) => b[0].length - a[0].length)[0]![1];
          const first = !req.messages.some((m) => m.role === 'assistant');
          const text = first
            ? `<think>Look at the data.</think>\n<sql>${sql}`
            : `<think>That answers it.</think>\n<solution>${sql}`;
          return (async function* () {
            yield { choices: [{ delta: { content: text }, finish_reason: null, logprobs: null }] };
            yield { choices: [{ delta: {}, finish_reason: 'stop', logprobs: null }] };
            yield { choices: [], usage: { prompt_tokens: 50, completion_tokens: 12 } };
          })();
        },
      },
    },
    async interruptGenerate() {},
    async unload() {},
  };
  const module = {
    prebuiltAppConfig: {
      model_list: [
        {
          model: 'https://huggingface.co/mlc-ai/Qwen3.5-0.8B-q4f16_1-MLC',
          model_id: 'scripted-webllm',
          model_lib: 'lib.wasm',
          overrides: { context_window_size: 32768 },
        },
      ],
    },
    async CreateWebWorkerMLCEngine() {
      return engine;
    },
  };
  const webllm = createWebLlmEngine({
    probe,
    spawn: () => ({ terminate() {} }) as unknown as Worker,
    importWebLlm: async () => module as unknown as typeof import('@mlc-ai/web-llm'),
  });
  return { webllm, requests };
}

describe('a multi-turn preset run on the WebLLM engine (over a TEST DOUBLE of web-llm: no GPU model runs here)', () => {
  it('skyrl-sql-v1: each turn a whole chat (conversation mode), the stop string web-llm does not name inferred, probes on the pool, EX of the final SQL', async () => {
    const dataset = await minidev(true);
    const { app, indices } = setup(dataset, [1312, 195]);
    const gold = new Map(indices.map((i) => [dataset.questions[i]!.question, dataset.gold[i]!.sql]));
    const { webllm, requests } = scriptedWebLlm(gold);
    await webllm.load({ id: 'scripted-webllm' });
    const base = request(dataset, indices, SKYRL_SQL_PRESET, { maxTokens: 48 });
    const req = {
      ...base,
      spec: { ...base.spec, engine: 'webllm', model: { id: 'scripted-webllm', source: 'test double' } },
    };
    const r = await startGenerationRun(app.ports, dataset, req, webllm);
    expect(r.outcome.kind).toBe('done');
    // Two turns per question; the second is the whole chat with the observation as a user turn (web-llm continues no assistant message).
    expect(requests).toHaveLength(4);
    for (const q of [0, 1]) {
      expect(requests[2 * q]!.messages.map((m) => m.role)).toEqual(['system', 'user']);
      expect(requests[2 * q + 1]!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
      expect(requests[2 * q]!.stop).toEqual(['</sql>', '</solution>']);
    }
    const samples = app.samples(r.run.id).sort((a, b) => a.questionId - b.questionId);
    expect(samples.map((s) => [s.questionId, s.ex])).toEqual([
      [195, 1],
      [1312, 1],
    ]);
    for (const s of samples) {
      const e = s.episode!;
      expect([e.turnsUsed, e.endReason, e.formatValid, e.probesFailed, e.presetReward]).toEqual([
        2,
        'solution',
        true,
        0,
        1,
      ]);
      expect(e.turns[0]!.probeSql).toBe(s.goldSql);
      expect(e.turns[0]!.probe!.rows.length).toBeGreaterThan(0);
      // The observation the policy was sent is the one stored.
      const sent = requests.find((q) => q.messages[3]?.content === e.turns[0]!.observation);
      expect(sent).toBeDefined();
      expect(e.turns[0]!.observation).toMatch(/You have 4 turns left/);
      expect(s.generation).toMatchObject({ engine: 'webllm', model: 'scripted-webllm' });
    }
  }, 120_000);
});
