/**
 * The trainers' dump rows (src/core/formats/harness.ts, multi-turn-dump.ts): SkyRL's and verl's
 * multi-turn episodes split into turns with the final SQL taken by the trainer's own rule, TRL
 * completions rows and prime-rl traces with every reward kept, and the records the replay plan
 * reads (the trainer's SQL as `sqls`).
 */
import { describe, expect, it } from 'vitest';
import {
  detectHarnessFormat,
  mapHarnessRows,
  primeRlTraceRows,
  skyrlRows,
  trlRows,
  verlRows,
} from '../../../src/core/formats/harness.ts';
import { skyrlEpisode, verlToolEpisode } from '../../../src/core/formats/multi-turn-dump.ts';
import { predictionsFromRecords } from '../../../src/core/formats/prediction-records.ts';
import type { Question } from '../../../src/core/types.ts';
import { primeRlEpisode, skyrlResponse } from '../../helpers/trainer-dumps.ts';
import { questions as minidev } from '../../helpers/series-dumps.ts';

const rec = (value: unknown, line = 1) => ({ value, line, where: `dump.jsonl:${line}` });
const Q: Question = {
  questionId: 7,
  dbId: 'superhero',
  question: 'How many heroes are there?',
  evidence: '',
  goldSql: 'SELECT COUNT(*) FROM superhero',
  difficulty: 'simple',
};

describe('SkyRL episodes', () => {
  it('splits a decoded response into assistant turns (with their probe) and observations, and takes the <solution>', () => {
    const ep = skyrlEpisode(skyrlResponse('SELECT COUNT(*) FROM superhero', 2));
    expect(ep.turns.map((t) => t.role)).toEqual(['assistant', 'observation', 'assistant', 'observation', 'assistant']);
    expect(ep.turns[0]).toMatchObject({ probe: "SELECT name FROM sqlite_master WHERE type='table'" });
    expect(ep.turns[2]).toMatchObject({ probe: 'SELECT COUNT(*) FROM superhero LIMIT 5' });
    expect(ep.turns[1]!.text).toContain('You have 4 turns left');
    // The template's tokens are not part of any turn.
    expect(ep.turns.some((t) => t.text.includes('<|im_'))).toBe(false);
    expect(ep.turns[4]).toMatchObject({ role: 'assistant', probe: null });
    expect(ep).toMatchObject({ sql: 'SELECT COUNT(*) FROM superhero', formatOk: true });
  });

  it("fails SkyRL's format check as SkyRL does: two solutions, no <think>, no <think> after an observation", () => {
    expect(skyrlEpisode('<think>a</think><solution>SELECT 1</solution><solution>SELECT 2</solution>').sql).toBeNull();
    expect(skyrlEpisode('<solution>SELECT 1</solution>').sql).toBeNull();
    expect(
      skyrlEpisode('<think>a</think><sql>SELECT 1</sql><observation>1</observation> <solution>SELECT 1</solution>').sql,
    ).toBeNull();
  });

  it("a row without a final SQL by SkyRL's rule is scored as no SQL, never as its probe (which the extraction rules would take)", () => {
    const response = '<think>look</think>\n<sql>SELECT COUNT(*) FROM superhero</sql>';
    const rows = skyrlRows([
      rec({
        input_prompt: `Question: ${Q.question}`,
        output_response: response,
        score: -1,
        stop_reason: 'length',
        env_extras: { db_id: 'superhero', reward_spec: { ground_truth: Q.goldSql } },
      }),
    ]);
    const [run] = mapHarnessRows(rows, [Q]);
    expect(run!.records[0]!.value).toEqual({ question_id: 7, completions: [response], sqls: [''] });
    const [pred] = predictionsFromRecords(run!.records, 'dump', {});
    expect(pred).toMatchObject({ sql: '', completion: response });
    expect(run!.sampleScores.get(7)).toEqual([-1]);
    expect(run!.turnSummary).toBe(
      "1 multi-turn episodes, 1.00 turns on average, 1 probes, 1 without a final SQL by the trainer's rule",
    );
    expect(run!.sampleTurns.get(7)![0]).toEqual([
      { role: 'assistant', text: response, probe: 'SELECT COUNT(*) FROM superhero' },
    ]);
  });

  it('maps by env_extras ground truth when the prompt holds no question text; a list of per-token rewards is summed', () => {
    const rows = skyrlRows([
      rec({
        input_prompt: 'no question here',
        output_response: '<think>x</think><solution>SELECT 1</solution>',
        score: [0, 0, 1],
        env_extras: { reward_spec: { ground_truth: 'select count(*)  from superhero;' } },
      }),
    ]);
    const [run] = mapHarnessRows(rows, [Q]);
    expect(run!.byRule['gold SQL']).toBe(1);
    expect(run!.sampleScores.get(7)).toEqual([1]);
  });
});

describe('verl multi-turn (tool) episodes', () => {
  const output =
    '<think>check</think>\n<tool_call>\n{"name": "execute_sql", "arguments": {"sql_query": "SELECT COUNT(*) FROM superhero"}}\n</tool_call>\nuser\n<tool_response>\n[(750,)]\n</tool_response>\nassistant\n<think>done</think>\n<answer>SELECT COUNT(*) FROM superhero</answer>';

  it("splits tool calls and responses into turns and takes the tutorial's <answer>", () => {
    const ep = verlToolEpisode(output);
    expect(ep.turns).toEqual([
      {
        role: 'assistant',
        text: '<think>check</think>\n<tool_call>\n{"name": "execute_sql", "arguments": {"sql_query": "SELECT COUNT(*) FROM superhero"}}\n</tool_call>',
        probe: 'SELECT COUNT(*) FROM superhero',
      },
      { role: 'observation', text: '\n[(750,)]\n' },
      { role: 'assistant', text: '<think>done</think>\n<answer>SELECT COUNT(*) FROM superhero</answer>', probe: null },
    ]);
    expect(ep.sql).toBe('SELECT COUNT(*) FROM superhero');
  });

  it('a verl row with tool turns gets the answer as its SQL; a single-turn row is unchanged', () => {
    const rows = verlRows([
      rec({ input: Q.question, output, score: 1, step: 3 }),
      rec({ input: Q.question, output: '```sql\nSELECT 2\n```', score: 0, step: 3 }, 2),
    ]);
    expect(rows[0]!.sqls).toEqual(['SELECT COUNT(*) FROM superhero']);
    expect(rows[1]!.sqls).toBeUndefined();
    const [run] = mapHarnessRows(rows, [Q]);
    // The single-turn sample keeps the extraction rules' SQL.
    expect(run!.records[0]!.value).toMatchObject({ sqls: ['SELECT COUNT(*) FROM superhero', 'SELECT 2'] });
  });

  it("two <answer> tags fail the tutorial's rule: no SQL", () => {
    expect(
      verlToolEpisode('<tool_call>{}</tool_call><answer>SELECT 1</answer><answer>SELECT 2</answer>').sql,
    ).toBeNull();
  });
});

describe('TRL completions rows', () => {
  it("keeps each reward column and the advantage, NaN as null; the own score is the columns' sum", () => {
    const rows = trlRows([
      rec({
        step: 50,
        prompt: `user\n${Q.question}`,
        completion: '```sql\nSELECT 1\n```',
        accuracy_reward: 1,
        format_reward: NaN,
        advantage: 0.25,
        note: 'log_extra text',
      }),
    ]);
    expect(rows[0]).toMatchObject({
      step: 50,
      score: 1,
      rewards: { accuracy_reward: 1, format_reward: null, advantage: 0.25 },
    });
    expect(detectHarnessFormat({ step: 1, prompt: '', completion: '', advantage: 0 })).toBe('trl');
    expect(() => trlRows([rec({ step: 'x', prompt: '', completion: '' })])).toThrow(/"step" must be an integer/);
  });
});

describe('prime-rl traces', () => {
  const q = minidev.find((x) => x.db_id === 'superhero')!;

  it('one sample per trace: the last assistant message, the turns after the prompt, every reward and their weighted sum', () => {
    const episode = primeRlEpisode(q, 'SELECT 1', 1, 100, 0);
    expect(detectHarnessFormat(episode)).toBe('prime-rl-traces');
    const [row] = primeRlTraceRows([rec(episode)]);
    expect(row).toMatchObject({
      completions: ['SELECT 1'],
      questionText: q.question,
      target: q.SQL,
      score: 1.5,
      rewards: { exact_match: 1, format: 1 },
    });
    expect(row!.turns![0]).toEqual([
      { role: 'assistant', text: 'Let me look at the schema.', probe: 'SELECT COUNT(*) FROM sqlite_master' },
      { role: 'observation', text: '[(12,)]' },
      { role: 'assistant', text: 'SELECT 1', probe: null },
    ]);
  });

  it('follows the branch to the last assistant node (a sibling branch is left out); an episode with no trace is a sample with no output', () => {
    const episode = primeRlEpisode(q, 'SELECT 1', 0, 100, 0);
    const nodes = episode.traces[0]!.nodes;
    // A second branch from the user message: the last assistant node answers directly.
    nodes.push({ ...nodes[4]!, parent: 1, message: { role: 'assistant', content: 'SELECT 2' } });
    const [row] = primeRlTraceRows([rec(episode)]);
    expect(row!.completions).toEqual(['SELECT 2']);
    expect(row!.turns).toBeUndefined();
    const [failed] = primeRlTraceRows([rec({ ...episode, ok: false, traces: [] })]);
    expect(failed).toMatchObject({ completions: [''], rewards: {} });
    expect(() => primeRlTraceRows([rec({ task: {} })])).toThrow(/expected a prime-rl episode record/);
  });
});
