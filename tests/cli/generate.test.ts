/**
 * `generate`: a policy preset run through the CLI against an OpenAI-compatible server. The policy
 * is a TEST DOUBLE (tests/helpers/openai-server.ts: no weights run here) that plays fixed
 * trajectories: SkyRL's scripted actions (tests/core/episode/fixtures/skyrl-episodes.json, made
 * by SkyRL's own code) for skyrl-sql-v1, fixed completions for omnisql-v1 and arctic-text2sql-r1-v1.
 * Everything else is real: the CLI, the SQL worker pool that runs the probes and scores, the
 * mini-dev databases, and `eval` as the reference for the verdicts.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SKYRL_SQL_DEFAULTS } from '../../src/core/episode/skyrl-sql.ts';
import { ARCTIC_TEXT2SQL_R1_PRESET, BUILTIN_PRESETS, VERL_TEXT2SQL_PRESET } from '../../src/core/prompt/presets.ts';
import { jsonlFile, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.ts';
import { minidevQuestions, sharedData } from '../helpers/shared-data.ts';

interface FixtureStep {
  action: string;
  observation: string | null;
  observation_query_order: string | null;
  probe_sql: string | null;
}
interface FixtureEpisode {
  name: string;
  question_id: number;
  db_id: string;
  steps: FixtureStep[];
  turns: number;
  final_reward: number;
  solution: string | null;
  db_file: string;
}
const fixture = (
  JSON.parse(readFileSync(new URL('../core/episode/fixtures/skyrl-episodes.json', import.meta.url), 'utf8')) as {
    episodes: FixtureEpisode[];
  }
).episodes;

const all = minidevQuestions();
const goldLines = readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '');

/** A dataset of the given mini-dev questions (in this order) and its gold file, as temporary files. */
function subset(ids: number[]): { dataset: string; gold: string } {
  const at = ids.map((id) => all.findIndex((q) => q.question_id === id));
  const dataset = tempFile('questions.json');
  writeFileSync(dataset, JSON.stringify(at.map((i) => all[i])));
  const gold = tempFile('gold.sql');
  writeFileSync(gold, at.map((i) => goldLines[i]).join('\n') + '\n');
  return { dataset, gold };
}

const dbRoot = sharedData('bird', 'databases');
const tables = sharedData('bird', 'minidev', 'dev_tables.json');
const servers: OpenAiServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

type Msg = { role: string; content: string };
const messagesOf = (body: Record<string, unknown> | null) => (body?.messages ?? []) as Msg[];
/** The fixture episode whose question the request asks (the user message holds the question text). */
const questionOf = (body: Record<string, unknown> | null, ids: number[]) =>
  ids.find((id) => messagesOf(body).some((m) => m.content.includes(all.find((q) => q.question_id === id)!.question)))!;

/** (index, ex) of every sample of a run file. */
const verdicts = (file: string): Array<[number, number]> =>
  readJson(file).samples.map((s: { index: number; ex: number }) => [s.index, s.ex]);

describe('generate --preset skyrl-sql-v1 (multi-turn) against a scripted policy', () => {
  // Two runs: each question once per run (two fixture episodes share question 717, two 195).
  const groups = [fixture.slice(0, 3), fixture.slice(3)];

  it.each(groups.map((g, k) => [k, g] as const))(
    'run %i: every turn and observation equals SkyRL-SQL, writes refused, and the verdicts equal eval of the final SQL',
    async (_k, episodes) => {
      const ids = episodes.map((e) => e.question_id);
      const files = subset(ids);
      // TEST DOUBLE of a policy: turn k of a question's episode answers with the fixture's k-th
      // action, as written (a server that keeps the stop string, as vLLM's include_stop_str_in_output).
      const turnOf = new Map<number, number>();
      const server = await startOpenAiServer({
        models: ['scripted-policy'],
        text: (body) => {
          const id = questionOf(body, ids);
          const k = turnOf.get(id) ?? 0;
          turnOf.set(id, k + 1);
          return episodes.find((e) => e.question_id === id)!.steps[k]?.action ?? '';
        },
      });
      servers.push(server);
      const runOut = tempFile('skyrl.run.json');
      const run = await runCli([
        'generate',
        '--endpoint',
        server.url,
        '--model',
        'scripted-policy',
        '--preset',
        'skyrl-sql-v1',
        '--dataset',
        files.dataset,
        '--gold',
        files.gold,
        '--db-root',
        dbRoot,
        '--tables',
        tables,
        '--run-out',
        runOut,
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/simple\s+moderate\s+challenging\s+total/);
      const file = readJson(runOut);
      expect(file.run.preset.id).toBe('skyrl-sql-v1');
      expect(file.run.preset.content).toEqual(BUILTIN_PRESETS.find((p) => p.id === 'skyrl-sql-v1'));
      for (const [i, fx] of episodes.entries()) {
        const s = file.samples.find((x: { index: number }) => x.index === i);
        const e = s.episode;
        expect(e.turns.map((t: { text: string }) => t.text)).toEqual(fx.steps.map((st) => st.action));
        expect(e.turnsUsed).toBe(fx.turns);
        e.turns.forEach((t: { probeSql: string | null; observation: string | null }, k: number) => {
          const st = fx.steps[k]!;
          expect(t.probeSql, `${fx.name} turn ${k + 1}`).toBe(st.probe_sql);
          if (st.probe_sql !== null && /^\s*(insert|delete|drop)\b/i.test(st.probe_sql)) {
            // SkyRL runs a write and rolls it back; the pool refuses it with SQLite's own message.
            const left = 5 - (k + 1);
            expect(t.observation).toBe(
              `\n\n<observation>Error executing SQL: attempt to write a readonly database, db file: ${SKYRL_SQL_DEFAULTS.dbFile.replaceAll('{db_id}', fx.db_id)}\n<reminder>You have ${left} turns left to complete the task.</reminder></observation>\n\n`,
            );
          } else {
            // SkyRL names its own copy of the database in error texts; ours names SkyRL's trainer path.
            const expected = st.observation_query_order?.replaceAll(
              fx.db_file,
              SKYRL_SQL_DEFAULTS.dbFile.replaceAll('{db_id}', fx.db_id),
            );
            expect(t.observation, `${fx.name} turn ${k + 1}`).toBe(expected ?? null);
          }
        });
        // The preset's own reward equals SkyRL's final reward; the sample's SQL is the final SQL.
        expect(e.presetReward, fx.name).toBe(fx.final_reward);
        expect(s.sql).toBe(e.finalSql ?? '');
        if (fx.solution !== null) expect(e.finalSql).toBe(fx.solution);
      }
      // Every turn after the first continued the one assistant message: the actions and observations so far.
      for (const [i, fx] of episodes.entries()) {
        const reqs = server.completions().filter((r) => questionOf(r.body, ids) === fx.question_id);
        const e = file.samples.find((x: { index: number }) => x.index === i).episode;
        reqs.forEach((r, k) => {
          const msgs = messagesOf(r.body);
          if (k === 0) {
            expect(msgs.map((m) => m.role)).toEqual(['system', 'user']);
            expect(r.body?.continue_final_message).toBeUndefined();
          } else {
            const history = e.turns
              .slice(0, k)
              .map((t: { text: string; observation: string }) => t.text + t.observation)
              .join('');
            expect(msgs.at(-1)).toEqual({ role: 'assistant', content: history });
            expect(r.body?.continue_final_message).toBe(true);
            expect(r.body?.add_generation_prompt).toBe(false);
          }
          expect(r.body?.stop).toEqual(['</sql>', '</solution>']);
        });
      }
      // The reference: `eval` of the final SQLs as a predictions file.
      const preds = jsonlFile(
        'final.jsonl',
        file.samples.map((s: { questionId: number; sql: string }) => ({ question_id: s.questionId, sql: s.sql })),
      );
      const evalOut = tempFile('eval.run.json');
      const ev = await runCli([
        'eval',
        '--predictions',
        preds,
        '--gold',
        files.gold,
        '--dataset',
        files.dataset,
        '--db-root',
        dbRoot,
        '--run-out',
        evalOut,
      ]);
      expect(ev.code, ev.stderr).toBe(0);
      expect(verdicts(runOut)).toEqual(verdicts(evalOut));
    },
    120_000,
  );
});

interface VerlCase {
  name: string;
  db_id: string;
  parameters: { sql_query?: unknown };
  response_query_order: string;
  response_read_only?: string;
}
const verlCases = (
  JSON.parse(readFileSync(new URL('../core/episode/fixtures/verl-tool.json', import.meta.url), 'utf8')) as {
    tool_calls: VerlCase[];
  }
).tool_calls;
const verlCase = (name: string) => verlCases.find((c) => c.name === name)!;

describe('generate --preset verl-text2sql-v1 (tool calls) against a scripted policy', () => {
  it("every tool response equals the tutorial's sql_tool.py, calls as tool_calls or as hermes text, and the verdicts equal eval of the final SQL", async () => {
    const gold1312 = goldLines[all.findIndex((q) => q.question_id === 1312)]!.split('\t')[0]!;
    // Per question: each turn is a fixture call (sent back as `tool_calls`, or as hermes text in the content) or a final text.
    type Turn = { call: string; as: 'tool_calls' | 'text' } | { text: string };
    const plans: Record<number, Turn[]> = {
      1312: [
        { call: 'ok-text', as: 'tool_calls' },
        { call: 'error-no-table', as: 'text' },
        { text: `<think>found it</think>\n<answer>${gold1312}</answer>` },
      ],
      717: [
        { call: 'rows-60-cut-to-50', as: 'text' },
        { call: 'error-two-statements', as: 'tool_calls' },
        { text: '<answer>SELECT power_name FROM superpower LIMIT 1</answer>' },
      ],
      195: [
        { call: 'ok-int-count', as: 'tool_calls' },
        { call: 'write-drop', as: 'text' },
        { call: 'ok-duplicates', as: 'tool_calls' },
        { call: 'ok-duplicates', as: 'text' },
        { call: 'ok-int-count', as: 'text' },
        { call: 'ok-int-count', as: 'tool_calls' },
      ],
    };
    const ids = [1312, 717, 195];
    const files = subset(ids);
    const argsOf = (name: string) => JSON.stringify({ sql_query: verlCase(name).parameters.sql_query });
    // TEST DOUBLE of a policy: turn k (the assistant messages so far) of a question's plan.
    const turnOf = (body: Record<string, unknown>) => {
      const id = questionOf(body, ids);
      return plans[id]![messagesOf(body).filter((m) => m.role === 'assistant').length];
    };
    const server = await startOpenAiServer({
      models: ['scripted-policy'],
      text: (body) => {
        const t = turnOf(body);
        if (!t) return '';
        if ('text' in t) return t.text;
        return t.as === 'text'
          ? `<think>look</think>\n<tool_call>\n{"name": "execute_sql", "arguments": ${argsOf(t.call)}}\n</tool_call>`
          : '<think>look</think>';
      },
      toolCalls: (body) => {
        const t = turnOf(body);
        return t && 'call' in t && t.as === 'tool_calls' ? [{ name: 'execute_sql', arguments: argsOf(t.call) }] : null;
      },
    });
    servers.push(server);
    const runOut = tempFile('verl.run.json');
    const run = await runCli([
      'generate',
      '--endpoint',
      server.url,
      '--model',
      'scripted-policy',
      '--preset',
      'verl-text2sql-v1',
      '--n',
      '1',
      '--dataset',
      files.dataset,
      '--gold',
      files.gold,
      '--db-root',
      dbRoot,
      '--tables',
      tables,
      '--run-out',
      runOut,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const file = readJson(runOut);
    expect(file.run.preset.id).toBe('verl-text2sql-v1');
    for (const [i, id] of ids.entries()) {
      const s = file.samples.find((x: { index: number }) => x.index === i);
      const e = s.episode;
      const plan = plans[id]!;
      expect(e.envId).toBe('verl-sql');
      expect(e.turnsUsed, `question ${id}`).toBe(plan.length);
      plan.forEach((t, k) => {
        const turn = e.turns[k];
        if (!('call' in t)) return expect(turn.toolCalls).toBeUndefined();
        // The last allowed turn's call never runs (verl's loop ends first).
        if (k === 5) return expect(turn.toolCalls).toBeUndefined();
        const c = verlCase(t.call);
        const expected = t.call.startsWith('write') ? c.response_read_only! : c.response_query_order;
        expect(
          turn.toolCalls.map((r: { response: string }) => r.response),
          `${id} turn ${k + 1}`,
        ).toEqual([expected]);
        expect(turn.observation).toBe(`<tool_response>\n${expected}\n</tool_response>`);
        expect(turn.probeSql).toBe(c.parameters.sql_query);
      });
    }
    const ep = (i: number) => file.samples.find((x: { index: number }) => x.index === i).episode;
    expect(ep(0)).toMatchObject({ endReason: 'solution', presetReward: 1, finalSql: gold1312 });
    expect(ep(1)).toMatchObject({ endReason: 'solution', presetReward: 0 });
    expect(ep(2)).toMatchObject({ endReason: 'turn-limit', presetReward: -1, finalSql: null });
    // The requests: the preset's tools, the calls sent back as tool_calls, each response as a tool message.
    const reqs = server.completions().filter((r) => questionOf(r.body, ids) === 1312);
    expect(reqs).toHaveLength(3);
    expect(reqs.every((r) => JSON.stringify(r.body?.tools) === JSON.stringify(VERL_TEXT2SQL_PRESET.tools))).toBe(true);
    const last = messagesOf(reqs[2]!.body) as Array<Msg & { tool_calls?: unknown; tool_call_id?: string }>;
    expect(last.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(last[2]).toMatchObject({ content: '<think>look</think>', tool_calls: [{ type: 'function' }] });
    expect(last[3]!.content).toBe(verlCase('ok-text').response_query_order);
    expect(last[5]!.content).toBe(verlCase('error-no-table').response_query_order);
    // The reference: `eval` of the final SQLs as a predictions file.
    const preds = jsonlFile(
      'verl-final.jsonl',
      file.samples.map((s: { questionId: number; sql: string }) => ({ question_id: s.questionId, sql: s.sql })),
    );
    const evalOut = tempFile('verl-eval.run.json');
    const ev = await runCli([
      'eval',
      '--predictions',
      preds,
      '--gold',
      files.gold,
      '--dataset',
      files.dataset,
      '--db-root',
      dbRoot,
      '--run-out',
      evalOut,
    ]);
    expect(ev.code, ev.stderr).toBe(0);
    expect(verdicts(runOut)).toEqual(verdicts(evalOut));
    expect(verdicts(runOut).map(([, ex]) => ex)).toEqual([1, 0, 0]);
  }, 120_000);
});

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const promptFixture = JSON.parse(
  readFileSync(new URL('../core/prompt/fixtures/preset-prompts.json', import.meta.url), 'utf8'),
) as {
  presets: Record<
    string,
    Array<{ questionId: number; prefill: string; messages: Array<{ role: string; sha256: string }> }>
  >;
};

describe('generate with single-turn presets', () => {
  const ids = [1312, 717, 195];

  it("omnisql-v1: the requests' messages equal the original's prompt byte for byte, the last ```sql block is scored", async () => {
    const files = subset(ids);
    const goldOf = (id: number) => goldLines[all.findIndex((q) => q.question_id === id)]!.split('\t')[0]!;
    // TEST DOUBLE of a policy: a wrong first block, then the gold in the last block.
    const server = await startOpenAiServer({
      models: ['omni'],
      text: (body) =>
        `Think.\n\`\`\`sql\nSELECT 'first'\n\`\`\`\nFinal:\n\`\`\`sql\n${goldOf(questionOf(body, ids))}\n\`\`\``,
    });
    servers.push(server);
    const runOut = tempFile('omni.run.json');
    const run = await runCli([
      'generate',
      '--endpoint',
      server.url,
      '--model',
      'omni',
      '--preset',
      'omnisql-v1',
      '--dataset',
      files.dataset,
      '--gold',
      files.gold,
      '--db-root',
      dbRoot,
      '--tables',
      tables,
      '--run-out',
      runOut,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const reqs = server.completions();
    expect(reqs).toHaveLength(3);
    for (const r of reqs) {
      const id = questionOf(r.body, ids);
      const expected = promptFixture.presets['omnisql-v1']!.find((x) => x.questionId === id)!;
      const msgs = messagesOf(r.body);
      expect(msgs.map((m) => m.role)).toEqual(expected.messages.map((m) => m.role));
      msgs.forEach((m, i) => expect(sha(m.content), `q${id} message ${i}`).toBe(expected.messages[i]!.sha256));
      expect(r.body).toMatchObject({ temperature: 0, top_p: 1, max_tokens: 2048, stop_token_ids: [151645], n: 1 });
      expect(r.body?.continue_final_message).toBeUndefined();
    }
    const file = readJson(runOut);
    expect(file.run.preset).toMatchObject({ id: 'omnisql-v1' });
    for (const s of file.samples) {
      expect(s.sql).toBe(goldOf(s.questionId));
      expect(s.extraction.rule).toBe('fenced-sql-last');
      expect(s.ex).toBe(1);
      expect(s.episode).toBeUndefined();
    }
  }, 120_000);

  it('arctic-text2sql-r1-v1: the assistant turn is pre-filled and continued; the completion keeps the prefill', async () => {
    const files = subset([1312]);
    const server = await startOpenAiServer({
      models: ['arctic'],
      text: () => ' I look.</think>\n<answer>\n```sql\nSELECT 1\n```\n</answer>',
    });
    servers.push(server);
    const runOut = tempFile('arctic.run.json');
    const run = await runCli([
      'generate',
      '--endpoint',
      server.url,
      '--model',
      'arctic',
      '--preset',
      'arctic-text2sql-r1-v1',
      '--dataset',
      files.dataset,
      '--gold',
      files.gold,
      '--db-root',
      dbRoot,
      '--tables',
      tables,
      '--run-out',
      runOut,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const [req] = server.completions();
    const msgs = messagesOf(req!.body);
    const expected = promptFixture.presets['arctic-text2sql-r1-v1']!.find((x) => x.questionId === 1312)!;
    expect(msgs.slice(0, -1).map((m) => sha(m.content))).toEqual(expected.messages.map((m) => m.sha256));
    expect(msgs.at(-1)).toEqual({ role: 'assistant', content: ARCTIC_TEXT2SQL_R1_PRESET.prefill });
    expect(req!.body).toMatchObject({ continue_final_message: true, add_generation_prompt: false });
    const [s] = readJson(runOut).samples;
    expect(s.completion.startsWith(ARCTIC_TEXT2SQL_R1_PRESET.prefill)).toBe(true);
    expect(s.sql).toBe('SELECT 1');
  }, 120_000);

  it('generate --help lists every preset with single/multi-turn; a preset needing tables.json without one is refused by name', async () => {
    const help = await runCli(['generate', '--help']);
    expect(help.code).toBe(0);
    for (const p of BUILTIN_PRESETS)
      expect(help.stdout).toMatch(new RegExp(`${p.id}\\s+${p.multiTurn ? 'multi-turn' : 'single-turn'}`));
    const files = subset([1312]);
    const run = await runCli([
      'generate',
      '--endpoint',
      'http://127.0.0.1:9/v1',
      '--model',
      'x',
      '--preset',
      'omnisql-v1',
      '--dataset',
      files.dataset,
      '--gold',
      files.gold,
      '--db-root',
      dbRoot,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--tables.*preset omnisql-v1 renders the schema.*give it with --tables FILE/s);
  }, 60_000);
});
