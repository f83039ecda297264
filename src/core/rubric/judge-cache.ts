/**
 * The JudgeCache port: judge answers by a hash of (prompt text, model id, sampling
 * parameters). It stores the engine's raw answer, not the verdict, so a parser fix applies to
 * cached answers too, and re-scoring or re-aggregating a run makes no judge call.
 * Implementations: in memory (here), a JSON file (CLI, src/adapters/judge), IndexedDB (browser).
 */
import type { ChatMessage, SamplingParams } from '../engine/engine.ts';
import { sha256Hex } from '../util/sha256.ts';

export interface CachedAnswer {
  text: string;
  finishReason: string;
}

export interface JudgeCache {
  get(key: string): Promise<CachedAnswer | undefined>;
  set(key: string, answer: CachedAnswer): Promise<void>;
}

export class MemoryJudgeCache implements JudgeCache {
  private readonly map = new Map<string, CachedAnswer>();

  async get(key: string): Promise<CachedAnswer | undefined> {
    return this.map.get(key);
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    this.map.set(key, answer);
  }

  get size(): number {
    return this.map.size;
  }
}

/** The cache key: sha256 of a canonical JSON of everything that shapes the answer. */
export function judgeCacheKey(messages: readonly ChatMessage[], modelId: string, params: SamplingParams): string {
  const canonical = JSON.stringify({
    v: 1,
    model: modelId,
    messages: messages.map((m) => [m.role, m.content]),
    params: [params.temperature, params.topP, params.maxTokens, params.seed, params.stop],
  });
  return sha256Hex(canonical);
}
