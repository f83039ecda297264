/**
 * Whether a preset's episodes fit the loaded model's context, checked before a run starts: a
 * multi-turn episode sends the whole chat again at every turn, so its last turn asks for the
 * first prompt plus every reply (and every observation). A run that cannot fit would end every
 * episode on the engine's error at the turn where the chat overflows; the check says so up front,
 * with the prompt's token count, the context and what to set.
 */
import type { PolicyPreset } from '../prompt/presets.ts';

interface PresetContextInput {
  preset: PolicyPreset;
  /** The engine kind (`wllama` has a context setting on the Generate screen). */
  engine: string;
  /** The question whose prompt was counted, for the message. */
  questionId: string | number;
  /** Tokens of that question's first prompt, as the loaded model's tokenizer counts them. */
  promptTokens: number;
  /** The run's max tokens per reply (per turn). */
  maxTokens: number;
  /** Tokens one request may use on the loaded engine. */
  contextWindow: number;
}

/** Replies a sample's longest request carries: the turn limit (plus the final summary's turn), or 1 for a single-turn preset. */
export function presetTurns(preset: PolicyPreset): number {
  const mt = preset.multiTurn;
  return mt ? mt.maxTurns + (mt.finalSummary ? 1 : 0) : 1;
}

/** The context setting to suggest: the need rounded up to a multiple of 1024. */
export function suggestedContext(tokens: number): number {
  return Math.ceil(tokens / 1024) * 1024;
}

/**
 * Null when the first prompt plus the preset's turns of `maxTokens` fit the context, else the
 * sentence that names the prompt's tokens, the need, the context and what to set. Observations
 * come on top of this need (their length is only known as the episode plays).
 */
export function presetContextProblem(a: PresetContextInput): string | null {
  const turns = presetTurns(a.preset);
  const need = a.promptTokens + turns * a.maxTokens;
  if (need <= a.contextWindow) return null;
  const turnText =
    turns === 1
      ? `its reply of up to ${a.maxTokens} tokens`
      : `its ${turns} turns of up to ${a.maxTokens} tokens each (observations come on top)`;
  const what =
    a.engine === 'wllama'
      ? `set "Context (tokens)" on the Generate screen to at least ${suggestedContext(need)} and load the model again ` +
        "(beyond the model's training context llama.cpp still runs it, and quality may drop), or lower max tokens"
      : 'use a model or server with a longer context, or lower max tokens';
  return (
    `preset ${a.preset.id} does not fit the loaded model's context: the first prompt (question ${a.questionId}) is ` +
    `${a.promptTokens} tokens and ${turnText} bring a request to ${need} tokens, more than the context of ` +
    `${a.contextWindow} tokens: ${what}`
  );
}
