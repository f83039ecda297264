/**
 * The HTTP side of the OpenAI-compatible engine: one exchange with a time limit per attempt,
 * bounded retries with exponential backoff and jitter after 429, 408, 5xx and network failures
 * (or exactly what Retry-After asks), a limit on requests in flight, and cancellation of
 * everything in flight. The API key lives in a private field and only ever goes into the
 * Authorization header.
 */
import type { AbortSignalLike } from '../../core/eval/executor.ts';
import { onAbort } from '../../core/engine/abort.ts';
import { EngineError, isEngineError } from '../../core/engine/engine-error.ts';
import { retryAfterMs, serverMessage } from './openai-protocol.ts';

interface HttpOptions {
  /** Server root without a trailing slash. */
  base: string;
  apiKey: string | null;
  concurrency: number;
  maxRetries?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  /** Largest reply body read, in bytes (default DEFAULT_MAX_REPLY_BYTES); a larger one fails as BAD_REPLY. */
  maxReplyBytes?: number;
  /** Accept Server-Sent Events on POST. */
  stream: boolean;
  /** The model name, for the 404 sentence. */
  model: () => string;
  fetch?: typeof fetch;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
}

const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);

/** A judge's or policy's answer is a few KB; 16 MiB leaves room for n choices with logprobs, not for a 200 MB body. */
export const DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024;

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/**
 * The response with its body counted while it is read: past `max` bytes the reading fails
 * with BAD_REPLY and the connection is dropped, so a huge body is never held whole. A
 * Content-Length above `max` fails before a byte is read.
 */
function capReply(res: Response, max: number, where: string): Response {
  const tooLarge = (what: string) =>
    new EngineError('BAD_REPLY', `the reply is ${what}, more than the ${mib(max)} a reply may have`, where);
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    void res.body?.cancel().catch(() => {});
    throw tooLarge(`${declared} bytes (Content-Length)`);
  }
  if (!res.body) return res;
  let seen = 0;
  const counted = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > max) controller.error(tooLarge(`over ${mib(max)} and still coming`));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
}
/** Statuses about this prompt rather than the server (400/413/422: too long, invalid). */
export const PROMPT_STATUS = /\bHTTP (400|413|422)\b/;

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new EngineError('ABORTED', 'the request was cancelled'));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(t);
      reject(new EngineError('ABORTED', 'the request was cancelled'));
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/** A counting semaphore: `run` waits for a free slot. */
class Slots {
  private free: number;
  private readonly queue: Array<() => void> = [];
  constructor(size: number) {
    this.free = size;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.free++;
    }
  }
}

export class OpenAiHttp {
  readonly #apiKey: string | null;
  readonly slots: Slots;
  private readonly inFlight = new Set<AbortController>();

  private readonly options: Omit<HttpOptions, 'apiKey'>;

  constructor(settings: HttpOptions) {
    const { apiKey, ...options } = settings;
    this.#apiKey = apiKey;
    this.options = options;
    this.slots = new Slots(options.concurrency);
  }

  get hasApiKey(): boolean {
    return this.#apiKey !== null;
  }

  /** Cancels every exchange in flight (each rejects with ABORTED). */
  cancelAll(): void {
    for (const c of this.inFlight) c.abort();
  }

  private headers(json: boolean): Record<string, string> {
    const h: Record<string, string> = { accept: json ? 'application/json' : 'text/event-stream, application/json' };
    if (json) h['content-type'] = 'application/json';
    if (this.#apiKey) h.authorization = `Bearer ${this.#apiKey}`;
    return h;
  }

  /**
   * One HTTP exchange with retries; `read` turns a 2xx response into the result. Each attempt
   * has its own time limit; the caller's signal and `interrupt()` cancel every attempt.
   * Throws EngineError: HTTP or NETWORK (after the retries, or at once for statuses that a
   * retry cannot fix), ABORTED.
   */
  async exchange<T>(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    signal: AbortSignalLike | undefined,
    read: (res: Response, where: string) => Promise<T>,
  ): Promise<T> {
    const url = `${this.options.base}${path}`;
    const where = `${method} ${url}`;
    const fetchFn = this.options.fetch ?? globalThis.fetch.bind(globalThis);
    const sleep = this.options.sleep ?? defaultSleep;
    const random = this.options.random ?? Math.random;
    const maxRetries = this.options.maxRetries ?? 4;
    const cancel = new AbortController();
    this.inFlight.add(cancel);
    const stopListening = onAbort(signal, () => cancel.abort());
    const cancelled = () => new EngineError('ABORTED', 'the request was cancelled', where);
    try {
      for (let attempt = 0; ; attempt++) {
        if (cancel.signal.aborted) throw cancelled();
        const one = new AbortController();
        const stopOne = onAbort(cancel.signal, () => one.abort());
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          one.abort();
        }, this.options.timeoutMs ?? 600_000);
        let failure: string;
        try {
          const res = await fetchFn(url, {
            method,
            headers: this.headers(method === 'GET' || !this.options.stream),
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: one.signal,
          });
          const capped = capReply(res, this.options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES, where);
          if (res.ok) return await read(capped, where);
          const message = serverMessage(await capped.text().catch(() => ''));
          if (!RETRY_STATUS.has(res.status) || attempt >= maxRetries) {
            throw new EngineError('HTTP', this.statusSentence(res.status, message, attempt), where);
          }
          const asked = retryAfterMs(res.headers.get('retry-after'), Date.now());
          const limit = this.options.maxRetryAfterMs ?? 120_000;
          if (asked !== null && asked > limit) {
            throw new EngineError(
              'HTTP',
              `HTTP ${res.status}: the server asks to retry after ${Math.round(asked / 1000)} s, longer than the ${Math.round(limit / 1000)} s limit`,
              where,
            );
          }
          clearTimeout(timer);
          await sleep(asked ?? this.backoff(attempt, random), cancel.signal).catch(() => {
            throw cancelled();
          });
          continue;
        } catch (err) {
          if (isEngineError(err)) throw err;
          if (cancel.signal.aborted) throw cancelled();
          failure = timedOut
            ? `no answer within ${Math.round((this.options.timeoutMs ?? 600_000) / 1000)} s`
            : (err as Error).message;
        } finally {
          clearTimeout(timer);
          stopOne();
        }
        // A network failure or a timeout (the reply's body included).
        if (attempt >= maxRetries) {
          throw new EngineError(
            'NETWORK',
            `the server could not be reached after ${attempt + 1} attempts: ${failure}`,
            where,
          );
        }
        await sleep(this.backoff(attempt, random), cancel.signal).catch(() => {
          throw cancelled();
        });
      }
    } finally {
      stopListening();
      this.inFlight.delete(cancel);
    }
  }

  /** Exponential backoff with "equal jitter": half fixed, half random, capped. */
  private backoff(attempt: number, random: () => number): number {
    const cap = Math.min(this.options.retryMaxMs ?? 30_000, (this.options.retryBaseMs ?? 500) * 2 ** attempt);
    return cap / 2 + random() * (cap / 2);
  }

  private statusSentence(status: number, message: string, attempt: number): string {
    const said = message ? `: ${message}` : '';
    if (status === 401 || status === 403)
      return `HTTP ${status}: the server refused the request; check the API key${said}`;
    if (status === 404)
      return `HTTP 404: no such endpoint or model on this server (is the base URL right, and is "${this.options.model()}" served?)${said}`;
    const tries = attempt > 0 ? ` after ${attempt + 1} attempts` : '';
    return `HTTP ${status}${tries}${said}`;
  }
}
