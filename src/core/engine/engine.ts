/**
 * The Engine port: every way of producing completions (WebLLM on the GPU, wllama on the CPU,
 * an OpenAI-compatible server, replay of a predictions file) behind one interface.
 */
import type { AbortSignalLike } from '../eval/executor.ts';

export interface ChatMessage {
  /** `tool`: a tool's answer; only engines whose `capabilities.toolRole` is true are sent one. */
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant message's tool calls (OpenAI `tool_calls`: id, function name, arguments as JSON text). */
  toolCalls?: { id: string; name: string; arguments: string }[];
  /** A tool message's call id (OpenAI `tool_call_id`). */
  toolCallId?: string;
}

/** A prompt is chat messages; engines without a chat template render them with their own template. */
export interface Prompt {
  messages: ChatMessage[];
  /** The question this prompt asks (set by buildPrompt): engines name it in their error messages. */
  questionId?: number;
  /** Tools the policy may call (OpenAI `tools` schemas; a tool-calling preset's); engines without tools ignore them. */
  tools?: readonly unknown[];
}

export interface SamplingParams {
  /** Number of samples for this prompt. */
  n: number;
  temperature: number;
  topP: number;
  maxTokens: number;
  /** Integer seed; sample i uses seed + i where the engine samples one at a time. */
  seed: number | null;
  stop: string[];
  /** Stop token ids (vLLM's `stop_token_ids`; a preset's, e.g. Qwen's <|im_end|>); engines without them ignore them. */
  stopTokenIds?: number[];
  /** Ask for token log-probabilities when the engine can give them. */
  logprobs: boolean;
}

export const GREEDY: SamplingParams = {
  n: 1,
  temperature: 0,
  topP: 1,
  maxTokens: 512,
  seed: 0,
  stop: [],
  logprobs: false,
};

export interface Completion {
  text: string;
  finishReason: 'stop' | 'length' | 'abort' | 'error';
  tokensIn: number | null;
  tokensOut: number | null;
  latencyMs: number;
  seed: number | null;
  /** Mean log-probability of the generated tokens, when reported. */
  meanLogprob: number | null;
  /** Set when finishReason is 'error'. */
  error?: string;
  /** The model id the server says answered (OpenAI `model`), when it says. */
  servedModel?: string;
  /** The server's `system_fingerprint` (its build and configuration), when it sends one. */
  systemFingerprint?: string;
  /** The stop string generation stopped at, when the engine cut it from `text` and says which (vLLM's `stop_reason`). */
  stopReason?: string;
}

/** Cancellation and streaming of one generate() call: `onToken` receives each sample's text as it grows. */
export interface GenerateHooks {
  signal?: AbortSignalLike;
  onToken?: (sampleIndex: number, text: string) => void;
}

export interface EngineDevice {
  /** `webgpu`, `cpu`, or a server's name for itself. */
  device: string;
  /** Why the CPU ran it when the GPU was asked for; null otherwise. */
  reason: string | null;
  /**
   * Which one: the WebGPU adapter's description (WebLLM), the model id and
   * `system_fingerprint` a server answered with (OpenAI-compatible); absent when unknown.
   */
  detail?: string;
}

export interface EngineCapabilities {
  streaming: boolean;
  /** The engine returns n > 1 samples from one call. */
  nativeN: boolean;
  logprobs: boolean;
  /** Can count tokens of a text with the model's tokenizer. */
  tokenize: boolean;
  /**
   * Continues a final assistant message instead of answering in a new turn (vLLM's
   * `continue_final_message`): prefills and SkyRL's one-message episodes. Absent or false: a
   * multi-turn episode is played as a conversation (docs/multi-turn.md).
   */
  continueFinal?: boolean;
  /**
   * Takes `tool` messages, assistant `toolCalls` and `tools`, and reports the model's tool calls
   * (an OpenAI-compatible server: its chat template renders them). Absent or false: a tool-calling
   * episode is sent as the text the model's template would render (docs/multi-turn.md).
   */
  toolRole?: boolean;
}

export interface LoadProgress {
  /** 0..1, or null when unknown. */
  fraction: number | null;
  text: string;
}

export interface ModelRef {
  /** Engine-specific id: a WebLLM model id, a GGUF file name or URL, a server model name. */
  id: string;
  /** Where the weights come from (URL, file, server), for the run record. */
  source?: string;
}

export interface Engine {
  /** `webllm`, `wllama`, `openai`, `replay`. */
  readonly kind: string;
  readonly capabilities: EngineCapabilities;
  /** Requests the engine serves at once (a server's slots); the run keeps as many questions in flight. Default 1. */
  readonly concurrency?: number;
  load(model: ModelRef, hooks?: { signal?: AbortSignalLike; onProgress?: (p: LoadProgress) => void }): Promise<void>;
  generate(prompt: Prompt, params: SamplingParams, hooks?: GenerateHooks): Promise<Completion[]>;
  /** Token count of a text with the loaded model's tokenizer (when capabilities.tokenize). */
  countTokens?(text: string): Promise<number>;
  /** Context window of the loaded model, in tokens. */
  contextWindow(): number | null;
  /** The loaded model's training context, in tokens, where the engine knows it and may run beyond it (the CPU engine). */
  trainingContext?(): number | null;
  /**
   * The device that runs the loaded model, as the engine found out (not as configured), and
   * why the CPU when a GPU was asked for; engines that cannot tell leave it out.
   */
  device?(): EngineDevice | null;
  interrupt(): Promise<void>;
  unload(): Promise<void>;
}
