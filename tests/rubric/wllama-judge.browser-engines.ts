/**
 * The CPU engine as judge, in headless Chromium: the real 260K-parameter stories260K.gguf
 * (../shared/data/models) reads the judge prompts and writes stories, never the required JSON.
 * Every verdict must end `unparseable` with the model's raw answer kept, no score invented,
 * and a second pass must come from the judge cache.
 *
 * Not yet collected by any vitest project: it belongs to the `browser-engines` project
 * (cross-origin isolation, @wllama/wllama pre-bundled), whose include lists tests/engines/
 * only; under the plain `browser` project Vite discovers @wllama/wllama mid-run and reloads
 * the page. To enable it, add 'tests/rubric/*.browser-engines.ts' to the browser-engines
 * project's `include` in vite.config.ts (with only that change it passes, in about 30 s).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWllamaEngine, type WllamaEngine } from '../../src/adapters/engines/wllama-engine.ts';
import { MemoryJudgeCache } from '../../src/core/rubric/judge-cache.ts';
import { Judge } from '../../src/core/rubric/judge.ts';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import { scoreSample } from '../../src/core/rubric/score.ts';
import { sharedFile } from '../engines/shared-files.ts';

let engine: WllamaEngine;
beforeAll(async () => {
  engine = createWllamaEngine({ threads: 1 });
  const ref = engine.addFile('stories260K.gguf', await sharedFile('models/stories260K.gguf'));
  await engine.load(ref);
});
afterAll(async () => {
  await engine?.unload();
});

describe('stories260K on the CPU engine as judge', () => {
  it('its answers never parse: criteria, implicit and Likert end `unparseable` with the raw answer kept', async () => {
    const text = await (await fetch('/rubrics/example-rar.jsonl')).text();
    const [row] = parseRarJsonl(text, 'example-rar.jsonl');
    const rubric = { ...row!.rubric, items: row!.rubric.items.slice(0, 3) };
    const cache = new MemoryJudgeCache();
    const judge = new Judge({ engine, model: 'stories260K.gguf', params: { maxTokens: 24 }, retries: 1, cache });
    const sample = {
      question: row!.question,
      reference: row!.referenceAnswer,
      completion: 'Call 911 now and chew an aspirin.',
    };
    const s = await scoreSample(rubric, sample, { judge });
    expect(s.judge).toMatchObject({ engine: 'wllama', model: 'stories260K.gguf' });
    expect(s.criteria).toHaveLength(3);
    for (const c of s.criteria) {
      expect(c).toMatchObject({ status: 'unparseable', met: null, attempts: 2, source: 'judge' });
      expect(typeof c.raw).toBe('string');
      expect(c.raw!.length).toBeGreaterThan(0);
      expect(c.explanation).toContain('unparseable judge answer');
    }
    expect(s.explicit).toMatchObject({ score: null, status: 'incomplete' });
    for (const j of [s.implicit!, s.likert!]) {
      expect(j).toMatchObject({ status: 'unparseable', score: null, rawScore: null, attempts: 2 });
      expect(j.raw!.length).toBeGreaterThan(0);
    }
    expect(judge.stats).toMatchObject({ calls: 10, malformed: 10, errors: 0 });

    // The same prompts, model and parameters again: every answer from the cache.
    const again = await scoreSample(rubric, sample, { judge });
    expect(judge.stats.calls).toBe(10);
    expect(again.criteria.map((c) => [c.raw, c.cached])).toEqual(s.criteria.map((c) => [c.raw, true]));
  }, 300_000);
});
