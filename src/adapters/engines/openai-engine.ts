/**
 * The OpenAI-compatible engine: a model served by vLLM, llama.cpp's server, Ollama or any
 * server speaking `/v1/chat/completions` or `/v1/completions`. This is how models bigger than
 * the user's GPU are evaluated.
 *
 * - At most `concurrency` requests are in flight, however many questions the run layer asks
 *   in parallel.
 * - 429, 5xx and network failures are retried up to `maxRetries` times with exponential
 *   backoff and jitter; a Retry-After header is honoured (up to `maxRetryAfterMs`).
 * - `n` > 1 is asked for natively; a server that returns fewer choices (llama.cpp's server,
 *   Ollama) is remembered and the remaining samples are generated one request each, sample i
 *   with seed + i.
 * - Failures that concern the whole engine (server unreachable, 401/403, unknown model, 5xx or
 *   429 after the retries) reject, so a run can pause. Failures that concern one prompt (400,
 *   413, 422: usually a prompt longer than the context; a malformed reply) become error
 *   samples.
 * - The API key is kept in a private field: it is sent as `Authorization: Bearer`, never put
 *   in messages, `describe()` or anything exported.
 */
import type { AbortSignalLike } from '../../core/eval/executor.ts';
import type {
  Completion,
  Engine,
  EngineCapabilities,
  EngineDevice,
  ModelRef,
  Prompt,
  SamplingParams,
  GenerateHooks,
} from '../../core/engine/engine.ts';
import { EngineError, isEngineError } from '../../core/engine/engine-error.ts';
import {
  abortedCompletion,
  errorCompletion,
  meanLogprob,
  sampleSeed,
  validateSampling,
} from '../../core/engine/sampling.ts';
import {
  ENDPOINT_PATH,
  StreamAccumulator,
  parseJsonReply,
  parseReply,
  requestBody,
  type Endpoint,
  type ParsedReply,
} from './openai-protocol.ts';
import { OpenAiHttp, PROMPT_STATUS } from './openai-http.ts';

export interface OpenAiEngineOptions {
  /** Server root, e.g. `http://127.0.0.1:8000` (a trailing `/v1` is accepted). */
  baseUrl: string;
  /** Model name the server knows; `load({ id })` may set it instead. */
  model?: string;
  /** Sent as `Authorization: Bearer <key>`; never exported. Default none. */
  apiKey?: string | null;
  /** Default `chat` (`/v1/chat/completions`); `completions` sends text to `/v1/completions`. */
  endpoint?: Endpoint;
  /** Requests in flight at most. Default 4. */
  concurrency?: number;
  /** Retries of one request after 429, 5xx or a network failure. Default 4. */
  maxRetries?: number;
  /** First backoff in ms, doubled per retry, with jitter. Default 500. */
  retryBaseMs?: number;
  /** Longest backoff in ms. Default 30 000. */
  retryMaxMs?: number;
  /** A Retry-After longer than this fails at once instead of waiting. Default 120 000. */
  maxRetryAfterMs?: number;
  /** Time limit of one request in ms. Default 600 000. */
  timeoutMs?: number;
  /** Stream tokens (Server-Sent Events). Default false. */
  stream?: boolean;
  /** Context window in tokens; default: what `/v1/models` reports (vLLM, llama.cpp), else unknown. */
  contextWindow?: number | null;
  /** Token counting endpoint: vLLM's or llama.cpp's `/tokenize`. Default none. */
  tokenizer?: 'none' | 'vllm' | 'llama.cpp';
  /** Injected for tests. */
  fetch?: typeof fetch;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
}

/**
 * What the server showed it does, from its replies (not assumed): `n` natively or one sample
 * per request, token log-probabilities returned or left out. `unchecked` until a reply says.
 * Seeds are sent; no reply says whether they were used, so `seed` names the server family from
 * /v1/models (`owned_by`: vllm, sglang, llamacpp...) for the reader to judge.
 */
export interface OpenAiServerSupport {
  n: 'native' | 'one per request' | 'unchecked';
  logprobs: 'yes' | 'no' | 'unchecked';
  /** `owned_by` of the model in /v1/models, or null when the server did not say. */
  ownedBy: string | null;
}

/** What a run records about the engine: everything but the key. */
export interface OpenAiEngineDescription {
  kind: 'openai';
  baseUrl: string;
  model: string;
  endpoint: Endpoint;
  hasApiKey: boolean;
  concurrency: number;
  maxRetries: number;
  support: OpenAiServerSupport;
}

export class OpenAiEngine implements Engine {
  readonly kind = 'openai';
  readonly capabilities: EngineCapabilities;
  private readonly base: string;
  private model: string;
  private readonly endpoint: Endpoint;
  private readonly http: OpenAiHttp;
  private loaded = false;
  private window: number | null;
  /** Bumped by interrupt(): generate() calls that started before it stop. */
  private epoch = 0;
  /** Set when the server answered a request for n > 1 with fewer choices. */
  private serverIgnoresN = false;
  /** Set when the server answered a request for logprobs without any: they are not asked again. */
  private serverOmitsLogprobs = false;
  private readonly support: OpenAiServerSupport = { n: 'unchecked', logprobs: 'unchecked', ownedBy: null };
  /** The model id and system_fingerprint of the latest reply that named them. */
  private served: { model: string | null; fingerprint: string | null } = { model: null, fingerprint: null };
  /** Requests in flight at most: the run layer keeps as many questions going. */
  readonly concurrency: number;

  /** The settings without the key, which only the HTTP client holds (in a private field). */
  private readonly options: Omit<OpenAiEngineOptions, 'apiKey'>;

  constructor(settings: OpenAiEngineOptions) {
    const { apiKey, ...options } = settings;
    this.options = options;
    let base: string;
    try {
      base = new URL(options.baseUrl).href;
    } catch {
      throw new EngineError('CONFIG', `the base URL ${JSON.stringify(options.baseUrl)} is not an absolute http(s) URL`);
    }
    if (!/^https?:/.test(base))
      throw new EngineError('CONFIG', `the base URL ${base} must start with http:// or https://`);
    this.base = base.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.model = options.model ?? '';
    this.endpoint = options.endpoint ?? 'chat';
    const concurrency = options.concurrency ?? 4;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new EngineError('CONFIG', `concurrency must be an integer >= 1, got ${concurrency}`);
    this.concurrency = concurrency;
    this.window = options.contextWindow ?? null;
    this.capabilities = {
      streaming: options.stream ?? false,
      nativeN: true,
      logprobs: true,
      tokenize: (options.tokenizer ?? 'none') !== 'none',
      // The chat endpoint sends vLLM's continue_final_message when the last message is the assistant's.
      continueFinal: this.endpoint === 'chat',
      // The chat endpoint takes `tools`, tool messages and assistant tool calls, and returns `tool_calls`.
      toolRole: this.endpoint === 'chat',
    };
    this.http = new OpenAiHttp({
      ...options,
      base: this.base,
      apiKey: apiKey || null,
      concurrency,
      stream: this.capabilities.streaming,
      model: () => this.model,
    });
  }

  describe(): OpenAiEngineDescription {
    return {
      kind: 'openai',
      baseUrl: this.base,
      model: this.model,
      endpoint: this.endpoint,
      hasApiKey: this.http.hasApiKey,
      concurrency: this.concurrency,
      maxRetries: this.options.maxRetries ?? 4,
      support: { ...this.support },
    };
  }

  /** The key must never reach a run file, even through JSON.stringify(engine). */
  toJSON(): OpenAiEngineDescription {
    return this.describe();
  }

  async load(model: ModelRef, hooks: { signal?: AbortSignalLike } = {}): Promise<void> {
    if (model.id) this.model = model.id;
    if (!this.model) throw new EngineError('CONFIG', 'no model name: set it in the engine settings');
    // /v1/models checks that the server is reachable and serves the model; servers without
    // the route are accepted as they are.
    let listed: unknown;
    try {
      listed = await this.http.exchange('GET', '/v1/models', undefined, hooks.signal, async (res, where) =>
        parseJsonReply(await res.text(), where),
      );
    } catch (err) {
      if (isEngineError(err) && err.code === 'HTTP' && /HTTP 404/.test(err.message)) listed = null;
      else throw err;
    }
    const data = (listed as { data?: unknown } | null)?.data;
    if (Array.isArray(data)) {
      const entries = data.filter((d): d is Record<string, unknown> => typeof d === 'object' && d !== null);
      const entry = entries.find((d) => d.id === this.model);
      if (!entry) {
        const names = entries
          .map((d) => String(d.id))
          .slice(0, 20)
          .join(', ');
        throw new EngineError(
          'MODEL_MISSING',
          `the server does not serve a model named "${this.model}" (it serves: ${names || 'none'})`,
          `${this.base}/v1/models`,
        );
      }
      if (typeof entry.owned_by === 'string') this.support.ownedBy = entry.owned_by;
      if (this.options.contextWindow == null) {
        const meta = entry.meta as Record<string, unknown> | undefined;
        const n = entry.max_model_len ?? meta?.n_ctx ?? meta?.n_ctx_train;
        if (typeof n === 'number' && n > 0) this.window = n;
      }
    }
    this.loaded = true;
  }

  contextWindow(): number | null {
    return this.window;
  }

  /**
   * The model runs on the server, on hardware it does not describe: the device is `server`,
   * named by the model id it answers with (the configured one until a reply names it), who
   * serves it (`owned_by` of /v1/models) and its `system_fingerprint` once a reply sends one.
   */
  device(): EngineDevice | null {
    if (!this.loaded) return null;
    const parts = [`model ${this.served.model ?? this.model}`];
    if (this.support.ownedBy) parts.push(`owned by ${this.support.ownedBy}`);
    if (this.served.fingerprint) parts.push(`system_fingerprint ${this.served.fingerprint}`);
    return { device: 'server', reason: null, detail: `${parts.join(', ')} at ${this.base}` };
  }

  async countTokens(text: string): Promise<number> {
    const kind = this.options.tokenizer ?? 'none';
    if (kind === 'none')
      throw new EngineError(
        'CONFIG',
        'token counting is not configured for this server (set tokenizer to vllm or llama.cpp)',
      );
    const body = kind === 'vllm' ? { model: this.model, prompt: text, add_special_tokens: false } : { content: text };
    return this.http.slots.run(() =>
      this.http.exchange('POST', '/tokenize', body, undefined, async (res, where) => {
        const j = parseJsonReply(await res.text(), where) as { count?: unknown; tokens?: unknown };
        if (typeof j.count === 'number') return j.count;
        if (Array.isArray(j.tokens)) return j.tokens.length;
        throw new EngineError('BAD_REPLY', 'the /tokenize reply has neither "count" nor "tokens"', where);
      }),
    );
  }

  /** One request for `n` choices. */
  private request(
    prompt: Prompt,
    p: SamplingParams,
    n: number,
    seed: number | null,
    signal: AbortSignalLike | undefined,
    onText?: (i: number, piece: string) => void,
  ): Promise<ParsedReply> {
    const stream = this.capabilities.streaming;
    const body = requestBody(this.endpoint, this.model, prompt.messages, p, n, seed, stream, prompt.tools);
    return this.http.slots.run(() =>
      this.http.exchange('POST', ENDPOINT_PATH[this.endpoint], body, signal, async (res, where) => {
        const type = res.headers.get('content-type') ?? '';
        if (!stream || !type.includes('text/event-stream') || !res.body)
          return parseReply(this.endpoint, parseJsonReply(await res.text(), where), where);
        const acc = new StreamAccumulator(this.endpoint, where, onText);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          acc.push(value);
        }
        return acc.end();
      }),
    );
  }

  async generate(prompt: Prompt, params: SamplingParams, hooks: GenerateHooks = {}): Promise<Completion[]> {
    validateSampling(params);
    if (!this.loaded) throw new EngineError('NOT_LOADED', 'the engine is not loaded: call load() first');
    const epoch = this.epoch;
    const stopped = () => hooks.signal?.aborted === true || this.epoch !== epoch;
    const out: Completion[] = [];

    /** One request for `n` samples starting at sample `first`; failures about this prompt become error samples. */
    const ask = async (n: number, first: number, seed: number | null): Promise<boolean> => {
      const t0 = performance.now();
      try {
        const asked = params.logprobs && !this.serverOmitsLogprobs ? params : { ...params, logprobs: false };
        const r = await this.request(
          prompt,
          asked,
          n,
          seed,
          hooks.signal,
          hooks.onToken && ((i, piece) => hooks.onToken!(first + i, piece)),
        );
        const ms = performance.now() - t0;
        this.noteSupport(asked, n, r);
        if (r.model) this.served.model = r.model;
        if (r.systemFingerprint) this.served.fingerprint = r.systemFingerprint;
        for (const c of r.choices.slice(0, n)) {
          if (c.cut) {
            // Never scored as an answer: the text stops wherever the connection did.
            const why = `the stream ended before the server finished this sample (no finish_reason, no [DONE]; ${c.text.length} characters received): the connection was cut`;
            out.push(errorCompletion(`${new URL(ENDPOINT_PATH[this.endpoint], this.base).href}: ${why}`, seed, ms));
            continue;
          }
          const done: Completion = {
            text: c.text,
            finishReason: c.finishReason,
            tokensIn: r.promptTokens,
            tokensOut: r.choices.length === 1 ? r.completionTokens : (c.logprobs?.length ?? null),
            latencyMs: ms,
            seed,
            meanLogprob: meanLogprob(c.logprobs),
          };
          if (r.model) done.servedModel = r.model;
          if (r.systemFingerprint) done.systemFingerprint = r.systemFingerprint;
          if (c.stopReason !== undefined) done.stopReason = c.stopReason;
          out.push(done);
        }
        return r.choices.length >= n;
      } catch (err) {
        if (isEngineError(err) && err.code === 'ABORTED') return false;
        const promptProblem =
          isEngineError(err) && (err.code === 'BAD_REPLY' || (err.code === 'HTTP' && PROMPT_STATUS.test(err.message)));
        if (!promptProblem) throw err;
        for (let i = 0; i < n; i++) out.push(errorCompletion((err as Error).message, seed, performance.now() - t0));
        return true;
      }
    };

    // All samples in one request, unless this server is known to ignore n; a shortfall is
    // remembered and made up below with one request per sample (sample i: seed + i).
    if (params.n === 1 || !this.serverIgnoresN) {
      const complete = await ask(params.n, 0, params.seed);
      if (!complete && !stopped() && out.length > 0) this.serverIgnoresN = true;
    }
    while (out.length < params.n) {
      const i = out.length;
      if (stopped()) {
        out.push(abortedCompletion(sampleSeed(params, i)));
        continue;
      }
      await ask(1, i, sampleSeed(params, i));
      if (out.length === i) out.push(abortedCompletion(sampleSeed(params, i)));
    }
    return out;
  }

  /** What this reply shows the server does with n and logprobs. */
  private noteSupport(asked: SamplingParams, n: number, r: ParsedReply): void {
    if (n > 1) {
      if (r.choices.length >= n) this.support.n = 'native';
      else if (r.choices.length > 0) this.support.n = 'one per request';
    }
    if (asked.logprobs && r.choices.length > 0) {
      const any = r.choices.some((c) => c.logprobs !== null && c.logprobs.length > 0);
      this.support.logprobs = any ? 'yes' : 'no';
      if (!any) this.serverOmitsLogprobs = true;
    }
  }

  async interrupt(): Promise<void> {
    this.epoch++;
    this.http.cancelAll();
  }

  async unload(): Promise<void> {
    await this.interrupt();
    this.loaded = false;
  }
}

export function createOpenAiEngine(options: OpenAiEngineOptions): OpenAiEngine {
  return new OpenAiEngine(options);
}
