import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GREEDY, type Prompt } from '../../src/core/engine/engine.ts';
import { isEngineError } from '../../src/core/engine/engine-error.ts';
import { createOpenAiEngine, type OpenAiEngineOptions } from '../../src/adapters/engines/openai-engine.ts';
import { retryAfterMs } from '../../src/adapters/engines/openai-protocol.ts';
import { engineContract } from './contract.ts';
import { startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.ts';

const prompt: Prompt = {
  messages: [
    { role: 'system', content: 'Answer with SQLite.' },
    { role: 'user', content: 'How many heroes are there?' },
  ],
  questionId: 1,
};

let chatServer: OpenAiServer;
let plainServer: OpenAiServer;
beforeAll(async () => {
  chatServer = await startOpenAiServer();
  plainServer = await startOpenAiServer({
    ignoresN: true,
    models: [{ id: 'test-model', meta: { n_ctx_train: 4096 } }],
  });
});
afterAll(async () => {
  await chatServer.close();
  await plainServer.close();
});

engineContract('OpenAI-compatible, /v1/chat/completions, native n (vLLM-like)', () => ({
  create: () => createOpenAiEngine({ baseUrl: chatServer.url, model: 'test-model', tokenizer: 'vllm' }),
  model: { id: 'test-model', source: chatServer.url },
  prompt,
  expectedRules: ['fenced-sql-last'],
}));

engineContract('OpenAI-compatible, /v1/completions, streamed, n ignored (llama.cpp-like)', () => ({
  create: () =>
    createOpenAiEngine({
      baseUrl: `${plainServer.url}/v1/`,
      model: 'test-model',
      endpoint: 'completions',
      stream: true,
      tokenizer: 'llama.cpp',
    }),
  model: { id: 'test-model', source: plainServer.url },
  prompt,
  expectedRules: ['fenced-sql-last'],
}));

describe('OpenAI-compatible engine against a local server', () => {
  let server: OpenAiServer;
  const sleeps: number[] = [];
  const engine = async (opts: Partial<OpenAiEngineOptions> = {}, serverOptions = {}) => {
    server = await startOpenAiServer(serverOptions);
    const e = createOpenAiEngine({
      baseUrl: server.url,
      model: 'test-model',
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
      ...opts,
    });
    await e.load({ id: 'test-model' });
    return e;
  };
  afterEach(async () => {
    sleeps.length = 0;
    await server?.close();
  });

  it('sends the API key as a bearer token, and never exports it', async () => {
    const e = await engine({ apiKey: 'sk-secret-123' });
    await e.generate(prompt, GREEDY);
    expect(server.requests.every((r) => r.headers.authorization === 'Bearer sk-secret-123')).toBe(true);
    expect(JSON.stringify(e)).not.toContain('sk-secret');
    expect(JSON.stringify(e.describe())).not.toContain('sk-secret');
    expect(e.describe()).toEqual({
      kind: 'openai',
      baseUrl: server.url,
      model: 'test-model',
      endpoint: 'chat',
      hasApiKey: true,
      concurrency: 4,
      maxRetries: 4,
      support: { n: 'unchecked', logprobs: 'unchecked', ownedBy: null },
    });
    // Not in any ordinary property either (only a private field of the HTTP client holds it).
    const seen = new Set<unknown>();
    const strings: string[] = [];
    const walk = (v: unknown): void => {
      if (typeof v === 'string') strings.push(v);
      if (typeof v !== 'object' || v === null || seen.has(v)) return;
      seen.add(v);
      for (const x of Object.values(v)) walk(x);
    };
    walk(e);
    expect(strings.some((x) => x.includes('sk-secret'))).toBe(false);
  });

  it('sends no authorization header without a key', async () => {
    const e = await engine();
    await e.generate(prompt, GREEDY);
    expect(server.completions()[0]!.headers.authorization).toBeUndefined();
  });

  it('sends the sampling parameters in the request body', async () => {
    const e = await engine();
    await e.generate(prompt, {
      n: 2,
      temperature: 0.6,
      topP: 0.9,
      maxTokens: 77,
      seed: 4,
      stop: ['</answer>'],
      logprobs: true,
    });
    expect(server.completions()[0]!.body).toEqual({
      model: 'test-model',
      messages: prompt.messages,
      max_tokens: 77,
      temperature: 0.6,
      top_p: 0.9,
      n: 2,
      seed: 4,
      stop: ['</answer>'],
      logprobs: true,
    });
  });

  it('asks for n samples in one request when the server honours n, with token counts and mean logprobs', async () => {
    const e = await engine();
    const out = await e.generate(prompt, { ...GREEDY, n: 3, temperature: 0.8, seed: 9, logprobs: true });
    expect(server.completions()).toHaveLength(1);
    expect(out.map((c) => c.text)).toEqual([1, 2, 3].map((i) => `Here it is:\n\`\`\`sql\nSELECT ${i};\n\`\`\``));
    expect(out.map((c) => c.seed)).toEqual([9, 9, 9]);
    expect(out[0]).toMatchObject({ tokensIn: 42, meanLogprob: -0.5, finishReason: 'stop' });
    expect(out[0]!.tokensOut).toBeGreaterThan(0);
  });

  it('makes up the samples of a server that ignores n with one request each, seed + i, and remembers it', async () => {
    const e = await engine({}, { ignoresN: true });
    const out = await e.generate(prompt, { ...GREEDY, n: 3, temperature: 0.8, seed: 20 });
    expect(out).toHaveLength(3);
    expect(out.map((c) => c.seed)).toEqual([20, 21, 22]);
    expect(server.completions().map((r) => [r.body!.n, r.body!.seed])).toEqual([
      [3, 20],
      [1, 21],
      [1, 22],
    ]);
    await e.generate(prompt, { ...GREEDY, n: 2, seed: 0 });
    expect(
      server
        .completions()
        .slice(3)
        .map((r) => r.body!.n),
    ).toEqual([1, 1]);
  });

  it('records the model that answered and the system_fingerprint on every sample, and the server family from /v1/models', async () => {
    const e = await engine(
      { concurrency: 32, maxRetries: 9 },
      {
        fingerprint: 'fp_vllm_0.11',
        servedModel: 'Qwen/Qwen2.5-Coder-32B-Instruct',
        models: [{ id: 'test-model', object: 'model', owned_by: 'vllm', max_model_len: 32768 }],
      },
    );
    const out = await e.generate(prompt, { ...GREEDY, n: 2, temperature: 0.7, seed: 1 });
    for (const c of out)
      expect(c).toMatchObject({ servedModel: 'Qwen/Qwen2.5-Coder-32B-Instruct', systemFingerprint: 'fp_vllm_0.11' });
    expect(e.concurrency).toBe(32);
    expect(e.describe()).toMatchObject({
      concurrency: 32,
      maxRetries: 9,
      support: { n: 'native', logprobs: 'unchecked', ownedBy: 'vllm' },
    });
  });

  it('reports its device as the server: the configured model before a reply, then the model and system_fingerprint the server answered with', async () => {
    const e = await engine(
      {},
      {
        fingerprint: 'fp_sglang_7',
        servedModel: 'Qwen/Qwen2.5-Coder-7B-Instruct',
        models: [{ id: 'test-model', object: 'model', owned_by: 'sglang' }],
      },
    );
    expect(e.device()).toEqual({
      device: 'server',
      reason: null,
      detail: `model test-model, owned by sglang at ${server.url.replace(/\/+$/, '')}`,
    });
    await e.generate(prompt, { ...GREEDY });
    expect(e.device()).toEqual({
      device: 'server',
      reason: null,
      detail: `model Qwen/Qwen2.5-Coder-7B-Instruct, owned by sglang, system_fingerprint fp_sglang_7 at ${server.url.replace(/\/+$/, '')}`,
    });
    await e.unload();
    expect(e.device()).toBeNull();
  });

  it('checks logprobs against the reply: a server that leaves them out is not asked again, and says so', async () => {
    const e = await engine({}, { omitsLogprobs: true });
    const first = await e.generate(prompt, { ...GREEDY, logprobs: true });
    expect(first[0]!.meanLogprob).toBeNull();
    expect(server.completions()[0]!.body!.logprobs).toBe(true);
    expect(e.describe().support.logprobs).toBe('no');
    await e.generate(prompt, { ...GREEDY, logprobs: true });
    expect(server.completions()[1]!.body!.logprobs).toBeUndefined();
  });

  it('reports logprobs returned by a server that computes them, and n one per request for one that ignores n', async () => {
    const e = await engine({}, { ignoresN: true });
    expect(e.describe().support).toEqual({ n: 'unchecked', logprobs: 'unchecked', ownedBy: null });
    await e.generate(prompt, { ...GREEDY, n: 2, temperature: 0.5, seed: 3, logprobs: true });
    expect(e.describe().support).toMatchObject({ n: 'one per request', logprobs: 'yes' });
  });

  it('waits as long as Retry-After says after a 429, then succeeds', async () => {
    const e = await engine();
    server.script({ kind: 'status', status: 429, retryAfter: '2' });
    const [c] = await e.generate(prompt, GREEDY);
    expect(c!.finishReason).toBe('stop');
    expect(sleeps).toEqual([2000]);
    expect(server.completions()).toHaveLength(2);
  });

  it('accepts Retry-After as an HTTP date', async () => {
    // The wait is the date minus now: exact with a fixed now, and within the date end to end.
    const now = Date.UTC(2026, 10, 30, 12, 0, 0);
    expect(retryAfterMs(new Date(now + 5000).toUTCString(), now)).toBe(5000);
    expect(retryAfterMs(new Date(now - 5000).toUTCString(), now)).toBe(0);
    const e = await engine();
    server.script({ kind: 'status', status: 503, retryAfter: new Date(Date.now() + 5000).toUTCString() });
    await e.generate(prompt, GREEDY);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(0);
    expect(sleeps[0]).toBeLessThanOrEqual(5000);
  });

  it('refuses to wait longer than maxRetryAfterMs', async () => {
    const e = await engine({ maxRetryAfterMs: 10_000 });
    server.script({ kind: 'status', status: 429, retryAfter: '3600' });
    await expect(e.generate(prompt, GREEDY)).rejects.toThrow(
      /HTTP 429: the server asks to retry after 3600 s, longer than the 10 s limit/,
    );
  });

  it('backs off exponentially with jitter on 500s and gives up after the retries, naming the endpoint', async () => {
    const e = await engine({ maxRetries: 3, retryBaseMs: 100 });
    server.script(...Array.from({ length: 4 }, () => ({ kind: 'status' as const, status: 500 })));
    const err = await e.generate(prompt, GREEDY).catch((x: unknown) => x);
    expect(isEngineError(err)).toBe(true);
    expect(err).toMatchObject({ code: 'HTTP' });
    expect((err as Error).message).toBe(
      `POST ${server.url}/v1/chat/completions: HTTP 500 after 4 attempts: scripted 500`,
    );
    expect(sleeps).toEqual([75, 150, 300]);
    expect(server.completions()).toHaveLength(4);
  });

  it('retries a dropped connection, then reports the server unreachable', async () => {
    const e = await engine({ maxRetries: 1 });
    server.script({ kind: 'drop' }, { kind: 'drop' });
    const err = await e.generate(prompt, GREEDY).catch((x: unknown) => x);
    expect(err).toMatchObject({ code: 'NETWORK' });
    expect((err as Error).message).toMatch(/\/v1\/chat\/completions: the server could not be reached after 2 attempts/);
  });

  it('turns a malformed JSON reply into an error sample that names the endpoint', async () => {
    const e = await engine();
    server.script({ kind: 'raw', body: '<html>Bad Gateway</html>' });
    const [c] = await e.generate(prompt, GREEDY);
    expect(c).toMatchObject({ finishReason: 'error', text: '' });
    expect(c!.error).toBe(
      `POST ${server.url}/v1/chat/completions: the reply is not valid JSON (it starts with "<html>Bad Gateway</html>")`,
    );
  });

  it('turns a reply of the wrong shape into an error sample that says what is wrong', async () => {
    const e = await engine();
    server.script({ kind: 'raw', body: JSON.stringify({ choices: [{ message: { content: 5 } }] }) });
    const [c] = await e.generate(prompt, GREEDY);
    expect(c!.error).toMatch(
      /the reply is not an OpenAI-compatible completion: choices\[0\]\.message\.content is number/,
    );
  });

  it('turns a reply with no choice ({"choices": []}) into error samples, not cancelled ones', async () => {
    const e = await engine();
    server.script({ kind: 'raw', body: JSON.stringify({ choices: [] }) });
    const [c] = await e.generate(prompt, GREEDY);
    expect(c).toMatchObject({ finishReason: 'error', text: '' });
    expect(c!.error).toBe(
      `POST ${server.url}/v1/chat/completions: the reply is not an OpenAI-compatible completion: the reply has no choice ("choices": [])`,
    );
  });

  it('a stream that ends before a finish_reason and without [DONE] gives an error sample (text cut), never a finished one', async () => {
    const e = await engine({ stream: true });
    const event = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
    const piece = (content: string, finish: string | null = null) =>
      event({ choices: [{ index: 0, delta: { content }, finish_reason: finish }] });
    // Cut: two pieces, then the connection ends.
    server.script({
      kind: 'raw',
      contentType: 'text/event-stream',
      body: piece('SELECT name FROM ') + piece('hero WH'),
    });
    const [cut] = await e.generate(prompt, GREEDY);
    expect(cut).toMatchObject({ finishReason: 'error', text: '' });
    expect(cut!.error).toBe(
      `${server.url}/v1/chat/completions: the stream ended before the server finished this sample (no finish_reason, no [DONE]; 24 characters received): the connection was cut`,
    );
    // The same pieces with [DONE] and no finish_reason, or with a finish_reason and no [DONE], are finished answers.
    server.script({
      kind: 'raw',
      contentType: 'text/event-stream',
      body: piece('SELECT 1') + 'data: [DONE]\n\n',
    });
    expect((await e.generate(prompt, GREEDY))[0]).toMatchObject({ finishReason: 'stop', text: 'SELECT 1' });
    server.script({ kind: 'raw', contentType: 'text/event-stream', body: piece('SELECT 1', 'length') });
    expect((await e.generate(prompt, GREEDY))[0]).toMatchObject({ finishReason: 'length', text: 'SELECT 1' });
  });

  it('turns a 400 (prompt too long) into an error sample with the server message, without retrying', async () => {
    const e = await engine();
    server.script({
      kind: 'status',
      status: 400,
      body: JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens" } }),
    });
    const [c] = await e.generate(prompt, GREEDY);
    expect(c!.error).toContain("HTTP 400: This model's maximum context length is 8192 tokens");
    expect(server.completions()).toHaveLength(1);
  });

  it('rejects a 401 at once with a sentence about the key', async () => {
    const e = await engine({ apiKey: 'wrong' });
    server.script({ kind: 'status', status: 401, body: '{"error":{"message":"invalid api key"}}' });
    await expect(e.generate(prompt, GREEDY)).rejects.toThrow(
      /HTTP 401: the server refused the request; check the API key: invalid api key/,
    );
    expect(server.completions()).toHaveLength(1);
  });

  it('aborts a request in flight through the signal, returning abort samples', async () => {
    const e = await engine();
    server.script({ kind: 'hang' });
    const controller = new AbortController();
    const pending = e.generate(prompt, { ...GREEDY, n: 2 }, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    const out = await pending;
    expect(out.map((c) => c.finishReason)).toEqual(['abort', 'abort']);
  });

  it('stops every request in flight on interrupt()', async () => {
    const e = await engine({}, { ignoresN: true });
    server.script({ kind: 'hang' }, { kind: 'hang' });
    const a = e.generate(prompt, GREEDY);
    const b = e.generate(prompt, GREEDY);
    await new Promise((r) => setTimeout(r, 100));
    await e.interrupt();
    expect((await a)[0]!.finishReason).toBe('abort');
    expect((await b)[0]!.finishReason).toBe('abort');
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    server = await startOpenAiServer();
    let open = 0;
    let peak = 0;
    const e = createOpenAiEngine({
      baseUrl: server.url,
      model: 'test-model',
      concurrency: 2,
      fetch: async (input, init) => {
        open++;
        peak = Math.max(peak, open);
        await new Promise((r) => setTimeout(r, 30));
        try {
          return await fetch(input, init);
        } finally {
          open--;
        }
      },
    });
    await e.load({ id: 'test-model' });
    await Promise.all(Array.from({ length: 6 }, () => e.generate(prompt, GREEDY)));
    expect(peak).toBe(2);
    expect(server.completions()).toHaveLength(6);
  });

  it('streams chat tokens to onToken', async () => {
    const e = await engine({ stream: true });
    const pieces: string[] = [];
    const [c] = await e.generate(prompt, GREEDY, { onToken: (_i, t) => pieces.push(t) });
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join('')).toBe(c!.text);
    expect(c!.tokensIn).toBe(42);
  });

  it('reads the context window from /v1/models (vLLM max_model_len, llama.cpp n_ctx_train)', async () => {
    expect((await engine()).contextWindow()).toBe(8192);
    await server.close();
    expect((await engine({}, { models: [{ id: 'test-model', meta: { n_ctx_train: 4096 } }] })).contextWindow()).toBe(
      4096,
    );
  });

  it('fails to load a model the server does not serve, listing what it serves', async () => {
    server = await startOpenAiServer({ models: [{ id: 'qwen' }, { id: 'llama' }] });
    const e = createOpenAiEngine({ baseUrl: server.url });
    await expect(e.load({ id: 'gpt-x' })).rejects.toThrow(
      `${server.url}/v1/models: the server does not serve a model named "gpt-x" (it serves: qwen, llama)`,
    );
  });

  it('fails to load with NETWORK when nothing listens at the base URL', async () => {
    const e = createOpenAiEngine({ baseUrl: 'http://127.0.0.1:9', model: 'm', maxRetries: 0 });
    await expect(e.load({ id: 'm' })).rejects.toMatchObject({ code: 'NETWORK' });
  });

  it('rejects a base URL that is not absolute', () => {
    expect(() => createOpenAiEngine({ baseUrl: 'localhost:8000' })).toThrow(/must start with http/);
    expect(() => createOpenAiEngine({ baseUrl: '/v1' })).toThrow(/not an absolute http\(s\) URL/);
  });

  it('sends a single user message as the raw prompt of /v1/completions, and several with the plain template', async () => {
    const e = await engine({ endpoint: 'completions' });
    await e.generate({ messages: [{ role: 'user', content: 'CREATE TABLE t(a);\n-- question' }] }, GREEDY);
    await e.generate(prompt, GREEDY);
    expect(server.completions().map((r) => r.body!.prompt)).toEqual([
      'CREATE TABLE t(a);\n-- question',
      'System: Answer with SQLite.\n\nUser: How many heroes are there?\n\nAssistant:',
    ]);
  });

  it("puts a reasoning parser's reasoning_content back as <think>", async () => {
    const e = await engine();
    server.script({
      kind: 'raw',
      body: JSON.stringify({
        choices: [
          { message: { reasoning_content: 'plan', content: '<answer>SELECT 1</answer>' }, finish_reason: 'stop' },
        ],
      }),
    });
    expect((await e.generate(prompt, GREEDY))[0]!.text).toBe('<think>plan</think><answer>SELECT 1</answer>');
  });
});

describe('OpenAI-compatible engine: tool calls (a tool-calling preset, vLLM with a tool parser)', () => {
  const tools = [{ type: 'function', function: { name: 'execute_sql', parameters: { type: 'object' } } }];
  const toolPrompt: Prompt = {
    messages: [
      { role: 'user', content: 'How many heroes?' },
      {
        role: 'assistant',
        content: '<think>count</think>',
        toolCalls: [{ id: 'call_1_0', name: 'execute_sql', arguments: '{"sql_query": "SELECT 1"}' }],
      },
      { role: 'tool', content: '{\n  "result": "1"\n}', toolCallId: 'call_1_0' },
    ],
    tools,
  };
  const servers: OpenAiServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it.each([false, true])(
    'sends tools, assistant tool_calls and tool messages; reads tool_calls back as hermes text (stream: %s)',
    async (stream) => {
      const server = await startOpenAiServer({
        text: () => '<think>again</think>',
        toolCalls: () => [{ name: 'execute_sql', arguments: '{"sql_query":"SELECT \'é\'"}' }],
      });
      servers.push(server);
      const e = createOpenAiEngine({ baseUrl: server.url, model: 'test-model', stream });
      await e.load({ id: 'test-model' });
      expect(e.capabilities.toolRole).toBe(true);
      const [c] = await e.generate(toolPrompt, GREEDY);
      expect(c!.text).toBe(
        '<think>again</think>\n<tool_call>\n{"name": "execute_sql", "arguments": {"sql_query": "SELECT \'é\'"}}\n</tool_call>',
      );
      const body = server.completions()[0]!.body!;
      expect(body.tools).toEqual(tools);
      expect(body.messages).toEqual([
        { role: 'user', content: 'How many heroes?' },
        {
          role: 'assistant',
          content: '<think>count</think>',
          tool_calls: [
            {
              id: 'call_1_0',
              type: 'function',
              function: { name: 'execute_sql', arguments: '{"sql_query": "SELECT 1"}' },
            },
          ],
        },
        { role: 'tool', content: '{\n  "result": "1"\n}', tool_call_id: 'call_1_0' },
      ]);
      expect(body.continue_final_message).toBeUndefined();
    },
  );

  it('a prompt without tools sends none, and the completions endpoint has no tool role', async () => {
    const server = await startOpenAiServer();
    servers.push(server);
    const e = createOpenAiEngine({ baseUrl: server.url, model: 'test-model' });
    await e.load({ id: 'test-model' });
    await e.generate(prompt, GREEDY);
    expect(server.completions()[0]!.body!.tools).toBeUndefined();
    expect(createOpenAiEngine({ baseUrl: server.url, endpoint: 'completions' }).capabilities.toolRole).toBe(false);
  });
});
