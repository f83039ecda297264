/**
 * A local server speaking the OpenAI chat-completions protocol on 127.0.0.1 (random port) that
 * answers with recorded judge answers and counts calls, for end-to-end judge tests.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  model: string;
  messages: Array<{ role: string; content: string }>;
  temperature?: number;
  seed?: number;
  max_tokens?: number;
}

/** Returns the answer's content, or `{status, body}` for an HTTP error. */
export type Responder = (req: ChatRequest, call: number) => string | { status: number; body: string };

export interface JudgeServer {
  /** Base URL ending in /v1. */
  url: string;
  /** Chat-completion requests received. */
  calls: number;
  requests: ChatRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

export async function startJudgeServer(respond: Responder): Promise<JudgeServer> {
  const state = { calls: 0, requests: [] as ChatRequest[] };
  const server: Server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const body = JSON.parse(await readBody(req)) as ChatRequest;
    state.calls += 1;
    state.requests.push(body);
    const answer = respond(body, state.calls);
    if (typeof answer !== 'string') {
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${state.calls}`,
        object: 'chat.completion',
        created: 0,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get calls() {
      return state.calls;
    },
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  } as JudgeServer;
}

/** The text between <tag> and </tag> of the user message (the prompts delimit every part). */
export function section(req: ChatRequest, tag: string): string {
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  const m = new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(user);
  return m ? m[1]! : '';
}
