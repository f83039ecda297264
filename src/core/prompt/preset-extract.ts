/**
 * The SQL a preset's original evaluation takes from a completion (see PresetExtractionRule).
 * For multi-turn presets `text` is what the original's reward reads: SkyRL joins the whole chat
 * (assistant turns and observations); the verl tutorial reads the solution string.
 */
import { extractSql } from '../sql/extract-sql.ts';
import type { PolicyPreset, PresetExtractionRule } from './presets.ts';

interface PresetAnswer {
  /** The SQL, or null when the rule finds none (the item is then scored with no SQL). */
  sql: string | null;
  /** The completion has the preset's answer format (SkyRL, verl: the format part of their reward). */
  formatOk: boolean;
  rule: PresetExtractionRule;
}

/** Python's str.strip() whitespace. */
const PY_SPACE = '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PY_STRIP = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, 'g');
const PY_LSTRIP = new RegExp(`^${PY_SPACE}+`);
const pyStrip = (s: string) => s.replace(PY_STRIP, '');

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** OmniSQL's and Arctic's `parse_response`: the last ```sql block, stripped. */
function lastSqlFence(text: string): string | null {
  const blocks = [...text.matchAll(/```sql\s*([\s\S]*?)\s*```/g)];
  return blocks.length > 0 ? pyStrip(blocks[blocks.length - 1]![1]!) : null;
}

/** SkyRL's `verify_format_and_extract` (skyrl_gym/envs/sql/utils.py). */
function skyrlSolution(output: string): string | null {
  if (count(output, '<solution>') !== 1) return null;
  const at = output.indexOf('<solution>');
  const pre = output.slice(0, at);
  const tail = output.slice(at + '<solution>'.length);
  if (count(tail, '</solution>') !== 1) return null;
  const solution = tail.slice(0, tail.indexOf('</solution>'));
  if (/<\/?(think|sql|observation)(?![\p{L}\p{N}_])/iu.test(solution)) return null; // Python's \b is Unicode-aware
  if (!/<think>[\s\S]*?<\/think>/.test(output)) return null;
  for (const m of pre.matchAll(/<\/observation>/gi)) {
    const rest = pre.slice(m.index + m[0].length).replace(PY_LSTRIP, '');
    if (!rest.toLowerCase().startsWith('<think>')) return null;
  }
  return pyStrip(solution);
}

/** The verl tutorial's `extract_sql_solution` (rl-tutorial/text2sql/text2sql_reward_func.py). */
export function verlAnswer(text: string): string | null {
  if (count(text, '<answer>') !== 1 || count(text, '</answer>') !== 1) return null;
  const tail = text.slice(text.indexOf('<answer>') + '<answer>'.length);
  const end = tail.indexOf('</answer>');
  if (end < 0) return null; // </answer> before <answer>: Python's unpacking fails, no answer
  const answer = tail.slice(0, end);
  if (/<\/?(think|tool_call|tool_response)(?![\p{L}\p{N}_])/iu.test(answer)) return null; // Python's \b is Unicode-aware
  return pyStrip(answer);
}

export function extractAnswer(preset: PolicyPreset, text: string): PresetAnswer {
  const rule = preset.extraction;
  if (rule === 'app-default') {
    const { sql, extraction } = extractSql(text);
    return { sql: extraction.rule === 'none' ? null : sql, formatOk: extraction.rule !== 'none', rule };
  }
  const sql =
    rule === 'last-sql-fence' ? lastSqlFence(text) : rule === 'skyrl-solution' ? skyrlSolution(text) : verlAnswer(text);
  return { sql, formatOk: sql !== null, rule };
}
