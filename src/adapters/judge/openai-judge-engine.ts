/**
 * A minimal OpenAI-compatible chat client behind the Engine port, for judging from the CLI
 * (and the browser) until the product's OpenAI-compatible engine (src/adapters/engines/) lands;
 * the judge only needs `generate`. POST {baseUrl}/chat/completions, one request per sample,
 * replies validated at the boundary: a reply without `choices[0].message.content` is an error
 * completion, not an empty answer.
 */
import type { AbortSignalLike } from '../../core/eval/executor.ts';
import type { Completion, Engine, EngineCapabilities, ModelRef, Prompt, SamplingParams } from '../../core/engine/engine.ts';

export interface OpenAiJudgeEngineOptions {
  /** e.g. `http://127.0.0.1:8000/v1` (a trailing `/chat/completions` is accepted too). */
  baseUrl: string;
  apiKey?: string;
  /** Per request (default 120 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export function chatCompletionsUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/chat/completions') ? trimmed : `${trimmed}/chat/completions`;
}

export class OpenAiJudgeEngine implements Engine {
  readonly kind = 'openai';
  readonly capabilities: EngineCapabilities = { streaming: false, nativeN: false, logprobs: false, tokenize: false };
  private model: ModelRef | null = null;
  private readonly controllers = new Set<AbortController>();

  constructor(private readonly opts: OpenAiJudgeEngineOptions) {}

  async load(model: ModelRef): Promise<void> {
    this.model = model;
  }

  async generate(prompt: Prompt, params: SamplingParams, hooks: { signal?: AbortSignalLike } = {}): Promise<Completion[]> {
    if (!this.model) throw new Error('OpenAiJudgeEngine: call load() with the model name first');
    const out: Completion[] = [];
    for (let i = 0; i < params.n; i++) out.push(await this.one(prompt, params, params.seed === null ? null : params.seed + i, hooks.signal));
    return out;
  }

  private async one(prompt: Prompt, params: SamplingParams, seed: number | null, signal?: AbortSignalLike): Promise<Completion> {
    const controller = new AbortController();
    this.controllers.add(controller);
    signal?.addEventListener('abort', () => controller.abort(), { once: true });
    const timer = setTimeout(() => controller.abort(new Error(`no reply within ${this.opts.timeoutMs ?? 120_000} ms`)), this.opts.timeoutMs ?? 120_000);
    const t0 = performance.now();
    const base = { tokensIn: null, tokensOut: null, seed, meanLogprob: null };
    const fail = (error: string): Completion => ({ text: '', finishReason: 'error', latencyMs: performance.now() - t0, ...base, error });
    try {
      const body: Record<string, unknown> = {
        model: this.model!.id,
        messages: prompt.messages,
        temperature: params.temperature,
        top_p: params.topP,
        max_tokens: params.maxTokens,
        n: 1,
        ...(seed === null ? {} : { seed }),
        ...(params.stop.length ? { stop: params.stop } : {}),
      };
      const res = await (this.opts.fetch ?? fetch)(chatCompletionsUrl(this.opts.baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      const text = await res.text();
      if (!res.ok) return fail(`HTTP ${res.status} from ${chatCompletionsUrl(this.opts.baseUrl)}: ${text.slice(0, 300)}`);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return fail(`the server's reply is not JSON: ${text.slice(0, 200)}`);
      }
      const choice = (json as { choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }> }).choices?.[0];
      const content = choice?.message?.content;
      if (typeof content !== 'string') return fail(`the server's reply has no choices[0].message.content: ${text.slice(0, 200)}`);
      const usage = (json as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } }).usage;
      return {
        text: content,
        finishReason: choice?.finish_reason === 'length' ? 'length' : 'stop',
        latencyMs: performance.now() - t0,
        ...base,
        tokensIn: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : null,
        tokensOut: typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : null,
      };
    } catch (err) {
      if (signal?.aborted) return { text: '', finishReason: 'abort', latencyMs: performance.now() - t0, ...base };
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      return fail(`request to ${chatCompletionsUrl(this.opts.baseUrl)} failed: ${(err as Error).message}${cause ? ` (${cause})` : ''}`);
    } finally {
      clearTimeout(timer);
      this.controllers.delete(controller);
    }
  }

  contextWindow(): number | null {
    return null;
  }

  async interrupt(): Promise<void> {
    for (const c of this.controllers) c.abort();
  }

  async unload(): Promise<void> {
    await this.interrupt();
    this.model = null;
  }
}
