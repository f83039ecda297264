/**
 * A replayed multi-turn dump's episodes (src/core/formats/replay-episode.ts): a SkyRL eval dump
 * built from the 13 real mini-dev prediction files (tests/helpers/trainer-dumps.ts), paired by
 * the app's import path (pairRunPredictions), keeps per sample the turns of the dump's chat, the
 * trainer's score and the end; its final SQL's EX equals `eval`'s (planReplay + scoreRun of the
 * BIRD file) of the same SQL. Probe failures and cut episodes are read from the dump's own words.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import { pairRunPredictions } from '../../../src/adapters/import/pair-run.ts';
import { skyrlEpisode, verlToolEpisode } from '../../../src/core/formats/multi-turn-dump.ts';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { observedProbe, replayEpisode } from '../../../src/core/formats/replay-episode.ts';
import { episodeStats } from '../../../src/core/episode/stats.ts';
import { scoreRun } from '../../../src/core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG } from '../../../src/core/run/types.ts';
import type { EvalItem } from '../../../src/core/types.ts';
import { minidevDumpedVerdicts } from '../../helpers/eval-reference.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS, PREDICTION_FILES } from '../../helpers/series-dumps.ts';
import { predictionsOf, skyrlLines, skyrlProbes } from '../../helpers/trainer-dumps.ts';

const gold = parseGoldSql(readFileSync(MINIDEV_GOLD, 'utf8'), 'gold.sql');
const questions = parseQuestions(readFileSync(MINIDEV_QUESTIONS, 'utf8'), 'mini_dev_sqlite.json');
const pool = createNodeSqlPool({ dbRoot: DB_ROOT, workers: 1 });
afterAll(() => pool.dispose());
const LAST = PREDICTION_FILES.length - 1;

/** The SkyRL dump of prediction file `i`, paired as the app's import pairs it. */
const paired = (i: number) =>
  pairRunPredictions({
    predictionsName: 'bird.jsonl',
    predictionsText: skyrlLines(i).join('\n') + '\n',
    questions,
    gold,
    fence: 'last',
    strict: false,
  });

/**
 * The chat's segments as the chat template delimits them (not as the reader splits them): the
 * response cut at each `<|im_start|>ROLE\n`; assistant messages alternate with user messages
 * that hold one `<observation>`. Texts without the template's `<|im_end|>`, white space trimmed.
 */
function chatSegments(response: string): Array<{ assistant: string; observation: string | null }> {
  const parts = response.split(/<\|im_start\|>(?:user|assistant)\n/).map((p) => p.replace(/<\|im_end\|>\s*$/, ''));
  const out: Array<{ assistant: string; observation: string | null }> = [];
  for (let k = 0; k < parts.length; k += 2) {
    const user = parts[k + 1];
    const obs =
      user === undefined
        ? null
        : user
            .trim()
            .replace(/^<observation>/, '')
            .replace(/<\/observation>$/, '');
    out.push({ assistant: parts[k]!.trim(), observation: obs });
  }
  return out;
}

const scored = async (items: EvalItem[]) =>
  (await scoreRun(items, { ...DEFAULT_RUN_CONFIG, metrics: ['ex'], timeoutMs: 30_000 }, { executor: pool })).records;

describe('a SkyRL eval dump of the 13 real mini-dev files, replayed', () => {
  it("keeps per sample the turns of the dump's chat (policy text, probe, observation), the trainer's score and the end", async () => {
    for (let i = 0; i < PREDICTION_FILES.length; i++) {
      const lines = skyrlLines(i).map((l) => JSON.parse(l) as { output_response: string; score: number });
      const preds = predictionsOf(i);
      const { items } = await paired(i);
      expect(items).toHaveLength(preds.length);
      const byQuestion = new Map(items.map((it) => [it.questionId, it]));
      preds.forEach(({ q, sql }, k) => {
        const it = byQuestion.get(q.question_id)!;
        const ep = it.episode!;
        const segments = chatSegments(lines[k]!.output_response);
        expect(segments).toHaveLength(skyrlProbes(k) + 1);
        expect(ep.turns.map((t) => t.text.trim())).toEqual(segments.map((s) => s.assistant));
        expect(ep.turns.map((t) => t.observation)).toEqual(segments.map((s) => s.observation));
        // Each probe is the <sql> of its turn; the last turn has none; no probe failed (each observation is rows).
        ep.turns.forEach((t, n) => {
          if (n < segments.length - 1) expect(t.text).toContain(`<sql>${t.probeSql}</sql>`);
          else expect(t.probeSql).toBeNull();
        });
        expect(ep).toMatchObject({
          turnsUsed: segments.length,
          probesFailed: 0,
          finalSql: sql,
          endReason: 'solution',
          formatValid: true,
          presetReward: lines[k]!.score,
          replay: { format: 'skyrl', stopReason: 'stop' },
        });
        expect(it.predSql).toBe(sql);
      });
    }
  }, 300_000);

  it('scores each final SQL as eval scores the same SQL, and the samples carry their episodes', async () => {
    for (const i of [LAST]) {
      const samples = await scored((await paired(i)).items);
      // `eval --no-cache` of the BIRD file itself (the CLI's run, once per test run:
      // tests/helpers/eval-reference.ts): the same plan and recipe, from the predictions file.
      const ids = new Set(samples.map((s) => s.questionId));
      const ref = new Map(
        (await minidevDumpedVerdicts(PREDICTION_FILES[i]!)).samples
          .filter((s) => ids.has(s.questionId))
          .map((s) => [s.questionId, s]),
      );
      expect(samples).toHaveLength(ids.size);
      expect(ref.size).toBe(ids.size);
      for (const s of samples) {
        // The same SQL (the dump's helper trims the BIRD file's surrounding white space).
        expect(s.sql).toBe(ref.get(s.questionId)!.sql.trim());
        expect([s.questionId, s.status, s.ex]).toEqual([
          s.questionId,
          ref.get(s.questionId)!.status,
          ref.get(s.questionId)!.ex,
        ]);
        expect(s.episode?.turns.length).toBe(
          skyrlProbes(predictionsOf(i).findIndex((p) => p.q.question_id === s.questionId)) + 1,
        );
      }
      // The run's turn statistics read the replayed episodes: turns used, probes run, all answered.
      const stats = episodeStats(samples);
      expect(stats.episodes).toBe(samples.length);
      expect(stats.probes).toBe(predictionsOf(i).reduce((n, _, k) => n + skyrlProbes(k), 0));
      expect(stats.endedBySolution).toBe(samples.length);
    }
  }, 300_000);
});

describe("a dumped episode's failures and ends, in the dump's words", () => {
  const obs = (text: string) =>
    `\n\n<observation>${text}\n<reminder>You have 3 turns left to complete the task.</reminder></observation>\n\n`;
  const skyrl =
    `<think>a</think>\n<sql>SELECT * FROM nope</sql>${obs('Error executing SQL: no such table: nope, db file: /data/superhero/superhero.sqlite')}` +
    `<think>b</think>\n<sql>WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r) SELECT * FROM r</sql>${obs('SQL Timeout:\nWITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r) SELECT * FROM r')}` +
    `<think>c</think>\n<sql>SELECT 1</sql>${obs('   1\n0  1')}` +
    `<think>I keep thinking`;

  it("SkyRL: an error and a timeout observation are failed probes, a result is not; stop_reason 'length' without a solution is a cut episode", () => {
    const dumped = skyrlEpisode(skyrl);
    expect(dumped.sql).toBeNull();
    const ep = replayEpisode('skyrl', dumped.turns, dumped.sql, -1, { stopReason: 'length', maxTurns: 5 });
    expect(ep.turns.map((t) => t.probe)).toEqual([
      { columns: [], rows: [], classes: [], notKept: true, error: 'no such table: nope' },
      { columns: [], rows: [], classes: [], notKept: true, timedOut: true },
      { columns: [], rows: [], classes: [], notKept: true },
      null,
    ]);
    expect(ep).toMatchObject({
      turnsUsed: 4,
      probesFailed: 2,
      endReason: 'turn-limit',
      finalSql: null,
      formatValid: false,
      presetReward: -1,
    });
    const stats = episodeStats([{ ex: 0, status: 'ok', episode: ep }]);
    expect([stats.probes, stats.probesFailed, stats.cutByTurnLimit, stats.noFinalSql]).toEqual([3, 2, 1, 1]);
  });

  it("the turn limit: a SkyRL episode with max_turns policy turns and no solution is cut; with fewer, and stop_reason 'stop', it failed the format", () => {
    const dumped = skyrlEpisode(skyrl);
    expect(replayEpisode('skyrl', dumped.turns, null, -1, { stopReason: 'stop', maxTurns: 4 }).endReason).toBe(
      'turn-limit',
    );
    expect(replayEpisode('skyrl', dumped.turns, null, -1, { stopReason: 'stop', maxTurns: 5 }).endReason).toBe(
      'format-failure',
    );
    expect(replayEpisode('skyrl', dumped.turns, null, -1, { stopReason: null, maxTurns: null }).endReason).toBe(
      'format-failure',
    );
  });

  it("verl: the tool's JSON response with an error or the timeout is a failed probe; several responses to one turn are its observation", () => {
    const call = (sql: string) =>
      `<tool_call>\n{"name": "execute_sql", "arguments": {"sql_query": ${JSON.stringify(sql)}}}\n</tool_call>`;
    const resp = (text: string) => `<tool_response>\n{\n  "result": ${JSON.stringify(text)}\n}\n</tool_response>`;
    const output =
      `Let me look.\n${call('SELECT * FROM nope')}\n${call('SELECT 2')}user\n${resp('Error executing SQL: no such table: nope')}\n${resp('   2\n0  2')}\nassistant\n` +
      `Again.\n${call('SELECT 3')}user\n${resp('SQL execution timeout')}\nassistant\n<answer>SELECT 1</answer>`;
    const dumped = verlToolEpisode(output);
    expect(dumped.sql).toBe('SELECT 1');
    const ep = replayEpisode('verl', dumped.turns, dumped.sql, 1, { stopReason: null, maxTurns: null });
    expect(ep.turns).toHaveLength(3);
    expect(ep.turns[0]!.observation).toBe(
      `\n{\n  "result": "Error executing SQL: no such table: nope"\n}\n\n\n{\n  "result": "   2\\n0  2"\n}\n`,
    );
    expect(ep.turns.map((t) => t.probe && { error: t.probe.error, timedOut: t.probe.timedOut })).toEqual([
      { error: 'no such table: nope', timedOut: undefined },
      { error: undefined, timedOut: true },
      null,
    ]);
    expect(ep).toMatchObject({
      probesFailed: 2,
      endReason: 'solution',
      presetReward: 1,
      replay: { format: 'verl', stopReason: null },
    });
  });

  it('an observation alone tells nothing of a probe that is not an error or a timeout', () => {
    expect(observedProbe('Empty result set')).toEqual({ columns: [], rows: [], classes: [], notKept: true });
    expect(observedProbe('{"result": "Invalid SQL syntax: Empty SQL query"}').error).toBeUndefined();
  });
});
