import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GREEDY } from '../../src/core/engine/engine.ts';
import { judgeCacheKey, MemoryJudgeCache } from '../../src/core/rubric/judge-cache.ts';
import { renderTemplate } from '../../src/core/rubric/judge-prompts.ts';
import { sha256Hex } from '../../src/core/util/sha256.ts';

describe('the pure SHA-256 behind judge-cache keys', () => {
  it.each([
    '',
    'abc',
    'a'.repeat(55),
    'a'.repeat(56),
    'a'.repeat(64),
    'a'.repeat(1000),
    'Größe 🧪 医学 \u0000',
    'x'.repeat(100_003),
  ])('equals node:crypto for %#', (text) => {
    expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
  });
});

describe('judge-cache keys', () => {
  const msgs = [{ role: 'user' as const, content: 'grade this' }];
  it('change with the prompt text, the model and every sampling parameter that shapes the answer', () => {
    const base = judgeCacheKey(msgs, 'judge-a', GREEDY);
    expect(judgeCacheKey(msgs, 'judge-a', { ...GREEDY })).toBe(base);
    expect(judgeCacheKey([{ role: 'user', content: 'grade this!' }], 'judge-a', GREEDY)).not.toBe(base);
    expect(judgeCacheKey([{ role: 'system', content: 'grade this' }], 'judge-a', GREEDY)).not.toBe(base);
    expect(judgeCacheKey(msgs, 'judge-b', GREEDY)).not.toBe(base);
    for (const p of [{ temperature: 0.7 }, { topP: 0.9 }, { maxTokens: 64 }, { seed: 1 }, { stop: ['\n'] }]) {
      expect(judgeCacheKey(msgs, 'judge-a', { ...GREEDY, ...p })).not.toBe(base);
    }
  });

  it('the in-memory cache returns what was stored', async () => {
    const c = new MemoryJudgeCache();
    await c.set('k', { text: '{"score": 3}', finishReason: 'stop' });
    expect(await c.get('k')).toEqual({ text: '{"score": 3}', finishReason: 'stop' });
    expect(await c.get('other')).toBeUndefined();
    expect(c.size).toBe(1);
  });
});

describe('judge prompt templates', () => {
  it('fill placeholders in one pass: a completion that contains {{placeholders}} is not expanded', () => {
    const out = renderTemplate('<r>{{response}}</r>{{?reference}}<ref>{{reference}}</ref>{{/reference}}', {
      response: 'see {{reference}} and {{?reference}}x{{/reference}}',
      reference: 'GOLD',
    });
    expect(out).toBe('<r>see {{reference}} and {{?reference}}x{{/reference}}</r><ref>GOLD</ref>');
  });

  it('drop an optional section whose value is empty, and refuse a missing value', () => {
    expect(renderTemplate('a{{?reference}}[{{reference}}]{{/reference}}b', { reference: '' })).toBe('ab');
    expect(() => renderTemplate('{{question}}', {})).toThrow('{{question}} has no value');
  });
});
