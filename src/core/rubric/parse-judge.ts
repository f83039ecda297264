/**
 * Strict reading of a judge's answer. Accepted: the JSON object alone, inside a ```json fence,
 * or surrounded by prose, and complete `<think>` blocks are ignored. Not accepted (the answer
 * is malformed and is retried, then marked `unparseable`): no object with the required key,
 * JSON5/Python-isms (`True`, single quotes, trailing commas), a value of the wrong type
 * (`"true"`, `7.5`, `"7"`), a score outside 1..10, or several objects that disagree. Nothing
 * is inferred from free text such as "criteria met: yes".
 */

import type { Result } from '../result.ts';
import { withoutTagBlocks } from '../sql/tag-blocks.ts';

/** A judge's answer read, or why it could not be (the reason, shown as the verdict's error). */
export type ParseResult<T> = Result<T, string>;

interface CriterionAnswer {
  met: boolean;
  explanation: string;
}

interface ScoreAnswer {
  score: number;
  explanation: string;
}

function stripThink(text: string): string {
  let out = withoutTagBlocks(text, 'think');
  const close = out.toLowerCase().lastIndexOf('</think>');
  if (close >= 0) out = out.slice(close + '</think>'.length);
  return out;
}

/**
 * The longest answer read: a verdict is a short JSON object (a reasoning judge's `<think>` of a
 * million characters is far past any --max-tokens); a longer reply is unparseable, not parsed.
 */
export const MAX_JUDGE_ANSWER_CHARS = 1024 * 1024;

/** String-aware scans of `{`/`}` a parse may make before it stops looking (see jsonObjects). */
const MAX_SCANS = 8;

/**
 * One left-to-right scan from `start` (outside any string): for each `{` it sees outside a
 * string, the index just past its matching `}`, or -1 when it is never closed. A scan from an
 * earlier start gives the same answer for such a `{` as a scan from the `{` itself, since both
 * are outside a string there and read the rest alike.
 */
function scanObjects(text: string, start: number, work: { chars: number }): Scan {
  // ends[i - start]: 0 = no `{` outside a string here, -1 = never closed, else the index past its `}`.
  const ends = new Int32Array(text.length - start);
  const stack: number[] = [];
  let i = start;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c /* \ */) i++;
    } else if (c === 0x7b /* { */) {
      stack.push(i);
      ends[i - start] = -1;
    } else if (c === 0x7d /* } */ && stack.length > 0) {
      ends[stack.pop()! - start] = i + 1;
    }
  }
  work.chars += i - start;
  return { start, ends };
}

interface Scan {
  start: number;
  ends: Int32Array;
}

const endIn = (scan: Scan, i: number): number | undefined =>
  i >= scan.start ? scan.ends[i - scan.start] || undefined : undefined;

/**
 * Every outermost `{...}` span of the text that is a valid JSON object, in order, in linear
 * time: where a span was found by rescanning the text from each `{` (1 MB of `{` took hours),
 * the matching `}` of each `{` comes from one scan; a new scan starts only at a `{` that every
 * earlier scan saw inside a string, at most MAX_SCANS of them. `work` counts the characters
 * scanned (tests bound it).
 */
export function jsonObjects(text: string, work: { chars: number } = { chars: 0 }): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const scans: Scan[] = [];
  let i = text.indexOf('{');
  while (i >= 0) {
    let end: number | undefined;
    for (const s of scans) if ((end = endIn(s, i)) !== undefined) break;
    if (end === undefined) {
      if (scans.length >= MAX_SCANS) {
        i = text.indexOf('{', i + 1);
        continue;
      }
      const scan = scanObjects(text, i, work);
      scans.push(scan);
      end = endIn(scan, i)!;
    }
    // A balanced span that is not a JSON object is skipped whole: objects nested in broken
    // JSON are not dug out of it.
    const next = end > 0 ? end : i + 1;
    if (end > 0) {
      work.chars += end - i;
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
  if (text.length > MAX_JUDGE_ANSWER_CHARS) {
    return {
      ok: false,
      error: `the answer is ${text.length.toLocaleString('en-US')} characters, more than the ${MAX_JUDGE_ANSWER_CHARS.toLocaleString('en-US')} a verdict may take: lower the judge's max_tokens or ask for the JSON verdict alone`,
    };
  }
  const objects = jsonObjects(stripThink(text)).filter((o) => Object.prototype.hasOwnProperty.call(o, key));
  if (objects.length === 0) return { ok: false, error: `no JSON object with "${key}" in the answer` };
  const values: Array<T & { explanation: string }> = [];
  for (const o of objects) {
    const r = read(o[key]);
    if (!r.ok) return r;
    const explanation = o.explanation ?? '';
    if (typeof explanation !== 'string')
      return { ok: false, error: `"explanation" must be a string, found ${JSON.stringify(explanation)}` };
    values.push({ ...r.value, explanation });
  }
  const first = values[0]!;
  if (values.some((v) => !same(v, first)))
    return { ok: false, error: `${values.length} JSON objects with "${key}" disagree` };
  return { ok: true, value: first };
}

export function parseCriterionAnswer(text: string): ParseResult<CriterionAnswer> {
  return readAnswer<{ met: boolean }>(
    text,
    'criteria_met',
    (v) =>
      typeof v === 'boolean'
        ? { ok: true, value: { met: v } }
        : { ok: false, error: `"criteria_met" must be true or false, found ${JSON.stringify(v)}` },
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
        : { ok: false, error: `"score" must be an integer from 1 to 10, found ${JSON.stringify(v)}` },
    (a, b) => a.score === b.score,
  );
}

export type PairwiseWinner = 'A' | 'B' | 'tie';

interface PairwiseAnswer {
  winner: PairwiseWinner;
  explanation: string;
}

/** `{"winner": "A" | "B" | "tie"}`, exactly these strings (no "a", "Response A", "Tie"). */
export function parsePairwiseAnswer(text: string): ParseResult<PairwiseAnswer> {
  return readAnswer<{ winner: PairwiseWinner }>(
    text,
    'winner',
    (v) =>
      v === 'A' || v === 'B' || v === 'tie'
        ? { ok: true, value: { winner: v } }
        : { ok: false, error: `"winner" must be "A", "B" or "tie", found ${JSON.stringify(v)}` },
    (a, b) => a.winner === b.winner,
  );
}
