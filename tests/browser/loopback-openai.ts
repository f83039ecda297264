/**
 * The tests' one loopback OpenAI server (tests/helpers/openai-server.ts), set up as the browser
 * tests' TEST DOUBLE FOR A MODEL (no weights can run here): CORS for the app's page, one choice
 * per request from `respond(body)` after `delayMs(body)` milliseconds, no `/tokenize` route, no
 * streaming; calls and the most in flight at once counted.
 */
import { startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.ts';

export interface ChatBody {
  model: string;
  seed?: number;
  temperature?: number;
  messages: { role: string; content: string }[];
}

/** Base URL without /v1 (as a user types it), `calls()`, `maxInFlight()`, `close()`. */
export type LoopbackModels = OpenAiServer;

export function startLoopbackOpenAi(options: {
  models: string[];
  respond: (body: ChatBody) => string;
  delayMs?: (body: ChatBody) => number;
}): Promise<LoopbackModels> {
  const delayMs = options.delayMs;
  return startOpenAiServer({
    models: options.models,
    ignoresN: true,
    tokenize: false,
    streams: false,
    usage: () => ({ prompt_tokens: 12, completion_tokens: 40 }),
    text: (body) => options.respond(body as unknown as ChatBody),
    ...(delayMs ? { delayMs: (body: Record<string, unknown>) => delayMs(body as unknown as ChatBody) } : {}),
  });
}
