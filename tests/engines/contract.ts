/**
 * The Engine contract: what the run layer may rely on, whichever engine produces the
 * completions. `engineContract` registers the same tests for every engine that runs here
 * (replay and OpenAI-compatible in Node, the CPU engine in headless Chromium through a proxy).
 *
 * The last test pushes each completion through the rest of the pipeline (SQL extraction and
 * the sample record's fields) so that an engine whose output is not SQL still yields a
 * well-formed sample with rule `none`.
 */
import { describe, expect, it } from 'vitest';
import { GREEDY, type Completion, type Engine, type ModelRef, type Prompt } from '../../src/core/engine/engine.ts';
import { isEngineError } from '../../src/core/engine/engine-error.ts';
import { extractSql } from '../../src/core/sql/extract-sql.ts';

export interface ContractSubject {
  /** A fresh engine, not loaded. */
  create(): Promise<Engine> | Engine;
  model: ModelRef;
  prompt: Prompt;
  /** The extraction rules this engine's completions may produce for `prompt`. */
  expectedRules: readonly string[];
  /** Generation length for the tests (small for slow engines). */
  maxTokens?: number;
}

const FINISH = ['stop', 'length', 'abort', 'error'];

function expectWellFormed(c: Completion): void {
  expect(typeof c.text).toBe('string');
  expect(FINISH).toContain(c.finishReason);
  for (const n of [c.tokensIn, c.tokensOut]) if (n !== null) expect(Number.isInteger(n) && n >= 0).toBe(true);
  expect(c.latencyMs).toBeGreaterThanOrEqual(0);
  if (c.meanLogprob !== null) expect(c.meanLogprob).toBeLessThanOrEqual(0);
  if (c.finishReason === 'error') expect(c.error).toEqual(expect.any(String));
}

async function rejection(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    expect(isEngineError(err)).toBe(true);
    return err as { code: string; message: string };
  }
  throw new Error('expected the call to reject');
}

export function engineContract(title: string, subject: () => ContractSubject): void {
  describe(`Engine contract: ${title}`, () => {
    const params = () => ({ ...GREEDY, maxTokens: subject().maxTokens ?? 64 });

    it('names its kind and declares its capabilities as booleans', async () => {
      const engine = await subject().create();
      expect(engine.kind).toMatch(/^[a-z]+$/);
      for (const v of Object.values(engine.capabilities)) expect(typeof v).toBe('boolean');
      // continueFinal and toolRole are optional (engines that can continue a final assistant message, or take tool messages, say so).
      const keys = Object.keys(engine.capabilities).filter((k) => k !== 'continueFinal' && k !== 'toolRole');
      expect(keys.sort()).toEqual(['logprobs', 'nativeN', 'streaming', 'tokenize']);
    });

    it('refuses to generate before load() with NOT_LOADED', async () => {
      const s = subject();
      const engine = await s.create();
      expect((await rejection(engine.generate(s.prompt, params()))).code).toBe('NOT_LOADED');
    });

    it('generates one well-formed sample with seed 0 for greedy parameters, and keeps a context window', async () => {
      const s = subject();
      const engine = await s.create();
      await engine.load(s.model);
      const [c, ...rest] = await engine.generate(s.prompt, params());
      expect(rest).toHaveLength(0);
      expectWellFormed(c!);
      expect(['stop', 'length']).toContain(c!.finishReason);
      expect(c!.seed).toBe(0);
      const window = engine.contextWindow();
      if (window !== null) expect(Number.isInteger(window) && window > 0).toBe(true);
      await engine.unload();
    });

    it('returns n samples in order, seeded seed + i or, when sampled in one call, seed', async () => {
      const s = subject();
      const engine = await s.create();
      await engine.load(s.model);
      const out = await engine.generate(s.prompt, { ...params(), n: 3, temperature: 0.7, seed: 10 });
      expect(out).toHaveLength(3);
      out.forEach((c, i) => {
        expectWellFormed(c);
        expect([10, 10 + i]).toContain(c.seed);
      });
      await engine.unload();
    });

    it('streams text to onToken with the sample index when it can stream', async () => {
      const s = subject();
      const engine = await s.create();
      await engine.load(s.model);
      const seen: Array<[number, string]> = [];
      const out = await engine.generate(
        s.prompt,
        { ...params(), n: 2, temperature: 0.7, seed: 1 },
        { onToken: (i, t) => seen.push([i, t]) },
      );
      if (engine.capabilities.streaming) {
        for (const i of [0, 1]) {
          const streamed = seen
            .filter(([k]) => k === i)
            .map(([, t]) => t)
            .join('');
          expect(out[i]!.text.startsWith(streamed.slice(0, 8))).toBe(true);
        }
      }
      for (const [i] of seen) expect([0, 1]).toContain(i);
      await engine.unload();
    });

    it('rejects invalid sampling parameters with CONFIG, naming the parameter', async () => {
      const s = subject();
      const engine = await s.create();
      await engine.load(s.model);
      const e = await rejection(engine.generate(s.prompt, { ...params(), temperature: -1 }));
      expect(e.code).toBe('CONFIG');
      expect(e.message).toContain('temperature');
      await engine.unload();
    });

    it('answers an already aborted signal with abort samples', async () => {
      const s = subject();
      const engine = await s.create();
      await engine.load(s.model);
      const controller = new AbortController();
      controller.abort();
      const out = await engine.generate(s.prompt, { ...params(), n: 2 }, { signal: controller.signal });
      expect(out.map((c) => c.finishReason)).toEqual(['abort', 'abort']);
      await engine.unload();
    });

    it('counts tokens with its own tokenizer when it says it can', async () => {
      const s = subject();
      const engine = await s.create();
      await engine.load(s.model);
      if (engine.capabilities.tokenize) {
        const n = await engine.countTokens!('SELECT name FROM superhero WHERE id = 1');
        expect(Number.isInteger(n) && n > 0).toBe(true);
      }
      await engine.unload();
    });

    it('refuses to generate after unload() with NOT_LOADED', async () => {
      const s = subject();
      const engine = await s.create();
      await engine.load(s.model);
      await engine.unload();
      expect((await rejection(engine.generate(s.prompt, params()))).code).toBe('NOT_LOADED');
    });

    it('feeds the pipeline: every completion extracts to SQL or to rule none, with the sample fields a run stores', async () => {
      const s = subject();
      const engine = await s.create();
      await engine.load(s.model);
      const out = await engine.generate(s.prompt, { ...params(), n: 2, temperature: 0.8, seed: 3 });
      for (const c of out) {
        const { sql, extraction } = extractSql(c.text);
        expect(s.expectedRules).toContain(extraction.rule);
        if (extraction.rule === 'none') expect(sql).toBe('');
        const record = {
          completion: c.text,
          sql,
          rule: extraction.rule,
          tokensIn: c.tokensIn,
          tokensOut: c.tokensOut,
          latencyMs: c.latencyMs,
          finishReason: c.finishReason,
          seed: c.seed,
          engine: engine.kind,
          model: s.model.id,
        };
        expect(JSON.parse(JSON.stringify(record))).toEqual(record);
      }
      await engine.unload();
    });
  });
}
