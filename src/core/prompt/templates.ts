/**
 * Prompt templates: named, versioned data. A template never changes once a run has used it;
 * an edit is a new id (`-v2`, or a user's own id). Text fields use a small mustache subset:
 *
 *   {{schema}} {{question}} {{evidence}} {{dialect}}   the values
 *   {{#evidence}}...{{/evidence}}                       kept only when the value is not empty (Python truthiness)
 *   {{^evidence}}...{{/evidence}}                       kept only when it is empty
 *
 * `bird-minidev-v1` reproduces BIRD mini-dev's `generate_combined_prompts_one`
 * (llm/src/prompt.py) character for character, including its stray spaces: the schema, the
 * `-- Using valid SQLite ...` comment with the question and the external knowledge, the
 * "think step by step" line and the instruction block, joined by blank lines, as one user
 * message. BIRD's script prints no sample rows (num_rows=None) and no column descriptions,
 * hence the defaults; a run may ask for N rows.
 */
export interface PromptTemplate {
  /** Stable identifier, ending in its version: `bird-minidev-v1`. */
  id: string;
  title: string;
  description: string;
  /** System message, or null for none. */
  system: string | null;
  user: string;
  /** Default sample rows per table. */
  sampleRows: number;
  /** Default for BIRD column descriptions. */
  descriptions: boolean;
  /** Stop strings a run should add for this template (none for the built-in ones). */
  stop: string[];
}

export const TEMPLATE_VARIABLES = ['schema', 'question', 'evidence', 'dialect'] as const;
type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

const MINIDEV_INSTRUCTION =
  '\n        \nIn your response, you do not need to mention your intermediate steps. \n' +
  '        Do not include any comments in your response.\n' +
  '        Do not need to start with the symbol ```\n' +
  '        You only need to return the result {{dialect}} SQL code\n' +
  '        start from SELECT\n' +
  '        ';

export const BIRD_MINIDEV_V1: PromptTemplate = {
  id: 'bird-minidev-v1',
  title: 'BIRD mini-dev (official)',
  description:
    "BIRD mini-dev's own prompt (llm/src/prompt.py): CREATE TABLE statements, the question as an SQL comment with the external knowledge, 'think step by step', and the instruction to answer with SQL only. No sample rows or descriptions unless asked.",
  system: null,
  user:
    '{{schema}}\n\n' +
    '-- Using valid {{dialect}}{{#evidence}} and understanding External Knowledge{{/evidence}}, answer the following questions for the tables provided above.\n' +
    '-- {{question}}\n' +
    '{{#evidence}}-- External Knowledge: {{evidence}}{{/evidence}}\n\n' +
    '\nGenerate the {{dialect}} for the above question after thinking step by step: \n\n' +
    MINIDEV_INSTRUCTION,
  sampleRows: 0,
  descriptions: false,
  stop: [],
};

export const REASONING_V1: PromptTemplate = {
  id: 'reasoning-v1',
  title: 'Reasoning (<think> then <answer>)',
  description:
    'For RL-trained reasoning policies: the schema with 3 sample rows per table and the column descriptions, then the question; the model reasons inside <think>...</think> and gives only the final query inside <answer>...</answer>.',
  system:
    'You are an expert in SQLite. You answer questions about a database by writing one SQLite query. ' +
    'First reason step by step inside <think>...</think>. Then write only the final query inside <answer>...</answer>.',
  user:
    'Database schema:\n\n{{schema}}\n\n' +
    '{{#evidence}}External knowledge: {{evidence}}\n\n{{/evidence}}' +
    'Question: {{question}}\n\n' +
    'Think inside <think>...</think>, then give the {{dialect}} query that answers the question inside <answer>...</answer>, with nothing after it.',
  sampleRows: 3,
  descriptions: true,
  stop: [],
};

export const BUILTIN_TEMPLATES: readonly PromptTemplate[] = [BIRD_MINIDEV_V1, REASONING_V1];

export function findTemplate(id: string, extra: readonly PromptTemplate[] = []): PromptTemplate | undefined {
  return [...BUILTIN_TEMPLATES, ...extra].find((t) => t.id === id);
}

export type TemplateValues = Record<TemplateVariable, string>;

const TAG = /\{\{([#^/]?)\s*([A-Za-z_]+)\s*\}\}/g;

/** Renders `text` with `values`. Sections may nest; an unknown variable is an error (see `templateProblems`). */
export function renderTemplateText(text: string, values: TemplateValues): string {
  let out = '';
  const stack: Array<{ name: string; show: boolean }> = [];
  const visible = () => stack.every((s) => s.show);
  let last = 0;
  for (const m of text.matchAll(TAG)) {
    if (visible()) out += text.slice(last, m.index);
    last = m.index! + m[0].length;
    const [, kind, name] = m as unknown as [string, string, TemplateVariable];
    const value = values[name] ?? '';
    if (kind === '#') stack.push({ name, show: value !== '' });
    else if (kind === '^') stack.push({ name, show: value === '' });
    else if (kind === '/') stack.pop();
    else if (visible()) out += value;
  }
  if (visible()) out += text.slice(last);
  return out;
}

/** Problems of a user-edited template, as sentences; empty when it is usable. */
export function templateProblems(t: PromptTemplate): string[] {
  const problems: string[] = [];
  if (!/^[a-z0-9][a-z0-9._-]*-v\d+$/.test(t.id))
    problems.push(`id "${t.id}" must be lower-case and end in a version, e.g. my-template-v1`);
  if (!Number.isInteger(t.sampleRows) || t.sampleRows < 0 || t.sampleRows > 100)
    problems.push('sampleRows must be an integer from 0 to 100');
  for (const [field, text] of [
    ['system', t.system ?? ''],
    ['user', t.user],
  ] as const) {
    const stack: string[] = [];
    for (const m of text.matchAll(TAG)) {
      const [, kind, name] = m as unknown as [string, string, string];
      if (!(TEMPLATE_VARIABLES as readonly string[]).includes(name)) {
        problems.push(`${field}: unknown variable {{${name}}} (known: ${TEMPLATE_VARIABLES.join(', ')})`);
      }
      if (kind === '#' || kind === '^') stack.push(name);
      else if (kind === '/' && stack.pop() !== name)
        problems.push(`${field}: {{/${name}}} closes a section that is not open`);
    }
    if (stack.length > 0) problems.push(`${field}: section {{#${stack[stack.length - 1]}}} is never closed`);
  }
  if (!t.user.includes('{{question}}')) problems.push('user: the template never shows {{question}}');
  if (!`${t.system ?? ''}${t.user}`.includes('{{schema}}')) problems.push('the template never shows {{schema}}');
  return problems;
}

/** FNV-1a of the template's content: two runs with the same id and fingerprint saw the same text. */
export function templateFingerprint(t: PromptTemplate): string {
  const text = JSON.stringify([t.id, t.system, t.user, t.sampleRows, t.descriptions, t.stop]);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}
