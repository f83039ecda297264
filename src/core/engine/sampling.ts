/**
 * Checks shared by every engine: sampling parameters are validated once, at the engine
 * boundary, with messages that name the parameter; seeds and log-probabilities are derived the
 * same way everywhere.
 */
import type { AbortSignalLike } from '../eval/executor.ts';
import { onAbort } from './abort.ts';
import type { Completion, SamplingParams } from './engine.ts';
import { EngineError } from './engine-error.ts';

export function validateSampling(p: SamplingParams): void {
  const bad = (what: string) => {
    throw new EngineError('CONFIG', `invalid sampling parameter: ${what}`);
  };
  if (!Number.isInteger(p.n) || p.n < 1) bad(`n must be an integer >= 1, got ${p.n}`);
  if (!(p.temperature >= 0) || !Number.isFinite(p.temperature)) bad(`temperature must be >= 0, got ${p.temperature}`);
  if (!(p.topP > 0 && p.topP <= 1)) bad(`topP must be in (0, 1], got ${p.topP}`);
  if (!Number.isInteger(p.maxTokens) || p.maxTokens < 1) bad(`maxTokens must be an integer >= 1, got ${p.maxTokens}`);
  if (p.seed !== null && (!Number.isSafeInteger(p.seed) || p.seed < 0))
    bad(`seed must be a non-negative integer or null, got ${p.seed}`);
  if (!Array.isArray(p.stop) || p.stop.some((s) => typeof s !== 'string' || s === ''))
    bad('stop must be a list of non-empty strings');
}

/** Seed of sample i when an engine samples one at a time (the port's convention). */
export function sampleSeed(p: SamplingParams, i: number): number | null {
  return p.seed === null ? null : p.seed + i;
}

/** Mean of token log-probabilities, or null when none were reported. */
export function meanLogprob(values: readonly number[] | null | undefined): number | null {
  if (!values || values.length === 0) return null;
  let sum = 0;
  let count = 0;
  for (const v of values) {
    if (typeof v === 'number' && Number.isFinite(v)) {
      sum += v;
      count++;
    }
  }
  return count === 0 ? null : sum / count;
}

/** A sample that failed: errors are data on the sample, never a crashed run. */
export function errorCompletion(message: string, seed: number | null, latencyMs = 0): Completion {
  return {
    text: '',
    finishReason: 'error',
    tokensIn: null,
    tokensOut: null,
    latencyMs,
    seed,
    meanLogprob: null,
    error: message,
  };
}

/** Cuts `text` at the first stop string (the stop string itself is dropped), as servers do. */
export function applyStop(text: string, stop: readonly string[]): { text: string; stopped: boolean } {
  let cut = -1;
  for (const s of stop) {
    const i = text.indexOf(s);
    if (i >= 0 && (cut < 0 || i < cut)) cut = i;
  }
  return cut < 0 ? { text, stopped: false } : { text: text.slice(0, cut), stopped: true };
}

/** A sample that was not (fully) generated because the caller cancelled. */
export function abortedCompletion(seed: number | null, text = '', latencyMs = 0): Completion {
  return { text, finishReason: 'abort', tokensIn: null, tokensOut: null, latencyMs, seed, meanLogprob: null };
}

/**
 * A prompt's samples generated one at a time (engines without a native n), sample i with
 * `sampleSeed(params, i)`. While it runs, the signal's abort calls `engine.interrupt()`; once
 * `engine.stopped()` or the signal is aborted, every remaining sample is an aborted completion.
 * `one` makes sample i, its own failures as error completions; what it throws ends the call.
 */
export async function generateOneByOne(
  params: SamplingParams,
  signal: AbortSignalLike | undefined,
  engine: { interrupt(): Promise<void>; stopped(): boolean },
  one: (i: number, seed: number | null) => Promise<Completion>,
): Promise<Completion[]> {
  const stopListening = onAbort(signal, () => void engine.interrupt());
  const out: Completion[] = [];
  try {
    for (let i = 0; i < params.n; i++) {
      const seed = sampleSeed(params, i);
      out.push(engine.stopped() || signal?.aborted ? abortedCompletion(seed) : await one(i, seed));
    }
  } finally {
    // Also when `one` throws (the engine found unloaded mid-way): a later abort must not reach it.
    stopListening();
  }
  return out;
}
