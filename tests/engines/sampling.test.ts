import { describe, expect, it } from 'vitest';
import { GREEDY, type SamplingParams } from '../../src/core/engine/engine.ts';
import { applyStop, meanLogprob, sampleSeed, validateSampling } from '../../src/core/engine/sampling.ts';
import { PLAIN_TEMPLATE_STOP, renderPlainChat } from '../../src/core/engine/plain-template.ts';

describe('sampling parameters', () => {
  it('accepts the greedy defaults', () => {
    expect(() => validateSampling(GREEDY)).not.toThrow();
  });

  it.each<[Partial<SamplingParams>, string]>([
    [{ n: 0 }, 'n must be an integer >= 1, got 0'],
    [{ n: 1.5 }, 'n must be an integer >= 1, got 1.5'],
    [{ temperature: -1 }, 'temperature must be >= 0, got -1'],
    [{ topP: 0 }, 'topP must be in (0, 1], got 0'],
    [{ maxTokens: 0 }, 'maxTokens must be an integer >= 1, got 0'],
    [{ seed: 1.5 }, 'seed must be a non-negative integer or null, got 1.5'],
    [{ stop: [''] }, 'stop must be a list of non-empty strings'],
  ])('rejects %o naming the parameter', (change, message) => {
    expect(() => validateSampling({ ...GREEDY, ...change })).toThrow(`invalid sampling parameter: ${message}`);
  });

  it('gives sample i the seed seed + i, and no seed when none is set', () => {
    expect(sampleSeed({ ...GREEDY, seed: 10 }, 3)).toBe(13);
    expect(sampleSeed({ ...GREEDY, seed: null }, 3)).toBeNull();
  });

  it('averages finite log-probabilities and reports none for an empty list', () => {
    expect(meanLogprob([-1, -2, -3])).toBe(-2);
    expect(meanLogprob([-1, Number.NEGATIVE_INFINITY])).toBe(-1);
    expect(meanLogprob([])).toBeNull();
    expect(meanLogprob(null)).toBeNull();
  });

  it('cuts a text at the earliest stop string', () => {
    expect(applyStop('SELECT 1;\nUser: hi\nSystem: x', ['\nSystem:', '\nUser:'])).toEqual({
      text: 'SELECT 1;',
      stopped: true,
    });
    expect(applyStop('SELECT 1', ['\nUser:'])).toEqual({ text: 'SELECT 1', stopped: false });
  });
});

describe('plain chat template', () => {
  it('writes Role: content turns separated by blank lines and ends with Assistant:', () => {
    expect(
      renderPlainChat([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: ' Which table? \n' },
      ]),
    ).toBe('System: Be brief.\n\nUser: Which table?\n\nAssistant:');
    expect(PLAIN_TEMPLATE_STOP).toEqual(['\nUser:', '\nSystem:']);
  });
});
