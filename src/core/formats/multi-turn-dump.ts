/**
 * Multi-turn completions as trainers dump them: one decoded response holding the whole episode
 * (the policy's turns, its database probes and the environment's observations). Each dump is
 * split into turns (kept so a run can show the trajectory) and its final SQL is taken by the
 * trainer's own rule (src/core/prompt/preset-extract.ts), so the verdict is on the SQL the
 * trainer's reward read:
 * - SkyRL (`skyrl_gym/envs/sql/env.py`): each assistant turn may hold `<sql>…</sql>` (the first
 *   is the probe, `_parse_action`'s `re.search`), the tool's answer comes back as
 *   `<observation>…</observation>` (`skyrl_gym/tools/sql.py`); the final SQL is the one
 *   `<solution>…</solution>` that `verify_format_and_extract` accepts on the joined chat;
 * - verl multi-turn (sglang rollout, the mair-hub text2sql tutorial): probes are
 *   `<tool_call>{"name": "execute_sql", "arguments": {"sql_query": …}}</tool_call>`, answers
 *   `<tool_response>…</tool_response>` in a user/tool turn; the final SQL is the tutorial's
 *   `extract_sql_solution` (exactly one `<answer>…</answer>`).
 */
import { extractAnswer } from '../prompt/preset-extract.ts';
import { SKYRL_SQL_PRESET, VERL_TEXT2SQL_PRESET } from '../prompt/presets.ts';

/** One turn of a dumped episode: the policy's text (with the probe it ran, if any), or what the environment answered. */
export type DumpTurn =
  { role: 'assistant'; text: string; probe: string | null } | { role: 'observation'; text: string };

/** The final SQL by the trainer's rule (null: its format check failed, no SQL), and the episode's turns. */
interface DumpEpisode {
  sql: string | null;
  formatOk: boolean;
  turns: DumpTurn[];
}

/**
 * Chat-template scaffolding a decoded response keeps between turns: special tokens
 * (`<|im_end|>`, `<|im_start|>user`, `<|eot_id|>`…) and, when they were skipped at decoding,
 * the bare role line they leave (`user\n`, `assistant\n`).
 */
const SPECIAL = /<\|[^|<>\n]{1,40}\|>(?:(?:user|assistant|tool|system|ipython)\n)?/g;
export const stripScaffold = (s: string): string => s.replace(SPECIAL, '');

function splitTurns(
  response: string,
  observation: RegExp,
  probeOf: (assistantText: string) => string | null,
  bareRoles: boolean,
): DumpTurn[] {
  const turns: DumpTurn[] = [];
  const pushAssistant = (raw: string) => {
    let text = stripScaffold(raw);
    // verl decodes with skip_special_tokens: a role word is left on its own line around a tool turn.
    if (bareRoles) text = text.replace(/^\s*assistant\n/, '').replace(/\n?(?:user|tool)\s*$/, '');
    if (text.trim() === '') return;
    turns.push({ role: 'assistant', text, probe: probeOf(text) });
  };
  let at = 0;
  for (const m of response.matchAll(observation)) {
    pushAssistant(response.slice(at, m.index));
    turns.push({ role: 'observation', text: m[1]! });
    at = m.index + m[0].length;
  }
  pushAssistant(response.slice(at));
  return turns;
}

/** Whether a decoded response is a SkyRL SQL episode (it holds SkyRL's tags). */
export const isSkyrlEpisode = (response: string) => /<(?:solution|observation|sql)>/.test(response);

/** A SkyRL eval dump's `output_response`, split into turns; the final SQL as SkyRL's reward reads it. */
export function skyrlEpisode(response: string): DumpEpisode {
  const turns = splitTurns(
    response,
    /<observation>([\s\S]*?)<\/observation>/g,
    (text) => /<sql>([\s\S]*?)<\/sql>/.exec(text)?.[1] ?? null,
    false,
  );
  // SkyRL's reward joins the chat history's contents: the response without the template's tokens.
  const answer = extractAnswer(SKYRL_SQL_PRESET, stripScaffold(response));
  return { sql: answer.sql, formatOk: answer.formatOk, turns };
}

/** The SQL argument of a `<tool_call>` JSON (`sql_query` in the tutorial's tool; else the one string argument). */
function toolCallSql(text: string): string | null {
  const m = /<tool_call>([\s\S]*?)<\/tool_call>/.exec(text);
  if (!m) return null;
  try {
    const call = JSON.parse(m[1]!.trim()) as { arguments?: unknown };
    const args: unknown = typeof call.arguments === 'string' ? JSON.parse(call.arguments) : call.arguments;
    if (args && typeof args === 'object') {
      const entries = Object.entries(args as Record<string, unknown>).filter(([, v]) => typeof v === 'string');
      const named = entries.find(([k]) => /sql|query/i.test(k)) ?? (entries.length === 1 ? entries[0] : undefined);
      if (named) return named[1] as string;
    }
  } catch {
    // not JSON: the raw call text is the probe
  }
  return m[1]!.trim();
}

/** Whether a verl validation output is a multi-turn tool episode. */
export const isVerlToolEpisode = (output: string) => /<tool_call>|<tool_response>/.test(output);

/** A verl multi-turn validation `output`, split into turns; the final SQL by the text2sql tutorial's rule. */
export function verlToolEpisode(output: string): DumpEpisode {
  const turns = splitTurns(output, /<tool_response>([\s\S]*?)<\/tool_response>/g, toolCallSql, true);
  const answer = extractAnswer(VERL_TEXT2SQL_PRESET, output);
  return { sql: answer.sql, formatOk: answer.formatOk, turns };
}

/** Turns of chat messages (a verifiers trace's branch after its prompt): assistant text and tool calls, tool results. */
export function chatTurns(messages: readonly unknown[], textOf: (content: unknown) => string | undefined): DumpTurn[] {
  const turns: DumpTurn[] = [];
  for (const m of messages) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as { role?: unknown; content?: unknown; tool_calls?: unknown };
    const text = textOf(msg.content) ?? '';
    if (msg.role === 'assistant') {
      const calls = Array.isArray(msg.tool_calls) ? (msg.tool_calls as Array<{ arguments?: unknown }>) : [];
      const probe = calls.length
        ? toolCallSql(`<tool_call>${JSON.stringify({ arguments: calls[0]?.arguments })}</tool_call>`)
        : null;
      turns.push({ role: 'assistant', text, probe });
    } else if (msg.role === 'tool' || (msg.role === 'user' && turns.length > 0)) {
      turns.push({ role: 'observation', text });
    }
  }
  return turns;
}

/** Per episode: turns (assistant turns), probes, and whether a final SQL was found. */
export function turnStats(
  episodes: ReadonlyArray<{ turns: readonly DumpTurn[]; sql: string | null | undefined }>,
): string {
  if (episodes.length === 0) return '';
  const assistant = episodes.map((e) => e.turns.filter((t) => t.role === 'assistant').length);
  const probes = episodes.reduce((s, e) => s + e.turns.filter((t) => t.role === 'assistant' && t.probe).length, 0);
  // undefined: the final SQL is the extraction rules' (no trainer rule to fail).
  const ruled = episodes.filter((e) => e.sql !== undefined);
  const noSql = ruled.filter((e) => e.sql === null).length;
  const mean = assistant.reduce((s, x) => s + x, 0) / episodes.length;
  const format = ruled.length ? `, ${noSql} without a final SQL by the trainer's rule` : '';
  return `${episodes.length} multi-turn episodes, ${mean.toFixed(2)} turns on average, ${probes} probes${format}`;
}
