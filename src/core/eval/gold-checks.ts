/**
 * Gold checks: what is suspicious about a gold query itself, from its text, its question and
 * the shape of its result (rows and columns, known once it ran). Each issue names its kind and
 * a sentence for the reader. Heuristics over the question's wording are documented here:
 * - `no-rows`: the gold returned no rows, so every prediction that returns none is "right".
 * - `count-as-list`: the question asks for a count ("how many", "the number of", "count the")
 *   but the gold returns one value per row (several rows of one column), so a COUNT answer scores 0.
 * - `list-as-count`: the gold's top-level SELECT is a single COUNT(...) while the question asks
 *   for a list ("list", "name", "which", "what are", "give", "show", "identify") and not a count.
 * - `date-dependent`: the gold uses 'now' or CURRENT_DATE/TIME/TIMESTAMP: its answer changes
 *   with the day it is run.
 * - `order-dependent`: the gold's result changes when SQLite reverses unordered selects
 *   (the `goldOrderDependent` field, when the row-order check ran).
 * - `gold-error`: the gold itself fails (every item scores 0).
 * When the prediction changed the database before the gold ran, the gold's result says nothing
 * about the gold: only the checks of its text (list-as-count, date-dependent) are made.
 */
import { isOp, isWord, tokenizeSql } from '../sql/sql-tokens.ts';

interface GoldIssue {
  kind: 'no-rows' | 'count-as-list' | 'list-as-count' | 'date-dependent' | 'order-dependent' | 'gold-error';
  reason: string;
}

export const GOLD_ISSUE_LABELS: Readonly<Record<GoldIssue['kind'], string>> = {
  'no-rows': 'gold returns no rows',
  'count-as-list': 'count asked, gold lists rows',
  'list-as-count': 'list asked, gold counts',
  'date-dependent': "gold depends on today's date",
  'order-dependent': 'gold depends on row order',
  'gold-error': 'gold fails',
};

interface GoldFacts {
  goldSql: string;
  /** The question's text, when the dataset is known. */
  question: string | null;
  /** Null when the gold did not run (the prediction failed first, or the database is missing). */
  goldRowCount: number | null;
  goldColumnCount?: number;
  /** The executor's message; `gold: ...` when the gold failed. */
  error?: string | null;
  goldOrderDependent?: boolean;
  /**
   * The prediction changed the database (or shadowed a table) before the gold ran on the same
   * connection: the gold's result and error are of the changed database, so the checks that read
   * them would blame the gold for the prediction's write; only the text checks apply.
   */
  predChangedDb?: boolean;
}

// "the number of" but not "contact number of" / "phone number of".
const ASKS_COUNT = /\b(how many|(?:the|total|a) number of|count the|count of|total count)\b/i;
const ASKS_LIST = /^\s*(please\s+)?(list|name|which|what are|give|show|identify|enumerate|provide)\b/i;

/** The gold's outermost SELECT list is exactly one COUNT(...) (possibly DISTINCT, aliased). */
function topLevelCountOnly(sql: string): boolean {
  const tokens = tokenizeSql(sql);
  let i = tokens.findIndex((t) => isWord(t, 'SELECT'));
  if (i < 0) return false;
  i++;
  if (isWord(tokens[i], 'DISTINCT', 'ALL')) i++;
  if (!isWord(tokens[i], 'COUNT') || !isOp(tokens[i + 1], '(')) return false;
  let depth = 0;
  for (let k = i + 1; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (isOp(t, '(')) depth++;
    else if (isOp(t, ')')) depth--;
    else if (depth === 0 && isOp(t, ',')) return false;
    else if (depth === 0 && isWord(t, 'FROM')) return true;
    // COUNT(...) followed by arithmetic is a ratio or a difference, not a count.
    else if (depth === 0 && t.kind === 'op') return false;
  }
  return true;
}

function usesNow(sql: string): string | null {
  for (const t of tokenizeSql(sql)) {
    if (t.kind === 'string' && t.value.trim().toLowerCase() === 'now') return "'now'";
    if (isWord(t, 'CURRENT_DATE', 'CURRENT_TIME', 'CURRENT_TIMESTAMP')) return t.value.toUpperCase();
  }
  return null;
}

export function goldIssuesOf(facts: GoldFacts): GoldIssue[] {
  const f: GoldFacts = facts.predChangedDb
    ? { ...facts, goldRowCount: null, goldColumnCount: undefined, error: null, goldOrderDependent: false }
    : facts;
  const out: GoldIssue[] = [];
  if (f.error?.startsWith('gold: ')) out.push({ kind: 'gold-error', reason: `the gold fails: ${f.error.slice(6)}` });
  if (f.goldRowCount === 0)
    out.push({ kind: 'no-rows', reason: 'the gold returns no rows: any prediction that returns none scores 1' });
  const q = f.question ?? '';
  // One value per row: several rows of one column (several columns are a table, not a miscounted count).
  // "What are the names ... by the number of ..." asks for a list: there only "how many" asks for a count.
  const asksCount = ASKS_COUNT.test(q) && (/\bhow many\b/i.test(q) || !ASKS_LIST.test(q));
  if (q && asksCount && f.goldRowCount !== null && f.goldRowCount > 1 && (f.goldColumnCount ?? 1) === 1) {
    out.push({
      kind: 'count-as-list',
      reason: `the question asks for a count ("${ASKS_COUNT.exec(q)![0]}") but the gold returns ${f.goldRowCount} rows`,
    });
  }
  if (
    q &&
    ASKS_LIST.test(q) &&
    !asksCount &&
    !ASKS_COUNT.test(q) &&
    topLevelCountOnly(f.goldSql) &&
    (f.goldRowCount === null || f.goldRowCount === 1)
  ) {
    out.push({
      kind: 'list-as-count',
      reason: `the question asks for a list ("${ASKS_LIST.exec(q)![0]!.trim()}") but the gold returns a COUNT`,
    });
  }
  const now = usesNow(f.goldSql);
  if (now)
    out.push({ kind: 'date-dependent', reason: `the gold uses ${now}: its answer changes with the date it is run` });
  if (f.goldOrderDependent)
    out.push({
      kind: 'order-dependent',
      reason: 'the gold returns other rows when SQLite reverses unordered selects: its verdicts depend on row order',
    });
  return out;
}
