/**
 * The verl multi-turn Text2SQL tutorial's environment, rule for rule (docs/multi-turn.md cites
 * each): nvidia-china-sae/mair-hub at 374bc4909857e37426d695efb0ca4b3e07f84cd4,
 * rl-tutorial/text2sql: sglang_rollout.py (the turn loop, the final summary), sql_tool.py and
 * sql_execution_utils.py (the `execute_sql` tool's response), text2sql_reward_func.py (the reward);
 * the tool calls are read as sglang's Qwen 2.5 detector reads Qwen's hermes format
 * (`<tool_call>{"name": …, "arguments": {…}}</tool_call>`), verl's schemas drop a call whose
 * arguments are not an object.
 */
import { dataFrameToString } from './pandas-frame.ts';
import { distinctRows } from './skyrl-sql.ts';
import { codePoints } from '../prompt/py-format.ts';
import { verlAnswer } from '../prompt/preset-extract.ts';
import type {
  ChatMessage,
  EndReason,
  Episode,
  EpisodePorts,
  EpisodeTurn,
  ProbeResult,
  ToolCallMessage,
  ToolCallRecord,
} from './types.ts';
import { WorkbenchError } from '../errors.ts';

export interface VerlSqlEnv {
  kind: 'verl-sql';
  /** `multi_turn.max_assistant_turns` (the tutorial's scripts: 6; the turn10 script: 10). */
  maxTurns: number;
  /** sql_tool_config.yaml `timeout: 30` seconds. */
  probeTimeoutMs: number;
  /** `max_result_chars: 9000`. */
  maxResultChars: number;
  /** `max_result_rows: 50`. */
  maxResultRows: number;
  /** The tool's name in its schema (`execute_sql`); a call to any other name is dropped. */
  toolName: string;
  /** The tools' schemas (OpenAI form), offered to the policy. */
  tools: readonly unknown[];
  /** `multi_turn.final_summary`: at the turn limit, without `<answer>` in the last assistant message, one more turn. */
  finalSummary: boolean;
  /** `multi_turn.summary_prompt`, sent as a user message. */
  summaryPrompt: string;
  /**
   * True: tool answers go back as `tool` messages (OpenAI-compatible servers render them with the
   * model's chat template); false: as the user turn Qwen 2.5's template renders them into
   * (`<tool_response>\n…\n</tool_response>`), for engines without a tool role.
   */
  toolRole: boolean;
}

export const VERL_SUMMARY_PROMPT =
  'You have reached the maximum number of interaction turns. Please provide your final answer directly using the <answer></answer> tags.';

export const VERL_SQL_DEFAULTS: VerlSqlEnv = {
  kind: 'verl-sql',
  maxTurns: 6,
  probeTimeoutMs: 30_000,
  maxResultChars: 9000,
  maxResultRows: 50,
  toolName: 'execute_sql',
  tools: [],
  finalSummary: false,
  summaryPrompt: VERL_SUMMARY_PROMPT,
  toolRole: false,
};

/** One call as verl runs it: the tool's name and its arguments (a JSON object). */
interface VerlToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

interface ParsedToolTurn {
  /** `<tool_call>` appears in the text (sglang's `has_tool_call`). */
  hasToolCall: boolean;
  /** The text before the first `<tool_call>`, stripped (sglang's `normal_text`): the assistant message's content. */
  normalText: string;
  /** The calls verl runs; none: the episode ends on this turn. */
  calls: VerlToolCall[];
}

// Python's str.strip() with no argument (str.isspace()).
const PY_SPACE = '[\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const pyStrip = (s: string) => s.replace(new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, 'gu'), '');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Python's truthiness of a JSON value. */
const truthy = (v: unknown) =>
  !(
    v === null ||
    v === undefined ||
    v === false ||
    v === 0 ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (isObject(v) && Object.keys(v).length === 0)
  );

class NotADict extends WorkbenchError {
  constructor() {
    super('BAD_FORMAT', 'a tool call that is not a JSON object');
  }
}

/**
 * sglang's `BaseFormatDetector.parse_base_json`: an object is one call, a list several; a call
 * whose name is missing or not a tool's is dropped; the arguments are `parameters` when truthy,
 * else `arguments` (default `{}`). A list element that is not an object raises (Python's
 * AttributeError on `.get`).
 */
function parseBaseJson(action: unknown, toolName: string): unknown[] {
  const one = (act: unknown): unknown[] => {
    if (!isObject(act)) throw new NotADict();
    const name = act.name;
    if (!truthy(name) || name !== toolName) return [];
    return [{ name, args: truthy(act.parameters) ? act.parameters : 'arguments' in act ? act.arguments : {} }];
  };
  return Array.isArray(action) ? action.flatMap(one) : one(action);
}

/**
 * Reads one assistant reply as the tutorial's rollout does (sglang_rollout.py over sglang's
 * Qwen25Detector): each `<tool_call>(.*?)</tool_call>` block is JSON-decoded; one block that is
 * not JSON, or a call that is not an object, drops every call of the turn; a call whose arguments
 * are not a JSON object is dropped (verl's `from_openai_function_parsed_schema`).
 */
export function parseToolCalls(text: string, toolName: string): ParsedToolTurn {
  const at = text.indexOf('<tool_call>');
  if (at < 0) return { hasToolCall: false, normalText: text, calls: [] };
  const normalText = pyStrip(text.slice(0, at));
  const found: unknown[] = [];
  try {
    for (const m of text.matchAll(/<tool_call>([\s\S]*?)<\/tool_call>/g)) {
      found.push(...parseBaseJson(JSON.parse(m[1]!), toolName));
    }
  } catch {
    return { hasToolCall: true, normalText: text, calls: [] };
  }
  const calls = (found as { name: string; args: unknown }[])
    .filter((c): c is { name: string; args: Record<string, unknown> } => isObject(c.args))
    .map((c) => ({ name: c.name, arguments: c.args }));
  return { hasToolCall: true, normalText, calls };
}

/** Python's `json.dumps` of a string (ensure_ascii: every character outside space..tilde escaped as \uXXXX). */
function pyJsonString(s: string, ensureAscii: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || (ensureAscii && c > 0x7e)) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** Python's `json.dumps(value, ensure_ascii=False)` (default separators `, ` and `: `), as Jinja's `tojson` in Qwen's template writes the arguments. */
function pyJsonDumps(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return pyJsonString(v, false);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number')
    return Number.isFinite(v) ? String(v) : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
  if (Array.isArray(v)) return `[${v.map(pyJsonDumps).join(', ')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .map((k) => `${pyJsonString(k, false)}: ${pyJsonDumps(o[k])}`)
    .join(', ')}}`;
}

/** sql_tool.py's `json.dumps({"result": text}, indent=2)` (a run's response), or without indent (a refused call). */
const response = (text: string, indent: boolean) =>
  indent ? `{\n  "result": ${pyJsonString(text, true)}\n}` : `{"result": ${pyJsonString(text, true)}}`;

/**
 * sql_tool.py `validate_parameters` (with sql_execution_utils.py `validate_sql_syntax`): the
 * refusal text, or null when the call runs. Note the keyword check: a query without SELECT,
 * INSERT, UPDATE, DELETE, CREATE or DROP anywhere (e.g. PRAGMA) is refused.
 */
export function refusal(args: Record<string, unknown>): string | null {
  const sql = args.sql_query;
  if (typeof sql !== 'string' || sql === '') return 'sql_query must be a non-empty string';
  if (pyStrip(sql) === '') return 'Invalid SQL syntax: Empty SQL query';
  const upper = pyStrip(sql.toUpperCase());
  if (!['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'CREATE', 'DROP'].some((k) => upper.includes(k)))
    return 'Invalid SQL syntax: No valid SQL command found';
  if (sql.split('(').length !== sql.split(')').length) return 'Invalid SQL syntax: Unbalanced parentheses in SQL query';
  return null;
}

/** sql_tool.py `postprocess_sql_result` of a frozenset of rows (distinct rows; see docs/multi-turn.md on their order). */
function resultText(env: Pick<VerlSqlEnv, 'maxResultChars' | 'maxResultRows'>, result: ProbeResult): string {
  const rows = distinctRows(result);
  if (rows.length === 0) return 'Empty result set';
  let text = dataFrameToString(rows);
  if (codePoints(text) > env.maxResultChars) {
    text = `Truncated to ${env.maxResultRows} rows since returned response too long: ${dataFrameToString(rows.slice(0, env.maxResultRows))}`;
    if (codePoints(text) > env.maxResultChars)
      text = Array.from(text).slice(0, env.maxResultChars).join('') + '... (further truncated)';
  }
  return text;
}

/** sql_tool.py `execute`'s response text for a probe that ran. */
export function probeResponse(env: Pick<VerlSqlEnv, 'maxResultChars' | 'maxResultRows'>, result: ProbeResult): string {
  if (result.timedOut) return response('SQL execution timeout', true);
  if (result.error !== undefined) return response(`Error executing SQL: ${result.error}`, true);
  return response(resultText(env, result), true);
}

/** The response of a call refused before it ran (`json.dumps({"result": error_msg})`). */
export const refusalResponse = (text: string) => response(text, false);

/** One call as Qwen 2.5's chat template writes it back into the assistant message. */
const renderToolCall = (c: VerlToolCall) =>
  `<tool_call>\n{"name": ${pyJsonString(c.name, false)}, "arguments": ${pyJsonDumps(c.arguments)}}\n</tool_call>`;

/** The assistant message verl keeps for a tool-call turn (its content, then each call), as the template renders it. */
const renderAssistant = (content: string, calls: readonly VerlToolCall[]) =>
  [...(content ? [content] : []), ...calls.map(renderToolCall)].join('\n');

/** Tool messages as Qwen 2.5's template renders them: one user turn of `<tool_response>` blocks. */
const renderToolTurn = (responses: readonly string[]) =>
  responses.map((r) => `<tool_response>\n${r}\n</tool_response>`).join('\n');

function finished(
  env: VerlSqlEnv,
  turns: EpisodeTurn[],
  solution: string,
  reachedLimit: boolean,
  judged: boolean | null,
  extra: Partial<Episode> = {},
): Episode {
  const answer = verlAnswer(solution);
  const last = turns.at(-1)?.text ?? '';
  const lastAnswer = /<answer>([\s\S]*?)<\/answer>/.exec(last);
  const endReason: EndReason =
    answer !== null ? 'solution' : lastAnswer ? 'format-failure' : reachedLimit ? 'turn-limit' : 'format-failure';
  const failed = (p: ProbeResult | null) => p !== null && (p.error !== undefined || p.timedOut === true);
  return {
    envId: env.kind,
    turns,
    turnsUsed: turns.length,
    probesFailed: turns.reduce(
      (s, t) => s + (t.toolCalls ? t.toolCalls.filter((c) => failed(c.probe)).length : failed(t.probe) ? 1 : 0),
      0,
    ),
    finalSql: answer ?? (lastAnswer ? pyStrip(lastAnswer[1]!) : null),
    endReason,
    formatValid: answer !== null,
    presetReward: answer === null ? -1 : judged === null ? null : judged ? 1 : 0,
    ...extra,
  };
}

/**
 * Plays one episode of the tutorial's rollout (sglang_rollout.py `_async_rollout_a_request`):
 * up to `maxTurns` assistant turns; a turn with valid tool calls runs them (in order) and sends
 * their responses back, except on the last allowed turn (verl's loop ends before running them);
 * a turn without a tool call, with only invalid ones, or cut by the token limit ends the episode.
 * At the limit, with `finalSummary`, one more turn after the summary prompt when the last
 * assistant message has no `<answer>`. The reward reads the whole response as verl decodes it.
 */
export async function runVerlEpisode(
  env: VerlSqlEnv,
  ports: EpisodePorts,
  initialMessages: readonly ChatMessage[],
): Promise<Episode> {
  const turns: EpisodeTurn[] = [];
  const convo: ChatMessage[] = [];
  // verl's response as its reward manager decodes it (Qwen 2.5's template, special tokens skipped).
  let solution = '';
  let lastContent = '';
  let n = 0;
  const options = { stop: [] as string[], continueFinal: false, ...(env.tools.length ? { tools: env.tools } : {}) };
  const ask = async () => {
    try {
      return await ports.chat([...initialMessages, ...convo], options);
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  };
  const engineError = (error: string) =>
    finished(env, turns, solution, false, null, {
      endReason: 'engine-error',
      finalSql: null,
      formatValid: false,
      presetReward: null,
      error,
    });
  while (n < env.maxTurns) {
    const start = ports.now();
    const reply = await ask();
    if (typeof reply === 'string') return engineError(reply);
    n++;
    const text = reply.text;
    const tokens = reply.tokens ?? null;
    const turn: EpisodeTurn = { text, tokens, probeSql: null, probe: null, observation: null, ms: 0 };
    turns.push(turn);
    if (n > 1) solution += 'assistant\n';
    const parsed = reply.finishReason === 'length' ? null : parseToolCalls(text, env.toolName);
    if (!parsed || parsed.calls.length === 0) {
      // No tool call (or none valid, or cut by the token limit): the message as generated ends the episode.
      convo.push({ role: 'assistant', content: text });
      solution += `${text}\n`;
      lastContent = text;
      turn.ms = ports.now() - start;
      break;
    }
    const ids = parsed.calls.map((_, i) => `call_${n}_${i}`);
    const rendered = renderAssistant(parsed.normalText, parsed.calls);
    convo.push(
      env.toolRole
        ? {
            role: 'assistant',
            content: parsed.normalText,
            toolCalls: parsed.calls.map((c, i): ToolCallMessage => ({
              id: ids[i]!,
              name: c.name,
              arguments: pyJsonDumps(c.arguments),
            })),
          }
        : { role: 'assistant', content: rendered },
    );
    solution += `${rendered}\n`;
    lastContent = parsed.normalText;
    if (n >= env.maxTurns) {
      // verl's loop ends here: the last allowed turn's calls never run.
      turn.ms = ports.now() - start;
      break;
    }
    const records: ToolCallRecord[] = [];
    for (const call of parsed.calls) {
      const sql = typeof call.arguments.sql_query === 'string' ? call.arguments.sql_query : null;
      const refused = refusal(call.arguments);
      if (refused !== null) {
        records.push({ sql, probe: null, response: refusalResponse(refused) });
        continue;
      }
      const probe = await ports.probe(sql!, { timeoutMs: env.probeTimeoutMs });
      records.push({ sql, probe, response: probeResponse(env, probe) });
    }
    turn.toolCalls = records;
    turn.probeSql = records[0]!.sql;
    turn.probe = records[0]!.probe;
    turn.observation = renderToolTurn(records.map((r) => r.response));
    if (env.toolRole) records.forEach((r, i) => convo.push({ role: 'tool', content: r.response, toolCallId: ids[i]! }));
    else convo.push({ role: 'user', content: turn.observation });
    solution += `user\n${turn.observation}\n`;
    turn.ms = ports.now() - start;
  }
  if (n >= env.maxTurns && env.finalSummary && !lastContent.includes('<answer>')) {
    const start = ports.now();
    turns.at(-1)!.observation = env.summaryPrompt;
    convo.push({ role: 'user', content: env.summaryPrompt });
    solution += `user\n${env.summaryPrompt}\nassistant\n`;
    const reply = await ask();
    if (typeof reply === 'string') return engineError(reply);
    turns.push({
      text: reply.text,
      tokens: reply.tokens ?? null,
      probeSql: null,
      probe: null,
      observation: null,
      ms: ports.now() - start,
    });
    solution += `${reply.text}\n`;
  }
  const answer = verlAnswer(solution);
  const judged = answer !== null && ports.judge ? await ports.judge(answer) : null;
  return finished(env, turns, solution, n >= env.maxTurns, judged);
}

/**
 * Tool calls an OpenAI-compatible server parsed (`message.tool_calls`: name, arguments as JSON
 * text), written back as Qwen's hermes blocks the way its chat template renders them; arguments
 * that are not JSON are kept as sent (the episode then reads no valid call, as verl would).
 */
export function hermesToolCalls(calls: readonly { name: string; arguments: string }[]): string {
  return calls
    .map((c) => {
      let args: string;
      try {
        args = pyJsonDumps(JSON.parse(c.arguments));
      } catch {
        args = c.arguments;
      }
      return `<tool_call>\n{"name": ${pyJsonString(c.name, false)}, "arguments": ${args}}\n</tool_call>`;
    })
    .join('\n');
}
