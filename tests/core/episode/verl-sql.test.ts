/**
 * The verl multi-turn Text2SQL tutorial's environment against the tutorial's own code:
 * fixtures/verl-tool.json holds what its `execute_sql` tool (sql_tool.py) answered for scripted
 * calls on the mini-dev databases and what its reward function (text2sql_reward_func.py) gave
 * (fixtures/README.md). Probes are real (sql.js over the real database,
 * tests/helpers/sqljs-probe.ts); the judge is the SQL worker's own EX (what `eval` runs). The
 * policy of the runner tests is a TEST DOUBLE: a function that plays fixed replies.
 */
import { readFileSync } from 'node:fs';
import initSqlJs from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../../src/core/episode/run-episode.ts';
import type { ChatMessage, ChatOptions, ChatReply, ProbeResult } from '../../../src/core/episode/types.ts';
import {
  VERL_SQL_DEFAULTS,
  VERL_SUMMARY_PROMPT,
  hermesToolCalls,
  parseToolCalls,
  probeResponse,
  refusal,
  refusalResponse,
  type VerlSqlEnv,
} from '../../../src/core/episode/verl-sql.ts';
import { extractAnswer, verlAnswer } from '../../../src/core/prompt/preset-extract.ts';
import { SKYRL_SQL_PRESET } from '../../../src/core/prompt/presets.ts';
import type { SqlValue } from '../../../src/core/types.ts';
import type { StorageClass } from '../../../src/core/prompt/schema-source.ts';
import { createSqlEngine } from '../../../workers/sql-engine.ts';
import type { SqlWorkerApi } from '../../../workers/sql.api.ts';
import { sharedData } from '../../helpers/shared-data.ts';
import { sqlJsProbe, type SqlJsProbe } from '../../helpers/sqljs-probe.ts';
import type { FixtureCell } from './py-values.ts';

interface ToolCase {
  name: string;
  db_id: string;
  parameters: Record<string, unknown>;
  response: string;
  response_query_order: string;
  response_read_only?: string;
  rows_original_order: FixtureCell[][] | null;
  db_unchanged: boolean;
}
interface RewardCase {
  name: string;
  db_id: string;
  gold_sql: string;
  solution_str: string;
  extracted: string | null;
  score: number;
}
const fixture = JSON.parse(readFileSync(new URL('./fixtures/verl-tool.json', import.meta.url), 'utf8')) as {
  tool_calls: ToolCase[];
  rewards: RewardCase[];
};
const caseOf = (name: string) => fixture.tool_calls.find((c) => c.name === name)!;
const DBS = ['student_club', 'superhero', 'toxicology'];

/** A probe result from the fixture's typed cells (as sql.js gives them: REAL as a number, its class beside it). */
function resultOf(rows: FixtureCell[][]): ProbeResult {
  const cell = (c: FixtureCell): [SqlValue, StorageClass] => {
    if (c === null) return [null, 'null'];
    if ('i' in c) return [BigInt(c.i), 'integer'];
    if ('f' in c) return [Number(c.f), 'real'];
    if ('s' in c) return [c.s, 'text'];
    return [Uint8Array.from(c.b.match(/../g) ?? [], (h) => parseInt(h, 16)), 'blob'];
  };
  const cells = rows.map((r) => r.map(cell));
  return {
    columns: rows[0]?.map((_, i) => String(i)) ?? [],
    rows: cells.map((r) => r.map((c) => c[0])),
    classes: cells.map((r) => r.map((c) => c[1])),
  };
}

let engine: SqlWorkerApi;
const probes = new Map<string, SqlJsProbe>();
const probeOf = (db: string) => probes.get(db)!;

beforeAll(async () => {
  engine = createSqlEngine(() => initSqlJs());
  await engine.init({ cacheBytes: 256 * 1024 * 1024 });
  for (const db of DBS) {
    const bytes = bytesOf(db);
    await engine.loadDb(db, bytes);
    probes.set(db, sqlJsProbe(bytes));
  }
}, 60_000);

afterAll(async () => {
  for (const p of probes.values()) await p.close();
});

const bytesOf = (db: string) => new Uint8Array(readFileSync(sharedData('bird', 'databases', db, `${db}.sqlite`)));

async function ex(db: string, pred: string, gold: string): Promise<boolean> {
  const ask = () =>
    engine.evaluate({ dbId: db, predSql: pred, goldSql: gold, readOnly: true, softF1: false, previewRows: 0 });
  let r = await ask();
  // The engine's cache may have let the database go (as the app's pool does): load it again.
  if (r.kind === 'need-db') {
    await engine.loadDb(db, bytesOf(db));
    r = await ask();
  }
  if (r.kind !== 'done') throw new Error(`not evaluated: ${JSON.stringify(r)}`);
  return r.ex === 1;
}

describe("execute_sql's response, byte for byte as the tutorial's sql_tool.py writes it", () => {
  const ran = fixture.tool_calls.filter((c) => !c.name.startsWith('invalid'));

  it.each(ran.filter((c) => c.rows_original_order !== null).map((c) => [c.name, c] as const))(
    '%s: the same rows in the original (frozenset) order give the original text',
    (_n, c) => {
      expect(probeResponse(VERL_SQL_DEFAULTS, resultOf(c.rows_original_order!))).toBe(c.response);
    },
  );

  it.each(ran.map((c) => [c.name, c] as const))(
    '%s: a real read-only probe gives the original text (rows in the query order; writes refused)',
    async (_n, c) => {
      const sql = c.parameters.sql_query as string;
      expect(refusal(c.parameters)).toBeNull();
      // The timeout case's query never ends: a short timeout stands for the tool's 30 s (the fixture ran with 2 s).
      const timeoutMs = c.name === 'timeout' ? 1500 : 60_000;
      const result = await probeOf(c.db_id).probe(sql, { timeoutMs });
      const expected = c.name.startsWith('write') ? c.response_read_only! : c.response_query_order;
      expect(probeResponse(VERL_SQL_DEFAULTS, result)).toBe(expected);
      expect(c.db_unchanged).toBe(true);
    },
    60_000,
  );

  it.each(fixture.tool_calls.filter((c) => c.name.startsWith('invalid')).map((c) => [c.name, c] as const))(
    '%s: refused before running, with the original text',
    (_n, c) => {
      expect(refusalResponse(refusal(c.parameters)!)).toBe(c.response);
    },
  );

  it('the fixtures cover a cut to 50 rows, a further cut past 9,000 characters, non-ASCII escapes, a timeout and writes', () => {
    expect(caseOf('rows-60-cut-to-50').response).toMatch(/Truncated to 50 rows since returned response too long: /);
    expect(caseOf('rows-60-cut-to-50').response).not.toMatch(/further truncated/);
    expect(caseOf('rows-60-over-20000-chars').response).toMatch(/\.\.\. \(further truncated\)"\n}$/);
    expect(caseOf('ok-escapes').response).toContain('caf\\u00e9 \\u2615 \\ud834\\udd1e');
    expect(caseOf('timeout').response).toBe('{\n  "result": "SQL execution timeout"\n}');
    expect(caseOf('write-delete').response).toBe('{\n  "result": "Empty result set"\n}');
  });
});

describe("the tutorial's reward (text2sql_reward_func.py): -1 without an answer, 0 wrong, 1 right", () => {
  it.each(fixture.rewards.map((r) => [r.name, r] as const))('%s', async (_n, r) => {
    expect(verlAnswer(r.solution_str)).toBe(r.extracted);
    const reward = r.extracted === null ? -1 : (await ex(r.db_id, r.extracted, r.gold_sql)) ? 1 : 0;
    expect(reward).toBe(r.score);
  });
});

describe("the answer tags' word boundary is Python's (Unicode-aware), as the originals' re.search", () => {
  // Outputs of text2sql_reward_func.extract_sql_solution and skyrl_gym's verify_format_and_extract
  // (Python 3.11): a letter after the tag name is no boundary, so the tag is not a forbidden one.
  it('verl: <thinké> inside the answer is not <think>; <THINK> is (re.I)', () => {
    expect(verlAnswer('<answer><thinké>SELECT 1</answer>')).toBe('<thinké>SELECT 1');
    expect(verlAnswer('<answer><think_>SELECT 1</answer>')).toBe('<think_>SELECT 1');
    expect(verlAnswer('<answer><THINK>SELECT 1</answer>')).toBeNull();
  });
  it('SkyRL: <thinké> inside the solution is not <think>', () => {
    expect(extractAnswer(SKYRL_SQL_PRESET, '<think>a</think><solution><thinké>SELECT 1</solution>').sql).toBe(
      '<thinké>SELECT 1',
    );
  });
});

describe("tool calls read as the tutorial's rollout reads Qwen's hermes format", () => {
  const call = (args: unknown, name = 'execute_sql') =>
    `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

  it('one call: the text before it (stripped) is the content, the arguments the object', () => {
    const p = parseToolCalls(`<think>look</think>\n\n${call({ sql_query: 'SELECT 1' })}`, 'execute_sql');
    expect(p).toEqual({
      hasToolCall: true,
      normalText: '<think>look</think>',
      calls: [{ name: 'execute_sql', arguments: { sql_query: 'SELECT 1' } }],
    });
  });

  it('several calls in one turn, and a list of calls in one block, all run in order', () => {
    const two = parseToolCalls(call({ sql_query: 'SELECT 1' }) + call({ sql_query: 'SELECT 2' }), 'execute_sql');
    expect(two.calls.map((c) => c.arguments.sql_query)).toEqual(['SELECT 1', 'SELECT 2']);
    const list = parseToolCalls(
      `<tool_call>[{"name": "execute_sql", "arguments": {"sql_query": "a"}}, {"name": "execute_sql", "parameters": {"sql_query": "b"}}]</tool_call>`,
      'execute_sql',
    );
    expect(list.calls.map((c) => c.arguments.sql_query)).toEqual(['a', 'b']);
  });

  it('another tool name, or no name, is dropped; the valid calls of the turn stay', () => {
    const p = parseToolCalls(call({ sql_query: 'x' }, 'run_sql') + call({ sql_query: 'SELECT 3' }), 'execute_sql');
    expect(p.calls.map((c) => c.arguments.sql_query)).toEqual(['SELECT 3']);
    expect(parseToolCalls('<tool_call>{"arguments": {"sql_query": "x"}}</tool_call>', 'execute_sql').calls).toEqual([]);
  });

  it('one block that is not JSON, or a call that is not an object, drops every call of the turn', () => {
    const bad = parseToolCalls(
      call({ sql_query: 'SELECT 1' }) + '<tool_call>{"name": "execute_sql", </tool_call>',
      'execute_sql',
    );
    expect(bad).toMatchObject({ hasToolCall: true, calls: [] });
    expect(parseToolCalls('<tool_call>["execute_sql"]</tool_call>', 'execute_sql').calls).toEqual([]);
  });

  it('arguments that are not a JSON object (a string, a list) drop that call', () => {
    expect(parseToolCalls(call('{"sql_query": "SELECT 1"}'), 'execute_sql').calls).toEqual([]);
    expect(parseToolCalls(call(['SELECT 1']), 'execute_sql').calls).toEqual([]);
    // Missing arguments are {} (the call runs and is refused: no sql_query).
    expect(parseToolCalls('<tool_call>{"name": "execute_sql"}</tool_call>', 'execute_sql').calls).toEqual([
      { name: 'execute_sql', arguments: {} },
    ]);
  });

  it('text without <tool_call> has no call; an unclosed block is a tool call with none valid', () => {
    expect(parseToolCalls('<answer>SELECT 1</answer>', 'execute_sql')).toEqual({
      hasToolCall: false,
      normalText: '<answer>SELECT 1</answer>',
      calls: [],
    });
    expect(parseToolCalls('<tool_call>{"name": "execute_sql"', 'execute_sql')).toMatchObject({
      hasToolCall: true,
      calls: [],
    });
  });

  it("a server's parsed tool_calls are written back as Qwen's template renders them (Python's json separators, non-ASCII kept)", () => {
    expect(hermesToolCalls([{ name: 'execute_sql', arguments: '{"sql_query":"SELECT \'é\'","n":[1,2]}' }])).toBe(
      '<tool_call>\n{"name": "execute_sql", "arguments": {"sql_query": "SELECT \'é\'", "n": [1, 2]}}\n</tool_call>',
    );
  });
});

/** TEST DOUBLE of a policy: returns the k-th scripted reply; records every request's messages and options. */
function scripted(replies: Array<string | ChatReply>) {
  const seen: Array<{ messages: ChatMessage[]; options: ChatOptions }> = [];
  const chat = async (messages: readonly ChatMessage[], options: ChatOptions): Promise<ChatReply> => {
    seen.push({ messages: messages.map((m) => ({ ...m })), options });
    const r = replies[seen.length - 1];
    if (r === undefined) throw new Error('the scripted policy has no more replies');
    return typeof r === 'string' ? { text: r } : r;
  };
  return { chat, seen };
}

const Q1312 = {
  db: 'student_club',
  gold: "SELECT T2.major_name FROM member AS T1 INNER JOIN major AS T2 ON T1.link_to_major = T2.major_id WHERE T1.first_name = 'Angela' AND T1.last_name = 'Sanders'",
};
const toolCall = (sql: string) =>
  `<tool_call>\n${JSON.stringify({ name: 'execute_sql', arguments: { sql_query: sql } })}\n</tool_call>`;

async function play(replies: Array<string | ChatReply>, env: Partial<VerlSqlEnv> = {}) {
  const policy = scripted(replies);
  let clock = 0;
  const episode = await runEpisode(
    { env: { ...VERL_SQL_DEFAULTS, tools: [{ type: 'function' }], ...env }, dbId: Q1312.db },
    {
      chat: policy.chat,
      probe: (sql, o) => probeOf(Q1312.db).probe(sql, { timeoutMs: Math.min(o.timeoutMs, 1500) }),
      now: () => (clock += 5),
      judge: (sql) => ex(Q1312.db, sql, Q1312.gold),
    },
    [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'question 1312' },
    ],
  );
  return { episode, seen: policy.seen };
}

describe('the verl episode runner on scripted trajectories (a test double plays the policy)', () => {
  it("probes that succeed, fail and return 60 rows, then an answer: observations are the tool's texts; reward 1 from EX", async () => {
    const ok = caseOf('ok-text');
    const err = caseOf('error-no-table');
    const { episode, seen } = await play([
      `<think>majors</think>\n${toolCall(ok.parameters.sql_query as string)}`,
      `<think>oops</think>\n${toolCall(err.parameters.sql_query as string)}`,
      `<think>the answer</think>\n<answer>${Q1312.gold}</answer>`,
    ]);
    expect(episode.envId).toBe('verl-sql');
    expect(episode.turnsUsed).toBe(3);
    expect(episode.turns[0]!.observation).toBe(`<tool_response>\n${ok.response_query_order}\n</tool_response>`);
    expect(episode.turns[1]!.observation).toBe(`<tool_response>\n${err.response_query_order}\n</tool_response>`);
    expect(episode.turns[1]!.probe?.error).toBe('no such table: members');
    expect(episode.probesFailed).toBe(1);
    expect(episode).toMatchObject({ endReason: 'solution', formatValid: true, finalSql: Q1312.gold, presetReward: 1 });
    // No tool role: the assistant's calls as Qwen's template renders them, the answers as its user turn.
    expect(seen[1]!.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: `<think>majors</think>\n${toolCall(ok.parameters.sql_query as string).replace('{"name":"execute_sql","arguments":{"sql_query":', '{"name": "execute_sql", "arguments": {"sql_query": ')}`,
      },
      { role: 'user', content: episode.turns[0]!.observation },
    ]);
    expect(seen.every((s) => s.options.tools?.length === 1 && s.options.stop.length === 0)).toBe(true);
    expect(episode.turns.map((t) => t.ms)).toEqual([5, 5, 5]);
  });

  it('with a tool role: tool messages carry the raw responses and the call ids; two calls in one turn both run', async () => {
    const ok = caseOf('ok-int-count');
    const { episode, seen } = await play(
      [
        `${toolCall('SELECT * FROM members')}${toolCall('SELECT count(*) FROM member')}`,
        '<answer>SELECT major_name FROM major LIMIT 1</answer>',
      ],
      { toolRole: true },
    );
    expect(ok).toBeDefined();
    const t = episode.turns[0]!;
    expect(t.toolCalls?.map((c) => c.sql)).toEqual(['SELECT * FROM members', 'SELECT count(*) FROM member']);
    expect(t.toolCalls?.[0]!.response).toBe(caseOf('error-no-table').response_query_order);
    expect(t.toolCalls?.[1]!.response).toBe('{\n  "result": " 0\\n33"\n}');
    const msgs = seen[1]!.messages.slice(2);
    expect(msgs.map((m) => m.role)).toEqual(['assistant', 'tool', 'tool']);
    expect(msgs[0]).toMatchObject({
      content: '',
      toolCalls: [{ id: 'call_1_0', name: 'execute_sql' }, { id: 'call_1_1' }],
    });
    expect(msgs[1]).toEqual({ role: 'tool', content: t.toolCalls![0]!.response, toolCallId: 'call_1_0' });
    expect(msgs[2]).toEqual({ role: 'tool', content: t.toolCalls![1]!.response, toolCallId: 'call_1_1' });
    expect(episode).toMatchObject({ endReason: 'solution', presetReward: 0, probesFailed: 1 });
  });

  it("6 turns of calls: 5 run, the 6th never does (verl's loop ends first); no answer: turn limit, reward -1", async () => {
    const { episode, seen } = await play(Array.from({ length: 6 }, (_, k) => toolCall(`SELECT ${k + 1}`)));
    expect(seen).toHaveLength(6);
    expect(episode.turnsUsed).toBe(6);
    expect(episode.turns.slice(0, 5).every((t) => t.probe !== null && t.observation !== null)).toBe(true);
    expect(episode.turns[5]).toMatchObject({ probe: null, probeSql: null, observation: null });
    expect(episode).toMatchObject({ endReason: 'turn-limit', formatValid: false, finalSql: null, presetReward: -1 });
  });

  it("final summary: at the limit without <answer>, one more turn after the summary prompt; the prompt's own <answer></answer> makes the answer's count 2 (reward -1), the run still scores the answer", async () => {
    const { episode, seen } = await play(
      [...Array.from({ length: 6 }, (_, k) => toolCall(`SELECT ${k + 1}`)), `<answer>${Q1312.gold}</answer>`],
      { finalSummary: true },
    );
    expect(seen).toHaveLength(7);
    expect(seen[6]!.messages.at(-1)).toEqual({ role: 'user', content: VERL_SUMMARY_PROMPT });
    expect(episode.turnsUsed).toBe(7);
    expect(episode.turns[5]!.observation).toBe(VERL_SUMMARY_PROMPT);
    expect(episode).toMatchObject({
      endReason: 'format-failure',
      formatValid: false,
      presetReward: -1,
      finalSql: Q1312.gold,
    });
  });

  it('final summary is not asked when the episode answered, nor before the limit', async () => {
    const early = await play(['no tool call and no answer'], { finalSummary: true });
    expect(early.seen).toHaveLength(1);
    expect(early.episode).toMatchObject({ endReason: 'format-failure', presetReward: -1, finalSql: null });
  });

  it('a malformed call ends the episode; a reply cut by the token limit is not read for calls', async () => {
    const bad = await play(['<tool_call>{"name": "execute_sql", "arguments": {"sql_query": "SELECT 1"</tool_call>']);
    expect(bad.seen).toHaveLength(1);
    expect(bad.episode.turns[0]).toMatchObject({ probe: null, observation: null });
    const cut = await play([{ text: toolCall('SELECT 1'), finishReason: 'length' }]);
    expect(cut.seen).toHaveLength(1);
    expect(cut.episode.turns[0]!.probe).toBeNull();
  });

  it('a refused call (no SQL keyword) is answered without running, and is not a failed probe', async () => {
    const { episode } = await play([toolCall('PRAGMA table_info(member)'), `<answer>${Q1312.gold}</answer>`]);
    expect(episode.turns[0]!.toolCalls).toEqual([
      { sql: 'PRAGMA table_info(member)', probe: null, response: caseOf('invalid-no-keyword').response },
    ]);
    expect(episode.probesFailed).toBe(0);
  });

  it('an engine failure ends the episode with its turns kept', async () => {
    const { episode } = await play([toolCall('SELECT 1')]);
    expect(episode).toMatchObject({ endReason: 'engine-error', turnsUsed: 1, finalSql: null, presetReward: null });
    expect(episode.error).toMatch(/no more replies/);
  });
});
