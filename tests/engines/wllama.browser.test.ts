/**
 * The CPU engine (wllama, llama.cpp in WebAssembly) in headless Chromium with the real
 * 260K-parameter stories260K.gguf from ../shared/data/models: the Engine contract, GGUF
 * validation, threads, abort, token counting, and one BIRD question through the whole
 * pipeline. The model writes stories, never SQL, which is itself the case under test:
 * extraction finds no SQL (rule `none`) and the samples score 0 without breaking anything.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWllamaEngine, type WllamaEngine } from '../../src/adapters/engines/wllama-engine.ts';
import {
  createBrowserSqlPool,
  memoryDbSource,
  openBrowserSchemaSource,
  type BrowserSchemaSource,
} from '../../src/adapters/browser/sql-worker-host.ts';
import { GREEDY, type Prompt } from '../../src/core/engine/engine.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { buildPrompt, loadDatabaseContext } from '../../src/core/prompt/build-prompt.ts';
import { BIRD_MINIDEV_V1 } from '../../src/core/prompt/templates.ts';
import { extractSql } from '../../src/core/sql/extract-sql.ts';
import type { EvalItem } from '../../src/core/types.ts';
import { engineContract } from './contract.ts';
import { sharedFile, sharedUrl } from './shared-files.ts';
import { rejectionOf } from '../helpers/errors.ts';

const STORIES = 'models/stories260K.gguf';
const V1 = 'models/stories260K-gguf-v1-unsupported.gguf';
const files = new Map<string, File>();
const engines: WllamaEngine[] = [];

/** A fresh engine with the picked files registered; unloaded after each test. */
function engine(threads: number | 'auto' = 'auto', nCtx: number | null = null): WllamaEngine {
  const e = createWllamaEngine({ threads, nCtx });
  for (const [name, file] of files) e.addFile(name, file);
  engines.push(e);
  return e;
}
const storiesRef = { id: 'stories260K.gguf', source: 'file:stories260K.gguf' };

/**
 * One engine with stories260K.gguf loaded (default threads and context), shared by the tests
 * that are about what a loaded engine does rather than about loading it: loaded on first use,
 * unloaded after the file. The app keeps one loaded engine across generations, aborts included
 * (a paused generation run resumes on it).
 */
let sharedLoad: Promise<WllamaEngine> | null = null;
function loadedEngine(): Promise<WllamaEngine> {
  sharedLoad ??= (async () => {
    const e = createWllamaEngine({ threads: 'auto', nCtx: null });
    for (const [name, file] of files) e.addFile(name, file);
    await e.load(storiesRef);
    return e;
  })();
  return sharedLoad;
}
afterAll(async () => {
  await (await sharedLoad)?.unload();
});

beforeAll(async () => {
  files.set('stories260K.gguf', await sharedFile(STORIES));
  files.set('v1.gguf', await sharedFile(V1));
  files.set('zeros.gguf', new File([new Uint8Array(1024)], 'zeros.gguf'));
  const header = new Uint8Array(1024);
  header.set([0x47, 0x47, 0x55, 0x46, 3]);
  files.set('header-only.gguf', new File([header], 'header-only.gguf'));
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.unload()));
});

engineContract('CPU engine (wllama) with the real stories260K.gguf', () => ({
  create: () => engine(),
  model: storiesRef,
  prompt: { messages: [{ role: 'user', content: 'Tell me a story about a cat.' }], questionId: 0 },
  expectedRules: ['none'],
  maxTokens: 48,
}));

describe('CPU engine (wllama 3.13) in headless Chromium', () => {
  it('runs in a cross-origin isolated page (threads need SharedArrayBuffer)', () => {
    expect(globalThis.crossOriginIsolated).toBe(true);
  });

  it('loads a picked GGUF: version, vocabulary, training context, no chat template, one thread for a tiny model', async () => {
    const e = engine();
    const progress: string[] = [];
    await e.load(storiesRef, { onProgress: (p) => progress.push(p.text) });
    expect(e.loaded).toMatchObject({
      ggufVersion: 3,
      nVocab: 512,
      nCtxTrain: 2048,
      hasChatTemplate: false,
      threads: 1,
      multithread: false,
    });
    expect(e.loaded!.threadReason).toBe('the model is tiny: one thread is faster than several');
    expect(e.contextWindow()).toBe(2048);
    expect(progress).toEqual([
      'reading the model file',
      'loading stories260K.gguf into llama.cpp (1 thread)',
      'loaded llama',
    ]);
  });

  it('loads a GGUF from a URL', async () => {
    const e = engine();
    await e.load({ id: 'stories260K.gguf', source: sharedUrl(STORIES) });
    expect(e.loaded!.nVocab).toBe(512);
  });

  it('runs llama.cpp on two threads when asked', async () => {
    const e = engine(2);
    await e.load(storiesRef);
    expect(e.loaded).toMatchObject({ threads: 2, multithread: true });
    const [c] = await e.generate(
      { messages: [{ role: 'user', content: 'Once upon a time' }] },
      { ...GREEDY, maxTokens: 16 },
    );
    expect(c!.tokensOut).toBeGreaterThan(0);
  });

  it.each<[string, string, RegExp]>([
    [
      'a GGUF v1 file, saying to re-convert it with a current llama.cpp',
      'v1.gguf',
      /^v1\.gguf: GGUF version 1 is obsolete .*: re-convert the original weights with a current llama\.cpp/,
    ],
    [
      'a file that is not GGUF (zeros)',
      'zeros.gguf',
      /^zeros\.gguf: not a GGUF model: the file starts with "\.\.\.\." instead of "GGUF"/,
    ],
    [
      'a GGUF header with nothing behind it, which llama.cpp "loads" with nVocab 0',
      'header-only.gguf',
      /^header-only\.gguf: llama\.cpp found no vocabulary in it \(nVocab 0\)/,
    ],
  ])('rejects %s', async (_title, name, message) => {
    const e = await rejectionOf(engine().load({ id: name, source: `file:${name}` }));
    expect(e).toMatchObject({ name: 'EngineError', code: 'MODEL_REJECTED' });
    expect(e.message).toMatch(message);
  });

  it('rejects the GGUF v1 file from a URL too', async () => {
    const e = await rejectionOf(engine().load({ id: 'v1', source: sharedUrl(V1) }));
    expect(e.code).toBe('MODEL_REJECTED');
    expect(e.message).toContain('GGUF version 1 is obsolete');
  });

  it('says MODEL_MISSING for a URL that is not there and for a file not picked again after a reload', async () => {
    const a = await rejectionOf(engine().load({ id: 'x', source: sharedUrl('models/missing.gguf') }));
    expect(a.code).toBe('MODEL_MISSING');
    expect(a.message).toMatch(
      /missing\.gguf: (could not download the model: HTTP 404|the server answered with a web page instead of a model file)/,
    );
    const b = await rejectionOf(engine().load({ id: 'mine.gguf', source: 'file:mine.gguf' }));
    expect(b).toMatchObject({
      code: 'MODEL_MISSING',
      message:
        'mine.gguf: this file is no longer open (files picked before a reload cannot be reopened): pick it again',
    });
  });

  it('is deterministic for a seed, renders the plain template, and stops before a new turn', async () => {
    const e = await loadedEngine();
    const prompt: Prompt = {
      messages: [
        { role: 'system', content: 'You write stories.' },
        { role: 'user', content: 'A dog' },
      ],
    };
    const params = { ...GREEDY, n: 2, temperature: 0.9, seed: 42, maxTokens: 40 };
    const a = await e.generate(prompt, params);
    const b = await e.generate(prompt, params);
    expect(a.map((c) => c.text)).toEqual(b.map((c) => c.text));
    expect(a[0]!.text).not.toBe(a[1]!.text);
    // "System: You write stories.\n\nUser: A dog\n\nAssistant:" is more than 10 tokens of this vocabulary.
    expect(a[0]!.tokensIn).toBeGreaterThan(10);
    for (const c of a) expect(c.text).not.toMatch(/\n(User|System):/);
  });

  it('stops a long generation through the signal, keeps the partial text, and skips the samples not started', async () => {
    const e = await loadedEngine();
    const controller = new AbortController();
    const pieces: string[] = [];
    setTimeout(() => controller.abort(), 150);
    const out = await e.generate(
      { messages: [{ role: 'user', content: 'Once upon a time' }] },
      { ...GREEDY, n: 2, maxTokens: 4000, stop: ['@@@'] },
      { signal: controller.signal, onToken: (_i, t) => pieces.push(t) },
    );
    expect(out.map((c) => c.finishReason)).toEqual(['abort', 'abort']);
    expect(out[0]!.text).toBe(pieces.join(''));
    expect(out[1]!.text).toBe('');
  });

  it('stops through interrupt() as well', async () => {
    const e = await loadedEngine();
    setTimeout(() => void e.interrupt(), 100);
    const out = await e.generate(
      { messages: [{ role: 'user', content: 'Once' }] },
      { ...GREEDY, n: 3, maxTokens: 4000, stop: ['@@@'] },
    );
    expect(out.map((c) => c.finishReason)).toEqual(['abort', 'abort', 'abort']);
  });

  it('counts tokens with the model, including a text longer than the context', async () => {
    const e = await loadedEngine();
    expect(await e.countTokens('Once upon a time')).toBeGreaterThan(3);
    expect(await e.countTokens('word '.repeat(3000))).toBeGreaterThan(2048);
  });

  it('turns a prompt longer than the context into an error sample that says so', async () => {
    const e = await loadedEngine();
    const [c] = await e.generate(
      { messages: [{ role: 'user', content: 'word '.repeat(3000) }] },
      { ...GREEDY, maxTokens: 8 },
    );
    expect(c!.finishReason).toBe('error');
    expect(c!.error).toMatch(/exceeds the available context size \(2048 tokens\)/);
  });

  it('allocates the context asked for, beyond the training context, and a request uses all of it', async () => {
    const e = engine('auto', 4096);
    await e.load(storiesRef);
    expect(e.loaded).toMatchObject({ nCtx: 4096, nCtxTrain: 2048, contextWindow: 4096 });
    expect([e.contextWindow(), e.trainingContext()]).toEqual([4096, 2048]);
    // About 2,700 tokens: past the training context, within the one asked for.
    const long = 'word '.repeat(900);
    const tokens = await e.countTokens(long);
    expect(tokens).toBeGreaterThan(2048);
    const [c] = await e.generate({ messages: [{ role: 'user', content: long }] }, { ...GREEDY, maxTokens: 8 });
    expect(c!.error).toBeUndefined();
    expect(c!.finishReason).toMatch(/stop|length/);
    expect(c!.tokensIn).toBeGreaterThan(2048);
  }, 300_000);

  it('allocates a context below the training context when asked, and refuses a longer request with that context', async () => {
    const e = engine('auto', 1024);
    await e.load(storiesRef);
    expect([e.contextWindow(), e.trainingContext()]).toEqual([1024, 2048]);
    const [c] = await e.generate(
      { messages: [{ role: 'user', content: 'word '.repeat(1500) }] },
      { ...GREEDY, maxTokens: 8 },
    );
    expect(c!.error).toMatch(/exceeds the available context size \(1024 tokens\)/);
  });

  it('runs a BIRD question end to end: prompt fitted with the model tokenizer, story completions, no SQL, EX 0', async () => {
    const questions = parseQuestions(
      await (await sharedFile('bird/minidev/mini_dev_sqlite.json')).text(),
      'mini_dev_sqlite.json',
    );
    const q = questions.find((x) => x.dbId === 'superhero')!;
    const dbBytes = new Uint8Array(await (await sharedFile('bird/databases/superhero/superhero.sqlite')).arrayBuffer());
    const dbSource = memoryDbSource(new Map([['superhero', dbBytes]]));
    let schema: BrowserSchemaSource | undefined;
    const pool = createBrowserSqlPool(dbSource, 1);
    try {
      const e = await loadedEngine();
      schema = await openBrowserSchemaSource(dbSource, 64 * 1024 * 1024);
      const ctx = await loadDatabaseContext(schema.source, 'superhero', { sampleRows: 3, descriptions: false });
      expect(ctx.tables.map((t) => t.name)).toContain('superhero');
      const params = { ...GREEDY, n: 2, temperature: 0.8, seed: 1, maxTokens: 64 };
      const built = await buildPrompt(BIRD_MINIDEV_V1, ctx, q, {
        sampleRows: 3,
        budget: { contextWindow: e.contextWindow(), reserve: params.maxTokens },
        countTokens: (t) => e.countTokens(t),
      });
      expect(built.prompt.messages[0]!.content).toContain(`-- ${q.question}\n`);
      expect(built.fit).toMatchObject({ counter: 'engine', limit: 2048 - 64, fits: true });
      expect(built.fit.cut.sampleRows.length).toBeGreaterThan(0);

      const completions = await e.generate(built.prompt, params);
      expect(completions).toHaveLength(2);
      for (const c of completions) {
        expect(c.finishReason).toMatch(/stop|length/);
        expect(c.text.length).toBeGreaterThan(0);
        expect(c.tokensIn).toBeGreaterThan(built.fit.tokens / 2);
        expect(c.tokensOut).toBeGreaterThan(0);
      }
      const extracted = completions.map((c) => extractSql(c.text));
      expect(extracted.map((x) => [x.extraction.rule, x.sql])).toEqual([
        ['none', ''],
        ['none', ''],
      ]);
      const items: EvalItem[] = extracted.map((x, i) => ({
        index: i,
        questionId: q.questionId,
        dbId: q.dbId,
        difficulty: q.difficulty,
        predSql: x.sql,
        goldSql: q.goldSql,
        extraction: x.extraction,
      }));
      const results = await pool.evaluate(items, { ...DEFAULT_EVAL_OPTIONS, metrics: ['ex', 'soft-f1'] });
      expect(results.map((r) => [r.ex, r.status, r.extraction.rule, r.softF1])).toEqual([
        [0, 'ok', 'none', 0],
        [0, 'ok', 'none', 0],
      ]);
      expect(results[0]!.goldRowCount).toBeGreaterThan(0);
    } finally {
      schema?.dispose();
      await pool.dispose();
    }
  });
});
