/**
 * The multi-turn episode's ports and records. Plain data: an episode goes to the run file as JSON.
 * The runner (run-episode.ts) knows no engine and no database: `chat` is any policy (WebLLM,
 * wllama, an OpenAI-compatible server), `probe` is the run's SQL worker pool in read-only mode.
 */
import type { ProbeResult } from '../types.ts';

// An episode's records (Episode, EpisodeTurn, ProbeResult, ...) are core data shapes: an item
// and a sample carry them. They live in ../types.ts and are re-exported here beside the ports.
export type { EndReason, Episode, EpisodeTurn, ProbeResult, ToolCallRecord } from '../types.ts';

export interface ChatMessage {
  /** `tool`: a tool's answer, sent only to engines with a tool role (the verl tutorial's environment). */
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant message's tool calls (OpenAI `tool_calls`), for engines with a tool role. */
  toolCalls?: ToolCallMessage[];
  /** A tool message's call id (OpenAI `tool_call_id`). */
  toolCallId?: string;
}

/** One tool call of an assistant message, as OpenAI-compatible servers take it back. */
export interface ToolCallMessage {
  id: string;
  name: string;
  /** The arguments as JSON text. */
  arguments: string;
}

export interface ChatOptions {
  /** Stop strings of the preset (SkyRL: `</sql>`, `</solution>`). */
  stop: readonly string[];
  /**
   * True when the last message is an assistant message the policy must continue (SkyRL's
   * default: every turn and observation appended to one assistant message, no new chat turn);
   * an engine continues it without closing it (vLLM: `continue_final_message`).
   */
  continueFinal: boolean;
  /** The tools' schemas (OpenAI `tools`) the policy may call; absent for environments without tools. */
  tools?: readonly unknown[];
}

export interface ChatReply {
  /** The policy's text for this turn. */
  text: string;
  /** Tokens generated, when the engine says. */
  tokens?: number;
  /**
   * The stop string the engine stopped at, when it cut it from `text` (OpenAI-compatible
   * servers do); the runner puts it back, as SkyRL's vLLM (`include_stop_str_in_output`) keeps it.
   */
  stoppedBy?: string | null;
  /** `length`: the reply was cut by the token limit (verl then ends the episode without reading a tool call). */
  finishReason?: 'stop' | 'length';
}

export interface EpisodePorts {
  chat(messages: readonly ChatMessage[], options: ChatOptions): Promise<ChatReply>;
  /** Runs one probe read-only; never writes, attaches or changes the connection's state. */
  probe(sql: string, options: { timeoutMs: number }): Promise<ProbeResult>;
  /** Milliseconds, for each turn's time (injected so that tests are deterministic). */
  now(): number;
  /** The preset's own outcome check of a well-formed final SQL (SkyRL: the gold's and the prediction's row sets equal); none: no preset reward. */
  judge?(finalSql: string): Promise<boolean>;
}
