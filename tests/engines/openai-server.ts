/**
 * A local server on 127.0.0.1 (random port) that speaks the OpenAI protocol the way vLLM,
 * llama.cpp's server and Ollama do, with scripted misbehaviour: each request to a completion
 * endpoint takes the next scripted reply, or the default one. Every request is recorded.
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

export interface FakeServerOptions {
  /** Answer only one choice whatever n is (llama.cpp's server, Ollama). */
  ignoresN?: boolean;
  models?: Array<Record<string, unknown>>;
  /** `system_fingerprint` of every reply (vLLM and OpenAI send one); default none. */
  fingerprint?: string;
  /** The model name replies carry; default the request's (vLLM answers with the served name). */
  servedModel?: string;
  /** Leave token log-probabilities out even when asked (servers that do not compute them). */
  omitsLogprobs?: boolean;
  /** Text of choice i for a request; default `SELECT <i>` in a sql fence. */
  text?: (body: Record<string, unknown>, i: number) => string;
}

export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  /** Completion requests only. */
  completions(): RecordedRequest[];
  script(...steps: Scripted[]): void;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
};

export async function startFakeOpenAi(options: FakeServerOptions = {}): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const queue: Scripted[] = [];
  const hanging = new Set<ServerResponse>();
  const text = options.text ?? ((_b, i) => `Here it is:\n\`\`\`sql\nSELECT ${i + 1};\n\`\`\``);

  const reply = (res: ServerResponse, path: string, body: Record<string, unknown>) => {
    const chat = path === '/v1/chat/completions';
    const n = options.ignoresN ? 1 : typeof body.n === 'number' ? body.n : 1;
    const texts = Array.from({ length: n }, (_, i) => text(body, i));
    const logprobs = (t: string) => {
      const toks = t.split(/(?=\s)/);
      return chat ? { content: toks.map((tok) => ({ token: tok, logprob: -0.5, top_logprobs: [] })) } : { tokens: toks, token_logprobs: toks.map(() => -0.25) };
    };
    const usage = { prompt_tokens: 42, completion_tokens: texts.reduce((s, t) => s + t.split(/(?=\s)/).length, 0), total_tokens: 0 };
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      texts.forEach((t, index) => {
        for (const piece of t.match(/.{1,5}/gs) ?? []) {
          const choice = chat ? { index, delta: { content: piece }, finish_reason: null } : { index, text: piece, finish_reason: null };
          res.write(`data: ${JSON.stringify({ object: 'chunk', choices: [choice] })}\n\n`);
        }
        const last = chat ? { index, delta: {}, finish_reason: 'stop' } : { index, text: '', finish_reason: 'stop' };
        res.write(`data: ${JSON.stringify({ choices: [last] })}\n\n`);
      });
      res.write(`data: ${JSON.stringify({ choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    const lp = (t: string) => (body.logprobs && !options.omitsLogprobs ? logprobs(t) : null);
    const choices = texts.map((t, index) =>
      chat
        ? { index, message: { role: 'assistant', content: t }, finish_reason: 'stop', logprobs: lp(t) }
        : { index, text: t, finish_reason: 'stop', logprobs: lp(t) },
    );
    json(res, 200, {
      id: 'x', object: chat ? 'chat.completion' : 'text_completion', model: options.servedModel ?? body.model, choices, usage,
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
      if (path === '/v1/models') {
        json(res, 200, { object: 'list', data: options.models ?? [{ id: 'test-model', object: 'model', max_model_len: 8192 }] });
        return;
      }
      if (path === '/tokenize') {
        const text = String(body?.prompt ?? body?.content ?? '');
        json(res, 200, body?.prompt !== undefined ? { count: text.split(/\s+/).filter(Boolean).length } : { tokens: text.split(/\s+/).filter(Boolean).map((_, i) => i) });
        return;
      }
      if (path !== '/v1/chat/completions' && path !== '/v1/completions') {
        json(res, 404, { error: { message: `no route ${path}` } });
        return;
      }
      const step = queue.shift() ?? { kind: 'ok' };
      if (step.kind === 'ok') reply(res, path, body ?? {});
      else if (step.kind === 'status') {
        res.writeHead(step.status, { 'content-type': 'application/json', ...(step.retryAfter ? { 'retry-after': step.retryAfter } : {}) });
        res.end(step.body ?? JSON.stringify({ error: { message: `scripted ${step.status}` } }));
      } else if (step.kind === 'raw') {
        res.writeHead(step.status ?? 200, { 'content-type': step.contentType ?? 'application/json' });
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
    completions: () => requests.filter((r) => r.path.endsWith('completions')),
    script: (...steps) => queue.push(...steps),
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
