/**
 * presetContextProblem: a preset run refused before it starts when its first prompt plus its
 * turns cannot fit the loaded model's context, with the prompt's tokens, the need, the context
 * and what to set; none when it fits.
 */
import { describe, expect, it } from 'vitest';
import { presetContextProblem, presetTurns, suggestedContext } from '../../src/core/run/preset-context.ts';
import { OMNISQL_PRESET, SKYRL_SQL_PRESET, VERL_TEXT2SQL_PRESET } from '../../src/core/prompt/presets.ts';

describe('presetContextProblem', () => {
  it('counts every turn of a multi-turn preset (and the final summary), one reply of a single-turn one', () => {
    expect(presetTurns(SKYRL_SQL_PRESET)).toBe(SKYRL_SQL_PRESET.multiTurn!.maxTurns);
    expect(
      presetTurns({ ...VERL_TEXT2SQL_PRESET, multiTurn: { ...VERL_TEXT2SQL_PRESET.multiTurn!, finalSummary: true } }),
    ).toBe(VERL_TEXT2SQL_PRESET.multiTurn!.maxTurns + 1);
    expect(presetTurns(OMNISQL_PRESET)).toBe(1);
  });

  it("refuses SkyRL's 5 turns on stories260K's 2048 tokens, naming the prompt, the need, the context and the CPU engine's setting", () => {
    const msg = presetContextProblem({
      preset: SKYRL_SQL_PRESET,
      engine: 'wllama',
      questionId: 1471,
      promptTokens: 5716,
      maxTokens: 16,
      contextWindow: 2048,
    });
    expect(msg).toBe(
      "preset skyrl-sql-v1 does not fit the loaded model's context: the first prompt (question 1471) is 5716 tokens and " +
        'its 5 turns of up to 16 tokens each (observations come on top) bring a request to 5796 tokens, more than the context of 2048 tokens: ' +
        'set "Context (tokens)" on the Generate screen to at least 6144 and load the model again ' +
        "(beyond the model's training context llama.cpp still runs it, and quality may drop), or lower max tokens",
    );
  });

  it('accepts the run once the need fits, exactly at the context too', () => {
    const base = { preset: SKYRL_SQL_PRESET, engine: 'wllama', questionId: 1, promptTokens: 5716, maxTokens: 16 };
    expect(presetContextProblem({ ...base, contextWindow: 8192 })).toBeNull();
    expect(presetContextProblem({ ...base, contextWindow: 5796 })).toBeNull();
    expect(presetContextProblem({ ...base, contextWindow: 5795 })).toMatch(
      /bring a request to 5796 tokens, more than the context of 5795/,
    );
  });

  it('tells other engines to use a longer context, and a single-turn preset names its one reply', () => {
    const msg = presetContextProblem({
      preset: OMNISQL_PRESET,
      engine: 'webllm',
      questionId: 7,
      promptTokens: 4000,
      maxTokens: 2048,
      contextWindow: 4096,
    });
    expect(msg).toMatch(
      /the first prompt \(question 7\) is 4000 tokens and its reply of up to 2048 tokens bring a request to 6048 tokens/,
    );
    expect(msg).toMatch(/: use a model or server with a longer context, or lower max tokens$/);
    expect(suggestedContext(6048)).toBe(6144);
    expect(suggestedContext(2048)).toBe(2048);
  });
});
