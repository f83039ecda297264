/**
 * The SkyRL-SQL environment against SkyRL's own code: fixtures/skyrl-episodes.json holds what
 * skyrl-gym's SQLEnv gave for scripted actions on the mini-dev databases (fixtures/README.md).
 * The policy is a TEST DOUBLE: the loopback OpenAI-compatible server plays each fixture's fixed
 * actions; the probes are real (sql.js over the real database, tests/helpers/sqljs-probe.ts); the
 * judge is the SQL worker's own EX (workers/sql-engine.ts, what `eval` runs) on the final SQL.
 */
import { readFileSync } from 'node:fs';
import initSqlJs from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../../src/core/episode/run-episode.ts';
import { SKYRL_SQL_DEFAULTS, resultText, type SkyrlSqlEnv } from '../../../src/core/episode/skyrl-sql.ts';
import type { ChatMessage, ChatOptions, ChatReply, Episode } from '../../../src/core/episode/types.ts';
import { createSqlEngine } from '../../../workers/sql-engine.ts';
import type { SqlWorkerApi } from '../../../workers/sql.api.ts';
import { startOpenAiServer, type OpenAiServer } from '../../helpers/openai-server.ts';
import { sharedData } from '../../helpers/shared-data.ts';
import { sqlJsProbe } from '../../helpers/sqljs-probe.ts';
import { decodeRows, type FixtureCell } from './py-values.ts';

interface FixtureStep {
  action: string;
  done: boolean;
  reward: number;
  observation: string | null;
  observation_query_order: string | null;
  probe_sql: string | null;
  rows_original_order?: FixtureCell[][] | null;
}
interface FixtureEpisode {
  name: string;
  question_id: number;
  db_id: string;
  gold_sql: string;
  max_turns: number;
  steps: FixtureStep[];
  turns: number;
  final_reward: number;
  format_valid: boolean;
  solution: string | null;
  db_file: string;
}

const episodes = (
  JSON.parse(readFileSync(new URL('./fixtures/skyrl-episodes.json', import.meta.url), 'utf8')) as {
    episodes: FixtureEpisode[];
  }
).episodes;

const WRITES = /^\s*(insert|delete|drop)\b/i;
const reminder = (left: number) => `<reminder>You have ${left} turns left to complete the task.</reminder>`;

/** The chat port over the loopback server, as an OpenAI-compatible engine would call it. */
function openAiChat(server: OpenAiServer) {
  return async (messages: readonly ChatMessage[], options: ChatOptions): Promise<ChatReply> => {
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'scripted-policy',
        messages,
        stop: options.stop,
        stream: false,
        ...(options.continueFinal ? { continue_final_message: true, add_generation_prompt: false } : {}),
      }),
    });
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    return { text: body.choices[0]!.message.content };
  };
}

let engine: SqlWorkerApi;
const played = new Map<string, { episode: Episode; server: OpenAiServer }>();

beforeAll(async () => {
  engine = createSqlEngine(() => initSqlJs());
  await engine.init({ cacheBytes: 256 * 1024 * 1024 });
  for (const db of new Set(episodes.map((e) => e.db_id))) {
    await engine.loadDb(db, new Uint8Array(readFileSync(sharedData('bird', 'databases', db, `${db}.sqlite`))));
  }
  for (const fx of episodes) {
    const actions = fx.steps.map((s) => s.action);
    // TEST DOUBLE of a policy: answers completion request k with the fixture's k-th action.
    const server = await startOpenAiServer({ text: (_body, _i, call) => actions[call - 1] ?? '' });
    const probe = sqlJsProbe(
      new Uint8Array(readFileSync(sharedData('bird', 'databases', fx.db_id, `${fx.db_id}.sqlite`))),
    );
    let clock = 0;
    const env: SkyrlSqlEnv = { ...SKYRL_SQL_DEFAULTS, maxTurns: fx.max_turns, dbFile: fx.db_file };
    try {
      const episode = await runEpisode(
        { env, dbId: fx.db_id },
        {
          chat: openAiChat(server),
          probe: (sql, o) => probe.probe(sql, o),
          now: () => (clock += 7),
          judge: async (sql) => {
            const r = await engine.evaluate({
              dbId: fx.db_id,
              predSql: sql,
              goldSql: fx.gold_sql,
              readOnly: true,
              softF1: false,
              previewRows: 0,
            });
            if (r.kind !== 'done') throw new Error('database not loaded');
            return r.ex === 1;
          },
        },
        [{ role: 'user', content: `question ${fx.question_id}` }],
      );
      played.set(fx.name, { episode, server });
    } finally {
      await probe.close();
    }
  }
}, 120_000);

afterAll(async () => {
  for (const { server } of played.values()) await server.close();
});

describe.each(episodes.map((e) => [e.name, e] as const))('SkyRL-SQL episode %s', (name, fx) => {
  it("SkyRL's observation text in SkyRL's own row order equals ours for the same rows, byte for byte", () => {
    fx.steps.forEach((s, k) => {
      if (!s.rows_original_order) return;
      const left = fx.max_turns - (k + 1);
      expect(s.observation).toBe(
        `\n\n<observation>${resultText(decodeRows(s.rows_original_order))}\n${reminder(left)}</observation>\n\n`,
      );
    });
  });

  it("plays every turn: each observation equals SkyRL's (rows in the query's order), writes refused", () => {
    const { episode } = played.get(name)!;
    expect(episode.turns.map((t) => t.text)).toEqual(fx.steps.map((s) => s.action));
    expect(episode.turnsUsed).toBe(fx.turns);
    episode.turns.forEach((t, k) => {
      const s = fx.steps[k]!;
      expect(t.probeSql).toBe(s.probe_sql);
      if (s.probe_sql !== null && WRITES.test(s.probe_sql)) {
        // SkyRL runs the write inside a transaction and rolls it back; we never run it.
        expect(s.observation).toContain('<observation>Empty DataFrame\nColumns: []\nIndex: []\n');
        expect(t.observation).toBe(
          `\n\n<observation>Error executing SQL: attempt to write a readonly database, db file: ${fx.db_file}\n${reminder(fx.max_turns - k - 1)}</observation>\n\n`,
        );
      } else {
        expect(t.observation).toBe(s.observation_query_order);
        if (s.observation === s.observation_query_order) expect(t.observation).toBe(s.observation);
      }
      expect(t.ms).toBe(7);
    });
  });

  it("ends as SkyRL's episode ended, with SkyRL's reward from the run's EX on the final SQL", () => {
    const { episode } = played.get(name)!;
    expect(episode.formatValid).toBe(fx.format_valid);
    expect(episode.presetReward).toBe(fx.final_reward);
    if (fx.format_valid) expect(episode.finalSql).toBe(fx.solution);
    const last = fx.steps[fx.steps.length - 1]!.action;
    const solved = last.includes('<solution>') && last.includes('</solution>');
    expect(episode.endReason).toBe(solved ? (fx.format_valid ? 'solution' : 'format-failure') : 'turn-limit');
  });
});

describe('SkyRL-SQL fixtures cover the cases', () => {
  const obs = episodes.flatMap((e) => e.steps.map((s) => s.observation ?? ''));
  it.each([
    ['a result', (o: string) => /<observation> +0/.test(o)],
    ['an error', (o: string) => o.includes('Error executing SQL: no such table')],
    ['a syntax error', (o: string) => o.includes('syntax error')],
    ['a result cut to 50 rows', (o: string) => o.includes('Truncated to 50 lines') && o.length > 20_000],
    ['a timeout', (o: string) => o.includes('SQL Timeout:')],
    ['an action without a probe', (o: string) => o.includes('Your previous action is invalid')],
    ['an empty result', (o: string) => o.includes('Empty DataFrame')],
  ])('%s', (_name, test) => {
    expect(obs.some(test)).toBe(true);
  });
  it('a turn limit, a solution and a format failure', () => {
    expect(episodes.map((e) => e.final_reward).sort()).toEqual([-1, -1, 0, 1, 1]);
  });
});
