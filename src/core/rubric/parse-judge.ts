/**
 * Strict reading of a judge's answer. Accepted: the JSON object alone, inside a ```json fence,
 * or surrounded by prose, and complete `<think>` blocks are ignored. Not accepted (the answer
 * is malformed and is retried, then marked `unparseable`): no object with the required key,
 * JSON5/Python-isms (`True`, single quotes, trailing commas), a value of the wrong type
 * (`"true"`, `7.5`, `"7"`), a score outside 1..10, or several objects that disagree. Nothing
 * is inferred from free text such as "criteria met: yes".
 */

export type ParseResult<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface CriterionAnswer {
  met: boolean;
  explanation: string;
}

export interface ScoreAnswer {
  score: number;
  explanation: string;
}

function stripThink(text: string): string {
  let out = text.replace(/<think>[\s\S]*?<\/think>/gi, '');
  const close = out.toLowerCase().lastIndexOf('</think>');
  if (close >= 0) out = out.slice(close + '</think>'.length);
  return out;
}

/** Index just past the `}` closing the object opened at `start`, or -1. String-aware. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Every outermost `{...}` span of the text that is a valid JSON object, in order. */
export function jsonObjects(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let i = text.indexOf('{');
  while (i >= 0) {
    const end = objectEnd(text, i);
    // A balanced span that is not a JSON object is skipped whole: objects nested in broken
    // JSON are not dug out of it.
    const next = end > 0 ? end : i + 1;
    if (end > 0) {
      try {
        const v: unknown = JSON.parse(text.slice(i, end));
        if (typeof v === 'object' && v !== null && !Array.isArray(v)) out.push(v as Record<string, unknown>);
      } catch {
        // Not JSON.
      }
    }
    i = text.indexOf('{', next);
  }
  return out;
}

function readAnswer<T>(
  text: string,
  key: string,
  read: (value: unknown) => ParseResult<T>,
  same: (a: T, b: T) => boolean,
): ParseResult<T & { explanation: string }> {
  const objects = jsonObjects(stripThink(text)).filter((o) => Object.prototype.hasOwnProperty.call(o, key));
  if (objects.length === 0) return { ok: false, reason: `no JSON object with "${key}" in the answer` };
  const values: Array<T & { explanation: string }> = [];
  for (const o of objects) {
    const r = read(o[key]);
    if (!r.ok) return r;
    const explanation = o.explanation ?? '';
    if (typeof explanation !== 'string') return { ok: false, reason: `"explanation" must be a string, found ${JSON.stringify(explanation)}` };
    values.push({ ...r.value, explanation });
  }
  const first = values[0]!;
  if (values.some((v) => !same(v, first))) return { ok: false, reason: `${values.length} JSON objects with "${key}" disagree` };
  return { ok: true, value: first };
}

export function parseCriterionAnswer(text: string): ParseResult<CriterionAnswer> {
  return readAnswer<{ met: boolean }>(
    text,
    'criteria_met',
    (v) => (typeof v === 'boolean' ? { ok: true, value: { met: v } } : { ok: false, reason: `"criteria_met" must be true or false, found ${JSON.stringify(v)}` }),
    (a, b) => a.met === b.met,
  );
}

export function parseScoreAnswer(text: string): ParseResult<ScoreAnswer> {
  return readAnswer<{ score: number }>(
    text,
    'score',
    (v) =>
      typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 10
        ? { ok: true, value: { score: v } }
        : { ok: false, reason: `"score" must be an integer from 1 to 10, found ${JSON.stringify(v)}` },
    (a, b) => a.score === b.score,
  );
}
