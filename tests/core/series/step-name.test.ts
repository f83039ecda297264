/** The step of a checkpoint's file from its name: the built-in rules, their order, and a user's --step-pattern. */
import { describe, expect, it } from 'vitest';
import { compileStepPattern, stepFromName } from '../../../src/core/series/step-name.ts';

describe('stepFromName', () => {
  it.each([
    ['200.jsonl', 200, '<N>.<ext>'],
    ['val/1300.jsonl', 1300, '<N>.<ext>'],
    ['global_step_200/samples_bird_2025-01-01T00-00-00.jsonl', 200, 'global_step_<N>'],
    ['checkpoint-450/results.json', 450, 'checkpoint-<N>'],
    ['run/step-80.eval', 80, 'step-<N>'],
    ['eval_rollouts_step_12.jsonl', 12, 'step-<N>'],
    ['predict_step300.json', 300, 'step-<N>'],
  ])('%s -> step %i', (name, step, rule) => {
    const got = stepFromName(name);
    expect(got?.step).toBe(step);
    expect(got?.rule).toContain(rule);
  });

  it("prefers the segment nearest the file: a file named by step inside a checkpoint folder takes the file's step", () => {
    expect(stepFromName('checkpoint-100/step-120.jsonl')?.step).toBe(120);
  });

  it('finds no step in a name without one, nor in digits that are part of a word', () => {
    expect(stepFromName('samples_bird_sql.jsonl')).toBeNull();
    expect(stepFromName('qwen2.5-7b.jsonl')).toBeNull();
    expect(stepFromName('footstep3.jsonl')).toBeNull();
  });

  it('a --step-pattern replaces the rules: first capture group or the group named step, on the whole path', () => {
    expect(stepFromName('runs/ckpt_7/out.jsonl', compileStepPattern('ckpt_(\\d+)'))).toEqual({
      step: 7,
      rule: '/ckpt_(\\d+)/',
    });
    expect(stepFromName('it-5-of-9.json', compileStepPattern('it-(?<step>\\d+)'))?.step).toBe(5);
    expect(stepFromName('200.jsonl', compileStepPattern('ckpt_(\\d+)'))).toBeNull();
  });

  it('refuses a pattern without a capture group or that is not a regular expression, naming the flag', () => {
    expect(() => compileStepPattern('step\\d+')).toThrow(/--step-pattern.*no capture group/);
    expect(() => compileStepPattern('step(')).toThrow(/--step-pattern.*not a regular expression/);
  });
});
