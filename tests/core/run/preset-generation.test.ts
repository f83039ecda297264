/** The pure parts of preset generation: the sampling a preset fixes, and a cut stop string put back. */
import { describe, expect, it } from 'vitest';
import { inferredStop, presetEnv, presetSampling } from '../../../src/core/run/preset-generation.ts';
import { OMNISQL_PRESET, SKYRL_SQL_PRESET, VERL_TEXT2SQL_PRESET } from '../../../src/core/prompt/presets.ts';

describe('presetSampling', () => {
  it("self-consistency is the preset's 1 greedy + 8 sampled at its temperature, each sample its own seed", () => {
    const s = presetSampling(OMNISQL_PRESET, { selfConsistency: true, seed: 10 });
    expect(s.n).toBe(9);
    expect(s.paramsOf(0)).toMatchObject({
      n: 1,
      temperature: 0,
      topP: 1,
      seed: 10,
      maxTokens: 2048,
      stopTokenIds: [151645],
    });
    expect(s.paramsOf(1)).toMatchObject({ n: 1, temperature: 0.8, topP: 1, seed: 11 });
    expect(presetSampling(OMNISQL_PRESET).n).toBe(1);
    expect(presetSampling(VERL_TEXT2SQL_PRESET).paramsOf(3)).toMatchObject({ temperature: 1, seed: 3 });
  });

  it('a preset without a published self-consistency setting refuses it by name', () => {
    expect(() => presetSampling(SKYRL_SQL_PRESET, { selfConsistency: true })).toThrow(
      /skyrl-sql-v1 publishes no self-consistency/,
    );
  });
});

describe('inferredStop', () => {
  it('puts back a closing tag the server cut, only when its tag is still open', () => {
    expect(inferredStop('<think>a</think>\n<sql>SELECT 1', ['</sql>', '</solution>'])).toBe('</sql>');
    expect(inferredStop('<think>a</think>\n<solution>SELECT 1', ['</sql>', '</solution>'])).toBe('</solution>');
    expect(inferredStop('<sql>SELECT 1</sql>', ['</sql>', '</solution>'])).toBeNull();
    expect(inferredStop('<think>only thinking</think>', ['</sql>', '</solution>'])).toBeNull();
  });
});

describe('presetEnv', () => {
  it("plays SkyRL's environment with the preset's limits", () => {
    expect(presetEnv(SKYRL_SQL_PRESET, false)).toMatchObject({
      maxTurns: 5,
      probeTimeoutMs: 5000,
      conversation: false,
    });
  });

  it("plays the verl tutorial's tool-call environment with the preset's limits and tools; tool role as the engine allows", () => {
    const env = presetEnv(VERL_TEXT2SQL_PRESET, false, true);
    expect(env).toMatchObject({
      kind: 'verl-sql',
      maxTurns: 6,
      probeTimeoutMs: 30_000,
      maxResultChars: 9000,
      maxResultRows: 50,
      toolName: 'execute_sql',
      finalSummary: false,
      summaryPrompt: VERL_TEXT2SQL_PRESET.multiTurn!.finalSummaryPrompt,
      toolRole: true,
    });
    expect(env.kind === 'verl-sql' && env.tools).toEqual(VERL_TEXT2SQL_PRESET.tools);
    expect(presetEnv(VERL_TEXT2SQL_PRESET, true)).toMatchObject({ toolRole: false });
  });

  it('refuses an environment it cannot play, by name', () => {
    const odd = {
      ...SKYRL_SQL_PRESET,
      id: 'odd-v1',
      multiTurn: { ...SKYRL_SQL_PRESET.multiTurn!, probeStyle: 'tool-call' as const },
    };
    expect(() => presetEnv(odd, false)).toThrow(/odd-v1.*tool-call probes, skyrl-format-ex reward.*not played/);
  });
});
