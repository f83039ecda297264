/**
 * The one loopback OpenAI server of the tests: a TEST DOUBLE FOR A MODEL (no weights can run
 * here) on 127.0.0.1 and a random port, speaking the OpenAI protocol the way vLLM, llama.cpp's
 * server and Ollama do, with CORS so that the app's page can call it from its own origin.
 * Answers come from `text` (per choice, or an HTTP error for the request), after `delayMs`;
 * scripted misbehaviour takes precedence: each completion request takes the next scripted reply,
 * or the default one. Every request is recorded; completion calls and the most in flight at once
 * are counted. The engine tests, the judge tests (tests/rubric/helpers/openai-server.ts) and the
 * browser tests of the policy, the judge and the traffic log all use it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | null;
  at: number;
}

/** What the server does for one request. */
export type Scripted =
  | { kind: 'ok' } // a normal reply (respects n unless the server ignores it)
  | { kind: 'status'; status: number; body?: string; retryAfter?: string }
  | { kind: 'raw'; status?: number; contentType?: string; body: string }
  | { kind: 'hang' } // never answers (for abort tests)
  | { kind: 'drop' }; // closes the connection without a reply

/** An HTTP error for the whole request instead of choices. */
export interface HttpFailure {
  status: number;
  body: string;
}

export interface OpenAiServerOptions {
  /** Answer only one choice whatever n is (llama.cpp's server, Ollama). */
  ignoresN?: boolean;
  /** `/v1/models` lists these (an id, or a whole entry); null: no such route (404), as some servers. */
  models?: Array<string | Record<string, unknown>> | null;
  /** Serve `/tokenize` (vLLM, llama.cpp); default true. */
  tokenize?: boolean;
  /** Stream when asked (`stream: true`); false: answer with one JSON reply whatever was asked. Default true. */
  streams?: boolean;
  /** Token counts a reply reports for its n choices; default 42 in, the words of the choices out. */
  usage?: (n: number) => { prompt_tokens: number; completion_tokens: number };
  /** Milliseconds before a completion request is answered (default 0). */
  delayMs?: (body: Record<string, unknown>) => number;
  /** `system_fingerprint` of every reply (vLLM and OpenAI send one); default none. */
  fingerprint?: string;
  /** The model name replies carry; default the request's (vLLM answers with the served name). */
  servedModel?: string;
  /** Leave token log-probabilities out even when asked (servers that do not compute them). */
  omitsLogprobs?: boolean;
  /** Text of choice i for a request (`call`: this completion request's number, from 1), or an HTTP failure; default `SELECT <i>` in a sql fence. */
  text?: (body: Record<string, unknown>, i: number, call: number) => string | HttpFailure;
  /**
   * Tool calls of choice i (chat only), returned as vLLM's OpenAI server returns them with a tool
   * parser on: `message.tool_calls` (id, function name, arguments as JSON text), `content` the
   * choice's text or null when empty, finish_reason `tool_calls`; streamed as `delta.tool_calls`.
   */
  toolCalls?: (
    body: Record<string, unknown>,
    i: number,
    call: number,
  ) => Array<{ name: string; arguments: string }> | null;
}

export interface OpenAiServer {
  url: string;
  requests: RecordedRequest[];
  /** Completion requests only. */
  completions(): RecordedRequest[];
  /** Completion requests received so far. */
  calls(): number;
  /** Most completion requests answered at once so far. */
  maxInFlight(): number;
  script(...steps: Scripted[]): void;
  close(): Promise<void>;
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'content-type, authorization',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
};

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { ...CORS, 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
};

export async function startOpenAiServer(options: OpenAiServerOptions = {}): Promise<OpenAiServer> {
  const requests: RecordedRequest[] = [];
  const queue: Scripted[] = [];
  const hanging = new Set<ServerResponse>();
  const text = options.text ?? ((_b, i) => `Here it is:\n\`\`\`sql\nSELECT ${i + 1};\n\`\`\``);
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  const reply = (res: ServerResponse, path: string, body: Record<string, unknown>, call: number) => {
    const chat = path === '/v1/chat/completions';
    const n = options.ignoresN ? 1 : typeof body.n === 'number' ? body.n : 1;
    const answers = Array.from({ length: n }, (_, i) => text(body, i, call));
    const failure = answers.find((a): a is HttpFailure => typeof a !== 'string');
    if (failure) {
      res.writeHead(failure.status, { ...CORS, 'content-type': 'application/json' }).end(failure.body);
      return;
    }
    const texts = answers as string[];
    const calls = Array.from({ length: n }, (_, i) => (chat ? (options.toolCalls?.(body, i, call) ?? null) : null));
    const toolCalls = (i: number) =>
      calls[i]!.map((c, k) => ({
        id: `chatcmpl-tool-${call}-${i}-${k}`,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      }));
    const logprobs = (t: string) => {
      const toks = t.split(/(?=\s)/);
      return chat
        ? { content: toks.map((tok) => ({ token: tok, logprob: -0.5, top_logprobs: [] })) }
        : { tokens: toks, token_logprobs: toks.map(() => -0.25) };
    };
    const counted = options.usage?.(n) ?? {
      prompt_tokens: 42,
      completion_tokens: texts.reduce((s, t) => s + t.split(/(?=\s)/).length, 0),
    };
    const usage = { ...counted, total_tokens: options.usage ? counted.prompt_tokens + counted.completion_tokens : 0 };
    if (body.stream && options.streams !== false) {
      res.writeHead(200, { ...CORS, 'content-type': 'text/event-stream' });
      texts.forEach((t, index) => {
        for (const piece of t.match(/.{1,5}/gs) ?? []) {
          const choice = chat
            ? { index, delta: { content: piece }, finish_reason: null }
            : { index, text: piece, finish_reason: null };
          res.write(`data: ${JSON.stringify({ object: 'chunk', choices: [choice] })}\n\n`);
        }
        if (calls[index]?.length) {
          const delta = { tool_calls: toolCalls(index).map((c, k) => ({ index: k, ...c })) };
          res.write(
            `data: ${JSON.stringify({ object: 'chunk', choices: [{ index, delta, finish_reason: null }] })}\n\n`,
          );
        }
        const done = calls[index]?.length ? 'tool_calls' : 'stop';
        const last = chat ? { index, delta: {}, finish_reason: done } : { index, text: '', finish_reason: 'stop' };
        res.write(`data: ${JSON.stringify({ choices: [last] })}\n\n`);
      });
      res.write(`data: ${JSON.stringify({ choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    const lp = (t: string) => (body.logprobs && !options.omitsLogprobs ? logprobs(t) : null);
    const choices = texts.map((t, index) =>
      chat
        ? calls[index]?.length
          ? {
              index,
              message: { role: 'assistant', content: t === '' ? null : t, tool_calls: toolCalls(index) },
              finish_reason: 'tool_calls',
              logprobs: lp(t),
            }
          : { index, message: { role: 'assistant', content: t }, finish_reason: 'stop', logprobs: lp(t) }
        : { index, text: t, finish_reason: 'stop', logprobs: lp(t) },
    );
    json(res, 200, {
      id: 'x',
      object: chat ? 'chat.completion' : 'text_completion',
      model: options.servedModel ?? body.model,
      choices,
      usage,
      ...(options.fingerprint ? { system_fingerprint: options.fingerprint } : {}),
    });
  };

  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      let body: Record<string, unknown> | null;
      try {
        body = data ? (JSON.parse(data) as Record<string, unknown>) : null;
      } catch {
        body = null;
      }
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, at: Date.now() });
      if (req.method === 'OPTIONS') {
        res.writeHead(204, CORS).end();
        return;
      }
      if (path === '/v1/models' && options.models !== null) {
        const models = options.models ?? [{ id: 'test-model', object: 'model', max_model_len: 8192 }];
        json(res, 200, {
          object: 'list',
          data: models.map((m) => (typeof m === 'string' ? { id: m, object: 'model' } : m)),
        });
        return;
      }
      if (path === '/tokenize' && options.tokenize !== false) {
        const text = String(body?.prompt ?? body?.content ?? '');
        json(
          res,
          200,
          body?.prompt !== undefined
            ? { count: text.split(/\s+/).filter(Boolean).length }
            : {
                tokens: text
                  .split(/\s+/)
                  .filter(Boolean)
                  .map((_, i) => i),
              },
        );
        return;
      }
      if (path !== '/v1/chat/completions' && path !== '/v1/completions') {
        json(res, 404, { error: { message: `no route ${path}` } });
        return;
      }
      const call = ++calls;
      const step = queue.shift() ?? { kind: 'ok' };
      if (step.kind === 'ok') {
        const answer = () => {
          inFlight -= 1;
          reply(res, path, body ?? {}, call);
        };
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const delay = options.delayMs?.(body ?? {}) ?? 0;
        if (delay > 0) setTimeout(answer, delay);
        else answer();
      } else if (step.kind === 'status') {
        res.writeHead(step.status, {
          ...CORS,
          'content-type': 'application/json',
          ...(step.retryAfter ? { 'retry-after': step.retryAfter } : {}),
        });
        res.end(step.body ?? JSON.stringify({ error: { message: `scripted ${step.status}` } }));
      } else if (step.kind === 'raw') {
        res.writeHead(step.status ?? 200, { ...CORS, 'content-type': step.contentType ?? 'application/json' });
        res.end(step.body);
      } else if (step.kind === 'hang') hanging.add(res);
      else req.socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    completions: () => requests.filter((r) => r.path.endsWith('completions') && r.method !== 'OPTIONS'),
    calls: () => calls,
    maxInFlight: () => maxInFlight,
    script: (...steps) => queue.push(...steps),
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
