/**
 * Token counting for prompt fitting. The engine's own tokenizer is used when it has one
 * (`Engine.countTokens`); otherwise `approxTokens`, one token per 4 characters, which is close
 * for English and SQL with BPE vocabularies of 30k-150k tokens and errs long for code with
 * many short identifiers. Chat templates add a few tokens per message; `MESSAGE_OVERHEAD`
 * covers them.
 */
export type TokenCounter = (text: string) => Promise<number> | number;

const CHARS_PER_TOKEN = 4;
export const MESSAGE_OVERHEAD = 8;

export function approxTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export interface PromptBudget {
  /** The model's context window in tokens; null: do not fit. */
  contextWindow: number | null;
  /** Tokens kept free for the answer (the run's maxTokens). */
  reserve: number;
}

/** Tokens the prompt may use, or null when there is no limit. */
export function promptLimit(b: PromptBudget): number | null {
  return b.contextWindow === null ? null : Math.max(0, b.contextWindow - b.reserve);
}
