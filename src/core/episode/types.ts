/**
 * The multi-turn episode's ports and records. Plain data: an episode goes to the run file as JSON.
 * The runner (run-episode.ts) knows no engine and no database: `chat` is any policy (WebLLM,
 * wllama, an OpenAI-compatible server), `probe` is the run's SQL worker pool in read-only mode.
 */
import type { SqlValue } from '../types.ts';
import type { StorageClass } from '../prompt/schema-source.ts';

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

/** One probe's outcome; exactly one of rows / error / timedOut describes it. */
export interface ProbeResult {
  columns: string[];
  /** Every row, in the query's order. */
  rows: SqlValue[][];
  /** The storage class of every cell, same shape as `rows` (sql.js returns REAL 1.0 as the number 1). */
  classes: StorageClass[][];
  /** The database's (or the pool's) error text, e.g. `no such table: x`; a refused write too. */
  error?: string;
  /** The probe ran past its timeout and was stopped. */
  timedOut?: boolean;
  /**
   * A replayed dump's probe (Episode.replay): the dump keeps the observation text, not the rows,
   * so `columns`, `rows` and `classes` are empty; `error` / `timedOut` say what the observation said.
   */
  notKept?: true;
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

/** `engine-error`: the policy's engine failed on a turn (Episode.error says how); the turns before it are kept. */
export type EndReason = 'solution' | 'turn-limit' | 'format-failure' | 'engine-error';

export interface EpisodeTurn {
  /** The policy's text (with its stop string). */
  text: string;
  tokens: number | null;
  /** The probe's SQL (SkyRL: the first `<sql>` block), null when the turn had none. */
  probeSql: string | null;
  /** The probe's outcome, when one ran. */
  probe: ProbeResult | null;
  /** The text sent back to the policy, exactly; null on the last turn. */
  observation: string | null;
  /** Milliseconds the turn took: the policy's reply and the probe. */
  ms: number;
  /**
   * Every tool call of the turn (the verl environment: a turn may call several), in order: its SQL
   * (null when the arguments had none), the probe (null when the call was refused before running)
   * and the tool's response text. `probeSql`/`probe` are the first call's.
   */
  toolCalls?: ToolCallRecord[];
}

export interface ToolCallRecord {
  sql: string | null;
  probe: ProbeResult | null;
  response: string;
}

export interface Episode {
  envId: string;
  turns: EpisodeTurn[];
  turnsUsed: number;
  /** Probes that ended in an error or a timeout (refused writes included). */
  probesFailed: number;
  /** The SQL to score with the run's EX rule; null when the episode gave none. */
  finalSql: string | null;
  endReason: EndReason;
  /** The preset's format check on the whole trajectory (SkyRL's verify_format_and_extract). */
  formatValid: boolean;
  /** The preset's own reward (SkyRL: -1 bad format, else 1 / 0); null without a judge. */
  presetReward: number | null;
  /** The engine's message when the episode ended on an engine error. */
  error?: string;
  /**
   * A trainer's dump replayed (src/core/formats/replay-episode.ts), not an episode played here:
   * the dump's format and its stop reason (SkyRL's `stop_reason`, a verifiers trace's
   * `stop_condition`; null when it has none). Its turns keep no tokens, time or probe rows, and
   * `presetReward` is the trainer's own score of the sample.
   */
  replay?: { format: string; stopReason: string | null };
}
