/**
 * A test double for a model: a server speaking the OpenAI chat-completions protocol on
 * 127.0.0.1 (random port), with CORS so the app's page can call it, answering every chat
 * completion with `respond(body)` after `delayMs(body)` milliseconds and counting the calls.
 * Used where a model's weights cannot run here (browser tests of the judge and the policy).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatBody {
  model: string;
  seed?: number;
  temperature?: number;
  messages: { role: string; content: string }[];
}

export interface LoopbackModels {
  /** Base URL without /v1, as a user types it. */
  url: string;
  calls: () => number;
  /** Most chat completions answered at once so far. */
  maxInFlight: () => number;
  close: () => Promise<void>;
}

export async function startLoopbackOpenAi(options: {
  models: string[];
  respond: (body: ChatBody) => string;
  delayMs?: (body: ChatBody) => number;
}): Promise<LoopbackModels> {
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const cors = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': 'content-type, authorization', 'Access-Control-Allow-Methods': 'GET, POST, OPTIONS' };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => res.writeHead(status, { ...cors, 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
      if (req.url?.endsWith('/v1/models')) return send(200, { object: 'list', data: options.models.map((id) => ({ id, object: 'model' })) });
      if (req.method !== 'POST' || !req.url?.endsWith('/v1/chat/completions')) return send(404, { error: { message: `no route ${req.method} ${req.url}` } });
      calls += 1;
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatBody;
      const content = options.respond(body);
      setTimeout(() => {
        inFlight -= 1;
        send(200, {
          id: `c${calls}`, object: 'chat.completion', model: body.model,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
          usage: { prompt_tokens: 12, completion_tokens: 40, total_tokens: 52 },
        });
      }, options.delayMs?.(body) ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () => calls,
    maxInFlight: () => maxInFlight,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
