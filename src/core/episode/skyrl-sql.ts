/**
 * SkyRL-SQL's text2sql environment, rule for rule (NovaSky-AI/SkyRL at
 * a9564572eb8e91076be43c1bd5e4615e3de17265; docs/multi-turn.md cites each rule):
 * skyrl-gym/skyrl_gym/envs/sql/env.py (the turn loop), skyrl_gym/tools/sql.py (the observation)
 * and skyrl_gym/envs/sql/utils.py (the reward's format check).
 */
import { dataFrameToString, pyKey, pyValue, type PyValue } from './pandas-frame.ts';
import { codePoints } from '../prompt/py-format.ts';
import type { ProbeResult } from './types.ts';

export interface SkyrlSqlEnv {
  kind: 'skyrl-sql';
  /** env.py: `extras["max_turns"]`, 5 when absent (the generator passes its own `max_turns`; SkyRL's SQL script uses 6). */
  maxTurns: number;
  /** tools/sql.py: `timeout=5` seconds. */
  probeTimeoutMs: number;
  /**
   * The database file path that SkyRL's error text names (`..., db file: <path>`): a policy was
   * trained on its trainer's paths. `{db_id}` is replaced.
   */
  dbFile: string;
  /** The generator's stop strings (examples/train/text_to_sql/run_skyrl_sql.sh). */
  stop: readonly string[];
  /** `generator.use_conversation_multi_turn`: false (SkyRL-SQL's script) appends turns and observations to one assistant message. */
  conversation: boolean;
}

export const SKYRL_SQL_DEFAULTS: SkyrlSqlEnv = {
  kind: 'skyrl-sql',
  maxTurns: 5,
  probeTimeoutMs: 5000,
  dbFile: '/home/ray/default/sql_data/bird/train/train_databases/{db_id}/{db_id}.sqlite',
  stop: ['</sql>', '</solution>'],
  conversation: false,
};

const INVALID_ACTION =
  'Your previous action is invalid. Follow the format of outputting thinking process and sql tool, and try again.';
const TRUNCATED_PREFIX = 'Truncated to 50 lines since returned response too long: ';
const TRUNCATE_OVER = 9000;
const TRUNCATE_ROWS = 50;

/** env.py `_is_done` (after the turn count went up): the limit, or both solution tags anywhere. */
export function isDone(action: string, turns: number, maxTurns: number): boolean {
  if (turns >= maxTurns) return true;
  return action.includes('<solution>') && action.includes('</solution>');
}

/** env.py `_parse_action`: the first `<sql>…</sql>` (non-greedy, across lines); null without one. */
export function parseSqlAction(action: string): string | null {
  const m = /<sql>([\s\S]*?)<\/sql>/.exec(action);
  return m ? m[1]! : null;
}

/** The distinct rows of a result in first-seen order (SkyRL keeps a frozenset: see docs/multi-turn.md). */
export function distinctRows(result: ProbeResult): PyValue[][] {
  const seen = new Set<string>();
  const out: PyValue[][] = [];
  result.rows.forEach((row, r) => {
    const values = row.map((v, c) => pyValue(v, result.classes[r]?.[c] ?? 'null'));
    const key = JSON.stringify(values.map(pyKey));
    if (seen.has(key)) return;
    seen.add(key);
    out.push(values);
  });
  return out;
}

/** tools/sql.py `_execute_sql_wrapper`'s text for a result of rows. */
export function resultText(rows: readonly (readonly PyValue[])[]): string {
  const full = dataFrameToString(rows);
  if (codePoints(full) > TRUNCATE_OVER) return TRUNCATED_PREFIX + dataFrameToString(rows.slice(0, TRUNCATE_ROWS));
  return full;
}

/** tools/sql.py `sql`: the observation for one turn's probe (null sql: no `<sql>` block). */
export function observationText(
  env: SkyrlSqlEnv,
  dbId: string,
  sql: string | null,
  result: ProbeResult | null,
  turnsLeft: number,
): string {
  const reminder = `<reminder>You have ${turnsLeft} turns left to complete the task.</reminder>`;
  let obs: string;
  if (sql === null || result === null) obs = INVALID_ACTION;
  else if (result.timedOut) obs = `SQL Timeout:\n${sql}`;
  else if (result.error !== undefined)
    obs = `Error executing SQL: ${result.error}, db file: ${env.dbFile.replaceAll('{db_id}', dbId)}`;
  else obs = resultText(distinctRows(result));
  return `\n\n<observation>${obs}\n${reminder}</observation>\n\n`;
}

const count = (text: string, sub: string) => text.split(sub).length - 1;

/**
 * utils.py `verify_format_and_extract` on the whole trajectory (every action and observation
 * concatenated, as env.py `_get_reward` builds it): exactly one `<solution>`, one `</solution>`
 * after it, no think/sql/observation tag inside, at least one `<think>…</think>`, and every
 * `</observation>` before the solution followed (after white space) by `<think>`.
 */
export function verifyFormat(history: string): { valid: boolean; solution: string | null } {
  const bad = { valid: false, solution: null };
  if (count(history, '<solution>') !== 1) return bad;
  const at = history.indexOf('<solution>');
  const pre = history.slice(0, at);
  const tail = history.slice(at + '<solution>'.length);
  if (count(tail, '</solution>') !== 1) return bad;
  const solution = tail.slice(0, tail.indexOf('</solution>'));
  if (/<\/?(think|sql|observation)(?![\p{L}\p{N}_])/iu.test(solution)) return bad; // Python's \b is Unicode-aware
  if (!/<think>[\s\S]*?<\/think>/.test(history)) return bad;
  const closes = /<\/observation>/gi;
  for (let m = closes.exec(pre); m; m = closes.exec(pre)) {
    const rest = pyLstrip(pre.slice(m.index + m[0].length));
    if (!rest.toLowerCase().startsWith('<think>')) return bad;
  }
  return { valid: true, solution: pyStrip(solution) };
}

// Python's str.strip() with no argument removes what str.isspace() calls white space (not U+FEFF, unlike \s).
const PY_SPACE = '[\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const pyLstrip = (s: string) => s.replace(new RegExp(`^${PY_SPACE}+`, 'u'), '');
const pyStrip = (s: string) => pyLstrip(s).replace(new RegExp(`${PY_SPACE}+$`, 'u'), '');
