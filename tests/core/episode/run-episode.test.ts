/** The runner's messages to the policy, stop strings and clock; the policy is a scripted TEST DOUBLE. */
import { describe, expect, it } from 'vitest';
import { runEpisode } from '../../../src/core/episode/run-episode.ts';
import { SKYRL_SQL_DEFAULTS } from '../../../src/core/episode/skyrl-sql.ts';
import type { ChatMessage, ChatOptions, ProbeResult } from '../../../src/core/episode/types.ts';

function scriptedPolicy(replies: { text: string; stoppedBy?: string }[]) {
  const calls: { messages: ChatMessage[]; options: ChatOptions }[] = [];
  return {
    calls,
    chat: async (messages: readonly ChatMessage[], options: ChatOptions) => {
      calls.push({ messages: [...messages], options });
      return replies[calls.length - 1] ?? { text: '' };
    },
  };
}
const oneRow: ProbeResult = { columns: ['x'], rows: [[1]], classes: [['real']] };
const prompt: ChatMessage[] = [{ role: 'user', content: 'Q' }];

describe('runEpisode', () => {
  it('puts back a stop string the engine cut, and continues one assistant message (SkyRL-SQL default)', async () => {
    const policy = scriptedPolicy([
      { text: '<think>a</think><sql>SELECT 1.0', stoppedBy: '</sql>' },
      { text: '<think>b</think><solution>SELECT 1.0</solution>' },
    ]);
    const probed: string[] = [];
    const ep = await runEpisode(
      { env: SKYRL_SQL_DEFAULTS, dbId: 'd' },
      { chat: policy.chat, probe: async (sql) => (probed.push(sql), oneRow), now: () => 0 },
      prompt,
    );
    expect(probed).toEqual(['SELECT 1.0']);
    expect(ep.turns[0]!.text).toBe('<think>a</think><sql>SELECT 1.0</sql>');
    // REAL 1.0 is a float column for pandas: `1.0`, not `1`.
    expect(ep.turns[0]!.observation).toBe(
      `\n\n<observation>  0\n1.0\n<reminder>You have 4 turns left to complete the task.</reminder></observation>\n\n`,
    );
    expect(policy.calls[0]!.options.continueFinal).toBe(false);
    expect(policy.calls[1]!.options).toEqual({ stop: ['</sql>', '</solution>'], continueFinal: true });
    expect(policy.calls[1]!.messages).toEqual([
      ...prompt,
      { role: 'assistant', content: ep.turns[0]!.text + ep.turns[0]!.observation },
    ]);
    expect(ep.endReason).toBe('solution');
    expect(ep.finalSql).toBe('SELECT 1.0');
    expect(ep.presetReward).toBeNull();
  });

  it('in conversation mode sends each observation as a user message', async () => {
    const policy = scriptedPolicy([{ text: 'no tag' }, { text: '<solution>SELECT 2</solution>' }]);
    const ep = await runEpisode(
      { env: { ...SKYRL_SQL_DEFAULTS, conversation: true }, dbId: 'd' },
      { chat: policy.chat, probe: async () => oneRow, now: () => 0 },
      prompt,
    );
    expect(policy.calls[1]!.messages).toEqual([
      ...prompt,
      { role: 'assistant', content: 'no tag' },
      { role: 'user', content: ep.turns[0]!.observation },
    ]);
    expect(policy.calls[1]!.options.continueFinal).toBe(false);
    // No <think> anywhere: SkyRL's format check fails, reward -1, the solution is still scored by EX.
    expect(ep.endReason).toBe('format-failure');
    expect(ep.presetReward).toBe(-1);
    expect(ep.finalSql).toBe('SELECT 2');
  });

  it('ends at the turn limit whatever the policy says, counting failed probes and timing each turn', async () => {
    const policy = scriptedPolicy(
      Array.from({ length: 9 }, () => ({ text: '<think>t</think><sql>SELECT nope</sql>' })),
    );
    let t = 0;
    const ep = await runEpisode(
      { env: { ...SKYRL_SQL_DEFAULTS, maxTurns: 3 }, dbId: 'd' },
      {
        chat: policy.chat,
        probe: async () => ({ columns: [], rows: [], classes: [], error: 'no such column: nope' }),
        now: () => (t += 5),
      },
      prompt,
    );
    expect(policy.calls).toHaveLength(3);
    expect(ep.endReason).toBe('turn-limit');
    expect(ep.probesFailed).toBe(2);
    expect(ep.turns.map((x) => x.ms)).toEqual([5, 5, 5]);
    expect(ep.turns[2]!.observation).toBeNull();
    expect(ep.finalSql).toBeNull();
    expect(ep.presetReward).toBe(-1);
  });
});
