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
  it("plays SkyRL's environment with the preset's limits; refuses the tool-call environment by name", () => {
    expect(presetEnv(SKYRL_SQL_PRESET, false)).toMatchObject({
      maxTurns: 5,
      probeTimeoutMs: 5000,
      conversation: false,
    });
    expect(() => presetEnv(VERL_TEXT2SQL_PRESET, false)).toThrow(/verl-text2sql-v1.*not played/);
  });
});
