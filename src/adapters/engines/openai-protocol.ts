/**
 * The OpenAI-compatible wire format as vLLM, llama.cpp's server and Ollama speak it: request
 * bodies, validation of replies at the boundary (every problem names the endpoint), Server-Sent
 * Events, and Retry-After. Pure functions; the transport is in openai-engine.ts.
 */
import type { ChatMessage, SamplingParams } from '../../core/engine/engine.ts';
import { EngineError } from '../../core/engine/engine-error.ts';
import { renderPlainChat } from '../../core/engine/plain-template.ts';
import { hermesToolCalls } from '../../core/episode/verl-sql.ts';

export type Endpoint = 'chat' | 'completions';

export const ENDPOINT_PATH: Record<Endpoint, string> = { chat: '/v1/chat/completions', completions: '/v1/completions' };

/** What one choice of a reply holds, whatever the endpoint. */
interface ParsedChoice {
  index: number;
  text: string;
  finishReason: 'stop' | 'length';
  logprobs: number[] | null;
  /** vLLM's `stop_reason`: the stop string the server stopped at (it cuts it from the text), when it says. */
  stopReason?: string;
  /**
   * A streamed choice that the stream ended before finishing: no `finish_reason` for it and no
   * `[DONE]` (a dropped connection, a proxy's timeout). Its text may be cut anywhere.
   */
  cut?: true;
}

export interface ParsedReply {
  choices: ParsedChoice[];
  promptTokens: number | null;
  completionTokens: number | null;
  /** The reply's `model` (the model that answered) and `system_fingerprint`, when sent. */
  model: string | null;
  systemFingerprint: string | null;
}

const strOrNull = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * `/v1/completions` takes text: a prompt that is a single user message is sent as is (BIRD's
 * own prompts are completion prompts); several messages are joined with the plain template.
 */
function completionPrompt(messages: readonly ChatMessage[]): string {
  return messages.length === 1 && messages[0]!.role === 'user' ? messages[0]!.content : renderPlainChat(messages);
}

export function requestBody(
  endpoint: Endpoint,
  model: string,
  messages: readonly ChatMessage[],
  p: SamplingParams,
  n: number,
  seed: number | null,
  stream: boolean,
  tools?: readonly unknown[],
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    max_tokens: p.maxTokens,
    temperature: p.temperature,
    top_p: p.topP,
    n,
  };
  if (seed !== null) body.seed = seed;
  if (p.stop.length > 0) body.stop = p.stop;
  if (p.stopTokenIds && p.stopTokenIds.length > 0) body.stop_token_ids = p.stopTokenIds;
  if (endpoint === 'chat') {
    body.messages = messages.map((m) => ({
      role: m.role,
      content: m.content,
      ...(m.toolCalls?.length
        ? {
            tool_calls: m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : {}),
      ...(m.toolCallId !== undefined ? { tool_call_id: m.toolCallId } : {}),
    }));
    // A tool-calling preset's tools: the server's chat template renders them into the prompt.
    if (tools && tools.length > 0) body.tools = tools;
    // A last assistant message is a prefill or the episode so far: the model continues it
    // (vLLM's chat template options; a server without them answers in a new turn).
    if (messages.at(-1)?.role === 'assistant') {
      body.continue_final_message = true;
      body.add_generation_prompt = false;
    }
    if (p.logprobs) body.logprobs = true;
  } else {
    body.prompt = completionPrompt(messages);
    if (p.logprobs) body.logprobs = 1;
  }
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function bad(where: string, what: string): never {
  throw new EngineError('BAD_REPLY', `the reply is not an OpenAI-compatible completion: ${what}`, where);
}

function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string' ? `the string ${JSON.stringify(v.slice(0, 40))}` : typeof v;
}

/** Parses JSON text, with a message that quotes the start of what came instead. */
export function parseJsonReply(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const start = text.trim().slice(0, 80);
    throw new EngineError('BAD_REPLY', `the reply is not valid JSON (it starts with ${JSON.stringify(start)})`, where);
  }
}

function tokenLogprobs(v: unknown): number[] | null {
  if (!isObj(v)) return null;
  if (Array.isArray(v.content))
    return v.content.map((t) => (isObj(t) && typeof t.logprob === 'number' ? t.logprob : NaN));
  if (Array.isArray(v.token_logprobs)) return v.token_logprobs.map((x) => (typeof x === 'number' ? x : NaN));
  return null;
}

function finish(v: unknown): 'stop' | 'length' {
  return v === 'length' ? 'length' : 'stop';
}

/**
 * Text of a chat message. Servers with a reasoning parser (vLLM `--reasoning-parser`) move the
 * thinking to `reasoning_content`; it is put back as `<think>...</think>` so the completion is
 * what the model wrote and extraction strips it as usual.
 */
function chatText(message: Record<string, unknown>, where: string, i: number): string {
  const content = message.content;
  if (content !== null && content !== undefined && typeof content !== 'string')
    bad(where, `choices[${i}].message.content is ${describe(content)}`);
  const reasoning = message.reasoning_content ?? message.reasoning;
  const think = typeof reasoning === 'string' && reasoning !== '' ? `<think>${reasoning}</think>` : '';
  return withToolCalls(think + (content ?? ''), toolCallsOf(message.tool_calls));
}

/** A reply's `tool_calls` (a server with a tool parser on): name and arguments text of each. */
function toolCallsOf(v: unknown): { name: string; arguments: string }[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((c) => {
    const f = isObj(c) && isObj(c.function) ? c.function : null;
    if (!f || typeof f.name !== 'string') return [];
    return [
      { name: f.name, arguments: typeof f.arguments === 'string' ? f.arguments : JSON.stringify(f.arguments ?? {}) },
    ];
  });
}

/**
 * The text with the server's parsed tool calls written back as the model wrote them (Qwen's
 * hermes `<tool_call>` blocks, as its chat template renders them), so that every engine hands the
 * episode runner one text to read.
 */
function withToolCalls(text: string, calls: readonly { name: string; arguments: string }[]): string {
  return calls.length === 0 ? text : [...(text ? [text] : []), hermesToolCalls(calls)].join('\n');
}

export function parseReply(endpoint: Endpoint, json: unknown, where: string): ParsedReply {
  if (!isObj(json)) bad(where, `expected a JSON object, found ${describe(json)}`);
  if (isObj(json.error))
    throw new EngineError(
      'HTTP',
      `the server reported an error: ${String(json.error.message ?? JSON.stringify(json.error))}`,
      where,
    );
  if (!Array.isArray(json.choices)) bad(where, `"choices" is ${describe(json.choices)}`);
  // An empty list is no answer (not a cancelled request): every asked sample is an error.
  if (json.choices.length === 0) bad(where, 'the reply has no choice ("choices": [])');
  const choices = json.choices.map((c, i): ParsedChoice => {
    if (!isObj(c)) bad(where, `choices[${i}] is ${describe(c)}`);
    let text: string;
    if (endpoint === 'chat') {
      if (!isObj(c.message)) bad(where, `choices[${i}].message is ${describe(c.message)}`);
      text = chatText(c.message, where, i);
    } else {
      if (typeof c.text !== 'string') bad(where, `choices[${i}].text is ${describe(c.text)}`);
      text = c.text;
    }
    return {
      index: typeof c.index === 'number' ? c.index : i,
      text,
      finishReason: finish(c.finish_reason),
      logprobs: tokenLogprobs(c.logprobs),
      ...(typeof c.stop_reason === 'string' ? { stopReason: c.stop_reason } : {}),
    };
  });
  const usage = isObj(json.usage) ? json.usage : {};
  return {
    choices: choices.sort((a, b) => a.index - b.index),
    promptTokens: typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : null,
    completionTokens: typeof usage.completion_tokens === 'number' ? usage.completion_tokens : null,
    model: strOrNull(json.model),
    systemFingerprint: strOrNull(json.system_fingerprint),
  };
}

/** Accumulates a streamed reply (Server-Sent Events) into the same shape as `parseReply`. */
export class StreamAccumulator {
  /** `finish` stays null until the server sends the choice's finish_reason. */
  private readonly texts = new Map<
    number,
    {
      text: string;
      finish: 'stop' | 'length' | null;
      logprobs: number[];
      calls?: Map<number, { name: string; arguments: string }>;
      /** The server's reasoning (`reasoning_content`) is open: a `</think>` goes before the next content. */
      reasoning?: boolean;
    }
  >();
  private pending = '';
  private promptTokens: number | null = null;
  private completionTokens: number | null = null;
  private model: string | null = null;
  private fingerprint: string | null = null;
  done = false;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly where: string,
    private readonly onText?: (index: number, piece: string) => void,
  ) {}

  /** Feeds decoded text; complete `data:` lines are parsed, a partial line waits for more. */
  push(chunk: string): void {
    this.pending += chunk;
    const lines = this.pending.split(/\r?\n/);
    this.pending = lines.pop()!;
    for (const line of lines) this.line(line);
  }

  end(): ParsedReply {
    if (this.pending.trim() !== '') this.line(this.pending);
    this.pending = '';
    if (this.texts.size === 0) bad(this.where, 'the stream ended without any choice');
    return {
      choices: [...this.texts.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([index, c]): ParsedChoice => ({
          index,
          text: withToolCalls(
            c.text,
            c.calls ? [...c.calls.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v) : [],
          ),
          // A choice with no finish_reason is finished when the server said [DONE], cut when it did not.
          finishReason: c.finish ?? 'stop',
          logprobs: c.logprobs.length > 0 ? c.logprobs : null,
          ...(c.finish === null && !this.done ? { cut: true as const } : {}),
        })),
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      model: this.model,
      systemFingerprint: this.fingerprint,
    };
  }

  private line(line: string): void {
    if (!line.startsWith('data:')) return;
    const data = line.slice(5).trim();
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    const json = parseJsonReply(data, this.where);
    if (!isObj(json)) bad(this.where, `a stream event is ${describe(json)}`);
    if (isObj(json.error))
      throw new EngineError('HTTP', `the server reported an error: ${String(json.error.message)}`, this.where);
    this.model ??= strOrNull(json.model);
    this.fingerprint ??= strOrNull(json.system_fingerprint);
    if (isObj(json.usage)) {
      if (typeof json.usage.prompt_tokens === 'number') this.promptTokens = json.usage.prompt_tokens;
      if (typeof json.usage.completion_tokens === 'number') this.completionTokens = json.usage.completion_tokens;
    }
    if (!Array.isArray(json.choices)) return;
    for (const c of json.choices) {
      if (!isObj(c)) continue;
      const index = typeof c.index === 'number' ? c.index : 0;
      const slot = this.texts.get(index) ?? { text: '', finish: null, logprobs: [] };
      let piece = '';
      if (this.endpoint === 'chat' && isObj(c.delta)) {
        const r = c.delta.reasoning_content ?? c.delta.reasoning;
        // Whether the server's reasoning is open is kept apart from the text: content may itself hold `<think>`.
        if (typeof r === 'string' && r !== '') {
          piece += (slot.reasoning ? '' : '<think>') + r;
          slot.reasoning = true;
        }
        if (typeof c.delta.content === 'string' && c.delta.content !== '') {
          if (slot.reasoning) piece += '</think>';
          slot.reasoning = false;
          piece += c.delta.content;
        }
        if (Array.isArray(c.delta.tool_calls))
          for (const [k, t] of c.delta.tool_calls.entries()) {
            if (!isObj(t)) continue;
            slot.calls ??= new Map();
            const at = typeof t.index === 'number' ? t.index : k;
            const call = slot.calls.get(at) ?? { name: '', arguments: '' };
            const f = isObj(t.function) ? t.function : {};
            if (typeof f.name === 'string') call.name += f.name;
            if (typeof f.arguments === 'string') call.arguments += f.arguments;
            slot.calls.set(at, call);
          }
      } else if (typeof c.text === 'string') piece = c.text;
      if (piece) {
        slot.text += piece;
        this.onText?.(index, piece);
      }
      if (c.finish_reason) slot.finish = finish(c.finish_reason);
      slot.logprobs.push(...(tokenLogprobs(c.logprobs) ?? []));
      this.texts.set(index, slot);
    }
  }
}

/** Milliseconds a Retry-After header asks for (delta-seconds or an HTTP date), or null. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (header === null || header.trim() === '') return null;
  const t = header.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  const date = Date.parse(t);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The server's own error message from an error body (OpenAI `{error: {message}}`, or text). */
export function serverMessage(body: string): string {
  try {
    const j = JSON.parse(body) as unknown;
    if (isObj(j)) {
      if (isObj(j.error) && typeof j.error.message === 'string') return j.error.message;
      if (typeof j.error === 'string') return j.error;
      if (typeof j.message === 'string') return j.message;
      if (typeof j.detail === 'string') return j.detail;
    }
  } catch {
    // not JSON: quote the text
  }
  return body.trim().slice(0, 300);
}
