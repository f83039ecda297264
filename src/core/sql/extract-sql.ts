import type { Extraction, ExtractionRule } from '../types.ts';
import { tagBlocks, withoutTagBlocks } from './tag-blocks.ts';

/** One sentence per rule, for the UI and the docs (docs/formats.md has examples). */
export const EXTRACTION_RULES: Readonly<Record<ExtractionRule, string>> = {
  'bird-separator':
    'BIRD JSON value `SQL\\t----- bird -----\\tdb_id`: the part before the separator, not stripped, as the official evaluator does.',
  'bird-no-separator':
    'BIRD JSON string value without the separator: the whole string, whitespace-stripped (official fallback).',
  'bird-non-string':
    'BIRD JSON value that is not a string: the SQL becomes a single space, as official, so it is correct only when the gold result is empty.',
  'sql-field': 'JSONL line with a `sql` field: that string, used as given.',
  'sql-line': 'Plain .sql predictions file: one line per question, trimmed.',
  'fenced-sql-first':
    'The first ```sql / ```sqlite block (or bare ``` block starting with SELECT/WITH) of a completion.',
  'fenced-sql-last': 'The last ```sql / ```sqlite block (or bare ``` block starting with SELECT/WITH) of a completion.',
  'answer-tag': 'The content of the last <answer>...</answer>, with a code fence inside it unwrapped.',
  'solution-tag': 'The content of the last <solution>...</solution>, with a code fence inside it unwrapped.',
  'select-fallback':
    'No tag or fence: the text from the first SELECT or WITH up to the first `;` outside quotes (inclusive), or to the end.',
  none: 'Nothing that looks like SQL was found: the item is evaluated with empty SQL.',
};

export interface ExtractOptions {
  /**
   * Which fenced block wins when a completion has several. Default 'last': RL-trained models
   * often draft a query and then revise it. BIRD's official vLLM inference takes the first
   * block; choose 'first' to reproduce it.
   */
  fence?: 'first' | 'last';
}

/**
 * Removes reasoning so that draft SQL inside it is never graded. In order: complete
 * `<think>...</think>` blocks; then, if a `</think>` is left (DeepSeek-R1 templates pre-fill the
 * opening tag), everything up to the last one; then, if an unclosed `<think>` is left (output cut
 * off mid-thought), everything from it to the end, since the model never reached an answer.
 */
function stripThink(text: string): { text: string; stripped: boolean } {
  let out = withoutTagBlocks(text, 'think');
  const close = out.toLowerCase().lastIndexOf('</think>');
  if (close >= 0) out = out.slice(close + '</think>'.length);
  const open = out.toLowerCase().indexOf('<think>');
  if (open >= 0) out = out.slice(0, open);
  return { text: out, stripped: out !== text };
}

interface Fence {
  /** 'sql' for ```sql / ```sqlite, '' for a bare fence, otherwise the language tag. */
  lang: string;
  content: string;
}

function fencedBlocks(text: string): Fence[] {
  const blocks: Fence[] = [];
  for (const m of text.matchAll(/```([\s\S]*?)```/g)) {
    const body = m[1]!;
    const sqlTag = /^(?:sqlite|sql)(?![\w-])[ \t]*\r?\n?/i.exec(body);
    const tagLine = /^([A-Za-z][\w+.-]*)[ \t]*\r?\n/.exec(body);
    if (sqlTag) blocks.push({ lang: 'sql', content: body.slice(sqlTag[0].length) });
    // A first line that is itself SQL (```SELECT\n...) is content, not a language tag.
    else if (tagLine && !/^(?:select|with)$/i.test(tagLine[1]!)) {
      blocks.push({ lang: tagLine[1]!.toLowerCase(), content: body.slice(tagLine[0].length) });
    } else blocks.push({ lang: '', content: body });
  }
  return blocks;
}

const STARTS_LIKE_SQL = /^(?:select|with)\b/i;

/** Fenced blocks that hold SQL; empty blocks never count as an answer. */
function sqlBlocks(text: string): string[] {
  return fencedBlocks(text)
    .filter((b) => b.content.trim() !== '')
    .filter((b) => b.lang === 'sql' || (b.lang === '' && STARTS_LIKE_SQL.test(b.content.trim())))
    .map((b) => b.content);
}

function pick(blocks: string[], fence: 'first' | 'last'): string | undefined {
  return fence === 'first' ? blocks[0] : blocks[blocks.length - 1];
}

/** Content of the last `<tag>...</tag>`, or null. */
function lastTag(text: string, tag: string): string | null {
  return tagBlocks(text, tag).at(-1)?.content ?? null;
}

/**
 * Inside an answer tag any fence is only packaging, whatever its language tag; a fence left
 * unclosed by the model is peeled off too.
 */
function unwrapInTag(content: string, fence: 'first' | 'last'): string {
  const blocks = fencedBlocks(content).filter((b) => b.content.trim() !== '');
  const chosen = pick(
    blocks.map((b) => b.content),
    fence,
  );
  if (chosen !== undefined) return chosen;
  return content.replace(/^\s*```[\w+.-]*/, '').replace(/```\s*$/, '');
}

/*
 * Where SQL starts when there is no tag or fence: the first SELECT, or a CTE. A CTE must look
 * like `WITH name AS (`, because "with" is everywhere in prose; a prose "select" still matches,
 * which is why this is the last resort.
 */
// The name and the column list are bounded (no real CTE comes near): unbounded, every `WITH a(`
// of a text scanned to its end for a `)`, and 1 MB of them took 68 s.
const SQL_START = /\bSELECT\b|\bWITH\s+(?:RECURSIVE\s+)?[^\s(]{1,256}\s*(?:\([^)]{0,4096}\)\s*)?AS\s*\(/i;

/** From `start` to the first `;` outside '...', "..." and `...` (inclusive), or to the end. */
function untilSemicolon(text: string, start: number): string {
  let quote: string | null = null;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      // A doubled quote ('') closes and reopens, which this toggling handles for free.
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === ';') return text.slice(start, i + 1);
  }
  return text.slice(start);
}

/**
 * Extracts the SQL of a raw model completion. Rules, first match wins: `<think>` stripping
 * (always, recorded in `thinkStripped`), then answer-tag, solution-tag, fenced block,
 * select-fallback, none. See EXTRACTION_RULES and docs/formats.md.
 */
export function extractSql(completion: string, options: ExtractOptions = {}): { sql: string; extraction: Extraction } {
  const fence = options.fence ?? 'last';
  const { text, stripped } = stripThink(completion);
  const done = (sql: string, rule: ExtractionRule) => ({
    sql: sql.trim(),
    extraction: { rule, thinkStripped: stripped },
  });

  for (const [tag, rule] of [
    ['answer', 'answer-tag'],
    ['solution', 'solution-tag'],
  ] as const) {
    const content = lastTag(text, tag);
    if (content !== null) return done(unwrapInTag(content, fence), rule);
  }

  const block = pick(sqlBlocks(text), fence);
  if (block !== undefined) return done(block, fence === 'first' ? 'fenced-sql-first' : 'fenced-sql-last');

  const m = SQL_START.exec(text);
  if (m) return done(untilSemicolon(text, m.index), 'select-fallback');

  return done('', 'none');
}
