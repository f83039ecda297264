/**
 * A judge for end-to-end judge tests: recorded judge answers from a loopback OpenAI server, its
 * calls counted.
 */
import { startOpenAiServer } from '../../helpers/openai-server.ts';

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

/**
 * The tests' one loopback OpenAI server (tests/helpers/openai-server.ts) as a judge: one choice
 * per request from `respond`, no `/v1/models` or `/tokenize` route (a server without them is
 * accepted as it is), no streaming.
 */
export async function startJudgeServer(respond: Responder): Promise<JudgeServer> {
  const server = await startOpenAiServer({
    models: null,
    tokenize: false,
    streams: false,
    ignoresN: true,
    usage: () => ({ prompt_tokens: 10, completion_tokens: 5 }),
    text: (body, _i, call) => respond(body as unknown as ChatRequest, call),
  });
  return {
    url: `${server.url}/v1`,
    get calls() {
      return server.calls();
    },
    get requests() {
      return server.completions().map((r) => r.body as unknown as ChatRequest);
    },
    close: () => server.close(),
  };
}

/** The text between <tag> and </tag> of the user message (the prompts delimit every part). */
export function section(req: ChatRequest, tag: string): string {
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  const m = new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(user);
  return m ? m[1]! : '';
}
