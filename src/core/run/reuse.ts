/**
 * Reuse without changing a verdict. An RL run repeats itself: many samples of a question hold
 * the same SQL. Two items with the same database, the same gold and the same prediction (up to
 * what SQLite cannot see: surrounding whitespace and one trailing `;`) run the same two queries
 * on the same pristine database, so the second can take the first one's verdict. Not reused:
 * - SQL whose result can change between executions (NON_DETERMINISTIC below);
 * - SQL that may write (WRITES below), and any item whose first execution changed the database;
 * - timeouts and failures of the machine rather than of the SQL (a killed worker): only `ok`
 *   and SQLite's own errors (prefixed `prediction:` or `gold:`) are reused;
 * - R-VES runs: R-VES times each item itself.
 * A reused item keeps its own identity (index, sample, question id, difficulty, extraction) and
 * the first execution's time (`elapsedMs`): the time the same two queries took on this machine.
 */
import type { EvalOptions } from '../eval/executor.ts';
import type { EvalItem, ItemResult } from '../types.ts';
import { isOp, tokenizeSql } from '../sql/sql-tokens.ts';

/**
 * Functions and keywords whose value depends on when or how often the query runs, or on what
 * the connection did before: random(), randomblob(), the date and time functions with 'now'
 * (and without arguments), CURRENT_DATE / CURRENT_TIME / CURRENT_TIMESTAMP, changes(),
 * total_changes(), last_insert_rowid(). Read on tokens (src/core/rubric/sql-tokens.ts), so a
 * function name is found however SQLite lets it be spelled: any case, quoted (`"random"()`,
 * `[random]()`, `` `random`() ``), with comments before its parenthesis; 'now' as a string or
 * as a double-quoted name (SQLite reads an unknown "now" as the string); and never inside a
 * string or a comment.
 */
const VOLATILE_FUNCTIONS = new Set(['random', 'randomblob', 'changes', 'total_changes', 'last_insert_rowid']);
/** Date and time functions: non-deterministic with no argument (they mean 'now'). */
const CLOCK_FUNCTIONS = new Set(['date', 'time', 'datetime', 'julianday', 'unixepoch', 'strftime', 'timediff']);
const CLOCK_KEYWORDS = new Set(['current_date', 'current_time', 'current_timestamp']);
/**
 * Every name and string looked for below holds one of these, in some case, in the text itself
 * (a token's value is its text without quotes): a text with none of them is deterministic
 * without being tokenized (most are; every item's two texts are checked before a run starts).
 */
const HINT = /random|changes|last_insert_rowid|date|time|julianday|unixepoch|strftime|now/i;

export function isNonDeterministic(sql: string): boolean {
  if (!HINT.test(sql)) return false;
  const tokens = tokenizeSql(sql);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const name = t.kind === 'word' || t.kind === 'quoted' ? t.value.toLowerCase() : null;
    if ((t.kind === 'string' || (t.kind === 'quoted' && t.quote === '"')) && t.value.toLowerCase() === 'now')
      return true;
    if (name === null) continue;
    if (t.kind === 'word' && CLOCK_KEYWORDS.has(name)) return true;
    if (!isOp(tokens[i + 1], '(')) continue;
    if (VOLATILE_FUNCTIONS.has(name)) return true;
    if (CLOCK_FUNCTIONS.has(name) && isOp(tokens[i + 2], ')')) return true;
  }
  return false;
}

/** Statements that may change the database or the connection (conservative: anywhere in the text). */
export const WRITES =
  /\b(insert|update|delete|replace|drop|create|alter|attach|detach|pragma|vacuum|reindex|analyze|begin|commit|rollback|savepoint|release)\b/i;

/** The prediction as SQLite sees it: surrounding whitespace and one trailing `;` removed. */
export function normalizedSql(sql: string): string {
  const t = sql.trim();
  return t.endsWith(';') ? t.slice(0, -1).trim() : t;
}

/** Whether an item's verdict may be shared with identical items at all. */
export function reusable(item: EvalItem): boolean {
  const texts = [item.predSql, item.goldSql];
  return !texts.some((t) => isNonDeterministic(t) || WRITES.test(t));
}

/** Whether an executed item's verdict is one its duplicates would get too. */
export function shareable(r: ItemResult): boolean {
  if (r.mutatedDb) return false;
  if (r.status === 'ok') return true;
  return r.status === 'error' && r.error !== null && /^(prediction|gold): /.test(r.error);
}

export function reuseKey(item: EvalItem): string {
  return `${item.dbId}\u0000${item.goldSql}\u0000${normalizedSql(item.predSql)}`;
}

export interface ReusePlan {
  /** Items to execute: one per distinct key, plus every item that cannot be shared. */
  first: EvalItem[];
  /** Duplicates waiting for the item they copy (by reuse key). */
  waiting: Map<string, EvalItem[]>;
  /** The reuse key of each reusable item of `first` (its duplicates wait under it). */
  keyOf: Map<EvalItem, string>;
}

/** Splits items into those to execute and the duplicates of the reusable ones. */
export function planReuse(items: readonly EvalItem[], options: EvalOptions, enabled: boolean): ReusePlan {
  const first: EvalItem[] = [];
  const waiting = new Map<string, EvalItem[]>();
  const keyOf = new Map<EvalItem, string>();
  if (!enabled || options.metrics.includes('r-ves')) return { first: [...items], waiting, keyOf };
  for (const it of items) {
    if (!reusable(it)) {
      first.push(it);
      continue;
    }
    const key = reuseKey(it);
    const list = waiting.get(key);
    if (list) list.push(it);
    else {
      waiting.set(key, []);
      keyOf.set(it, key);
      first.push(it);
    }
  }
  return { first, waiting, keyOf };
}

/** The verdict of `from` for `item`: same scores, the item's own identity. */
export function copyResult(from: ItemResult, item: EvalItem): ItemResult {
  const r: ItemResult = {
    ...from,
    index: item.index,
    questionId: item.questionId,
    dbId: item.dbId,
    difficulty: item.difficulty,
    extraction: item.extraction,
  };
  if (item.sample !== undefined) r.sample = item.sample;
  else delete r.sample;
  return r;
}
