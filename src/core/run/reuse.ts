/**
 * Reuse without changing a verdict. An RL run repeats itself: many samples of a question hold
 * the same SQL. Two items with the same database, the same gold and the same prediction (up to
 * what SQLite's tokenizer cannot see: its whitespace around the text, normalizedSql below) run
 * the same two queries on the same pristine database, so the second can take the first one's
 * verdict. Not reused:
 * - SQL whose result may change between executions: anything but the calls and keywords
 *   isNonDeterministic below allows;
 * - SQL that may write (WRITES below), and any item whose first execution changed the database;
 * - any item executed on a database that holds a view which is not deterministic
 *   (viewIsNonDeterministic: `SELECT * FROM v` reads `random()` when v does);
 * - timeouts and failures of the machine rather than of the SQL (a killed worker): only `ok`
 *   and SQLite's own errors (prefixed `prediction:` or `gold:`) are reused;
 * - R-VES runs: R-VES times each item itself.
 * A reused item keeps its own identity (index, sample, question id, difficulty, extraction) and
 * the first execution's time (`elapsedMs`): the time the same two queries took on this machine.
 */
import type { EvalOptions } from '../eval/executor.ts';
import type { EvalItem, ItemResult } from '../types.ts';
import { isOp, isWord, tokenizeSql, type SqlToken } from '../sql/sql-tokens.ts';

/**
 * SQLite's built-in functions whose result is fixed by their arguments (aggregates and window
 * functions: by their rows, in the order the query gives them, which the database's bytes and
 * the SQLite version decide; both are in the cache's key). From sqlite.org's lang_corefunc,
 * lang_aggfunc, lang_mathfunc, windowfunctions and json1. Not here, so never reused or cached:
 * random(), randomblob(), changes(), total_changes(), last_insert_rowid(), sqlite_version()
 * and the other sqlite_* functions, load_extension(), every date and time function (date,
 * time, datetime, julianday, unixepoch, strftime, timediff) in every arity (a value 'now' may
 * come from a column as well as from the text), and any name SQLite does not define.
 */
export const DETERMINISTIC_FUNCTIONS: ReadonlySet<string> = new Set(
  // core scalar functions
  (
    'abs char coalesce concat concat_ws format glob hex if ifnull iif instr length like likelihood likely lower ' +
    'ltrim max min nullif octet_length printf quote replace round rtrim sign soundex substr substring subtype trim ' +
    'typeof unhex unicode unistr unistr_quote unlikely upper zeroblob ' +
    // aggregate functions
    'avg count group_concat string_agg sum total ' +
    // math functions
    'acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2 mod pi pow ' +
    'power radians sin sinh sqrt tan tanh trunc ' +
    // window functions
    'row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value ' +
    // JSON functions (json_each and json_tree are table-valued)
    'json jsonb json_array jsonb_array json_array_length json_error_position json_extract jsonb_extract ' +
    'json_insert jsonb_insert json_array_insert jsonb_array_insert json_object jsonb_object json_patch jsonb_patch ' +
    'json_pretty json_remove jsonb_remove json_replace jsonb_replace json_set jsonb_set json_type json_valid ' +
    'json_quote json_group_array jsonb_group_array json_group_object jsonb_group_object json_each json_tree'
  ).split(' '),
);

/**
 * Keywords that stand before a parenthesis without naming a function: `IN (`, `EXISTS (`,
 * `CAST (`, `VALUES (`, `USING (`, `OVER (`, `FILTER (`, `AS (` (a CTE or a window), and the
 * operators and clauses an expression in parentheses may follow. A keyword that is also a
 * function's name (REPLACE, LIKE, GLOB, IF) is read as that function; any other keyword before
 * `(` (MATCH, REGEXP, RAISE, LEFT ...) is read as an unknown function.
 */
const NOT_A_CALL: ReadonlySet<string> = new Set(
  (
    'AND OR NOT IN IS EXISTS CAST VALUES USING OVER FILTER AS SELECT DISTINCT ALL WHERE ON FROM JOIN WHEN THEN ' +
    'ELSE CASE BETWEEN HAVING BY UNION EXCEPT INTERSECT LIMIT OFFSET MATERIALIZED ESCAPE'
  ).split(' '),
);
const CLOCK_KEYWORDS: ReadonlySet<string> = new Set(['CURRENT_DATE', 'CURRENT_TIME', 'CURRENT_TIMESTAMP']);
/** Strings the date and time functions read as the clock or the machine's time zone. */
const CLOCK_STRINGS = /^\s*(now|localtime|utc)\s*$/i;
/** A text with none of these holds no call, no clock keyword and no clock string. */
const HINT = /\(|current_|now|localtime|utc/i;
/**
 * Texts the quick reading (quickDeterministic) leaves to the tokens: comments, a quoted name
 * before `(`, and the clock's words anywhere (in a string or not).
 */
const UNSURE = /--|\/\*|["`\]]\s*\(|current_|now|localtime|utc/i;
const NAME_THEN_PAREN = /([A-Za-z_][A-Za-z0-9_$]*)\s*\(/g;

/** SQLite folds names to lower case for ASCII letters only. */
const asciiLower = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
const asciiUpper = (s: string) => s.replace(/[a-z]+/g, (m) => m.toUpperCase());

/** Index of the `)` that closes the `(` at `open`, or the number of tokens when none does. */
function closing(tokens: readonly SqlToken[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (isOp(tokens[i], '(')) depth++;
    else if (isOp(tokens[i], ')') && --depth === 0) return i;
  }
  return tokens.length;
}

/**
 * The `(` of CTE column lists (`WITH x(a, b) AS (...)`, `WITH RECURSIVE ..., y(c) AS ...`):
 * a name before them is a table's, not a function's. Read as SQLite's grammar reads a WITH
 * clause; where the text does not follow it, nothing more is marked (its parentheses are then
 * read as calls: at worst a deterministic text is not reused).
 */
function cteColumnLists(tokens: readonly SqlToken[]): Set<number> {
  const lists = new Set<number>();
  for (let i = 0; i < tokens.length; i++) {
    if (!isWord(tokens[i], 'WITH')) continue;
    let j = isWord(tokens[i + 1], 'RECURSIVE') ? i + 2 : i + 1;
    for (;;) {
      const name = tokens[j];
      if (name === undefined || !(name.kind === 'word' || name.kind === 'quoted' || name.kind === 'string')) break;
      j++;
      if (isOp(tokens[j], '(')) {
        const end = closing(tokens, j);
        if (!isWord(tokens[end + 1], 'AS')) break;
        lists.add(j);
        j = end + 1;
      }
      if (!isWord(tokens[j], 'AS')) break;
      j++;
      if (isWord(tokens[j], 'NOT')) j++;
      if (isWord(tokens[j], 'MATERIALIZED')) j++;
      if (!isOp(tokens[j], '(')) break;
      j = closing(tokens, j) + 1;
      if (!isOp(tokens[j], ',')) break;
      j++;
    }
  }
  return lists;
}

/**
 * The function a `(` after `before` calls, or null when it calls none. SQLite calls a function
 * only after a name: a word that is not one of NOT_A_CALL's keywords, or a quoted identifier
 * (`"random"()`, `[random]()`, `` `random`() ``, any case). After an operator, a number, a
 * string, a parameter or nothing, a parenthesis groups, holds a subquery or a row value.
 */
function calledName(before: SqlToken | undefined): string | null {
  if (before?.kind === 'quoted') return asciiLower(before.value);
  if (before?.kind !== 'word' || NOT_A_CALL.has(asciiUpper(before.value))) return null;
  return asciiLower(before.value);
}

/**
 * True when a text is deterministic by a reading without tokens: no comment, no quoted name
 * before a parenthesis, none of the clock's words, and every name before a `(` anywhere in the
 * text (in a string too) one that calledName would allow. Every call SQLite could make is such
 * a name, so this is never more lenient than the tokens; false only means "read the tokens".
 */
function quickDeterministic(sql: string): boolean {
  if (UNSURE.test(sql)) return false;
  for (const m of sql.matchAll(NAME_THEN_PAREN)) {
    const name = m[1]!;
    if (!NOT_A_CALL.has(asciiUpper(name)) && !DETERMINISTIC_FUNCTIONS.has(asciiLower(name))) return false;
  }
  return true;
}

function scanNonDeterministic(sql: string): boolean {
  const tokens = tokenizeSql(sql);
  const columnLists = cteColumnLists(tokens);
  // Open parentheses: whether each is a CAST's, and whether its AS (a type name follows) was seen.
  const open: Array<{ cast: boolean; as: boolean }> = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    // A double-quoted name that names no column is a string to SQLite (its legacy rule).
    if ((t.kind === 'string' || (t.kind === 'quoted' && t.quote === '"')) && CLOCK_STRINGS.test(t.value)) return true;
    if (t.kind === 'word') {
      const word = asciiUpper(t.value);
      if (CLOCK_KEYWORDS.has(word)) return true;
      const top = open[open.length - 1];
      if (word === 'AS' && top?.cast) top.as = true;
    } else if (isOp(t, '(')) {
      const top = open[open.length - 1];
      // `CAST(x AS DECIMAL(10, 2))`: the parenthesis of a type name.
      const typeName = top !== undefined && top.cast && top.as;
      open.push({ cast: isWord(tokens[i - 1], 'CAST'), as: false });
      if (typeName || columnLists.has(i)) continue;
      const name = calledName(tokens[i - 1]);
      if (name !== null && !DETERMINISTIC_FUNCTIONS.has(name)) return true;
    } else if (isOp(t, ')')) {
      open.pop();
    }
  }
  return false;
}

/** The last texts decided (an RL run asks about the same gold for each of its samples). */
const decided = new Map<string, boolean>();
const DECIDED_MAX = 4096;

/**
 * Whether the result of `sql` may change from one execution to the next (or with the machine's
 * time zone): true unless every function it calls is one of DETERMINISTIC_FUNCTIONS and it
 * holds neither CURRENT_DATE / CURRENT_TIME / CURRENT_TIMESTAMP nor a string 'now',
 * 'localtime' or 'utc'. Read on tokens (src/core/sql/sql-tokens.ts): names in strings and
 * comments are not calls, comments between a name and its parenthesis are skipped. Where the
 * reading is unsure the answer is true: a false "non-deterministic" costs an execution, a false
 * "deterministic" a wrong verdict.
 */
export function isNonDeterministic(sql: string): boolean {
  if (!HINT.test(sql)) return false;
  let answer = decided.get(sql);
  if (answer === undefined) {
    answer = !quickDeterministic(sql) && scanNonDeterministic(sql);
    if (decided.size >= DECIDED_MAX) decided.clear();
    decided.set(sql, answer);
  }
  return answer;
}

/**
 * Whether a view, by its definition as sqlite_master keeps it (`CREATE VIEW v(a, b) AS SELECT
 * ...`), may give other rows from one read to the next: isNonDeterministic on the query after
 * the first `AS` outside parentheses (a column list `v(a, b)` names no function). A text read
 * otherwise is not deterministic. A query that reads such a view is not deterministic either,
 * whatever its own text: the executor reports each item run on such a database
 * (ItemResult.nondeterministicView), and its verdict is neither shared nor cached.
 */
export function viewIsNonDeterministic(createSql: string): boolean {
  let depth = 0;
  for (const t of tokenizeSql(createSql)) {
    if (isOp(t, '(')) depth++;
    else if (isOp(t, ')')) depth--;
    else if (depth === 0 && isWord(t, 'AS')) return isNonDeterministic(createSql.slice(t.start + t.text.length));
  }
  return true;
}

/** Statements that may change the database or the connection (conservative: anywhere in the text). */
export const WRITES =
  /\b(insert|update|delete|replace|drop|create|alter|attach|detach|pragma|vacuum|reindex|analyze|begin|commit|rollback|savepoint|release)\b/i;

/** SQLite's whitespace (its tokenizer's CC_SPACE): nothing else, no \v, no Unicode space. */
const isSqliteSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r';
/** sqlite3Isspace, which ends a `$name(...)` parameter: SQLite's whitespace and \v. */
const isCtypeSpace = (c: string | undefined) => isSqliteSpace(c) || c === '\v';
/** SQLite's identifier characters: ASCII letters, digits, `_`, `$` and every non-ASCII character. */
const isIdChar = (c: string | undefined) => c !== undefined && (/[A-Za-z0-9_$]/.test(c) || c >= '\u0080');

/**
 * Whether the end of `sql` lies inside a string, a quoted name or a comment, read as SQLite's
 * tokenizer reads it (its identifiers, numbers and `$name(...)` parameters swallow what they
 * hold, quotes included). Whitespace at the end of an unterminated string is part of the token
 * SQLite's error quotes, so it is kept there.
 */
function endsInsideToken(sql: string): boolean {
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql[i]!;
    if (c === '\ufeff') {
      // A byte-order mark where a token starts is whitespace to SQLite (its CC_BOM).
      i++;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      for (;;) {
        j = sql.indexOf(c, j);
        if (j < 0) return true;
        if (sql[j + 1] !== c) break;
        j += 2;
      }
      i = j + 1;
    } else if (c === '[') {
      const j = sql.indexOf(']', i + 1);
      if (j < 0) return true;
      i = j + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const j = sql.indexOf('\n', i + 2);
      if (j < 0) return true;
      i = j + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const j = sql.indexOf('*/', i + 2);
      if (j < 0) return true;
      i = j + 2;
    } else if (c === '$' || c === '@' || c === ':' || c === '#') {
      // sqlite3GetToken's CC_DOLLAR / CC_VARALPHA: a name, `::` inside it, and after it `(`
      // up to `)` or whitespace.
      let j = i + 1;
      let named = false;
      while (j < n) {
        const d = sql[j]!;
        if (isIdChar(d)) {
          named = true;
          j++;
        } else if (d === '(' && named) {
          j++;
          while (j < n && !isCtypeSpace(sql[j]) && sql[j] !== ')') j++;
          if (sql[j] === ')') j++;
          break;
        } else if (d === ':' && sql[j + 1] === ':') {
          j += 2;
        } else break;
      }
      i = j;
    } else if (isIdChar(c)) {
      // An identifier, a keyword or a number: a run of identifier characters.
      let j = i + 1;
      while (j < n && isIdChar(sql[j])) j++;
      i = j;
    } else {
      i++;
    }
  }
  return false;
}

/**
 * The prediction as the key of reuse and of the verdict cache: without the whitespace SQLite's
 * tokenizer skips before it and after it (space, \t, \n, \f, \r: not \v, U+00A0, U+3000 or any
 * other character JavaScript's trim() removes, which SQLite reads as part of a token or
 * rejects), and nothing else. The end keeps its whitespace when it lies inside an unterminated
 * string or name (SQLite's error quotes that token whole). Comments and a trailing `;` are kept:
 * `SELECT 1 --c` and `SELECT 1` may differ in a result's column names only, but `;` after a
 * comment or after `;` is a second statement to Python, `SELECT * FROM;` and `SELECT * FROM`
 * fail with different messages, and a comment may hold what the worker refuses (a NUL). A
 * byte-order mark (U+FEFF) is whitespace to SQLite only where a token starts (and never to
 * Python's check of what follows a statement): it is kept too. Two texts with the same
 * normalized form are the same tokens for SQLite; a text kept apart costs an execution only.
 */
export function normalizedSql(sql: string): string {
  let start = 0;
  while (start < sql.length && isSqliteSpace(sql[start])) start++;
  let end = sql.length;
  if (end > start && isSqliteSpace(sql[end - 1]) && !endsInsideToken(sql)) {
    while (end > start && isSqliteSpace(sql[end - 1])) end--;
  }
  return start === 0 && end === sql.length ? sql : sql.slice(start, end);
}

/** Whether an item's verdict may be shared with identical items at all. */
export function reusable(item: EvalItem): boolean {
  const texts = [item.predSql, item.goldSql];
  return !texts.some((t) => isNonDeterministic(t) || WRITES.test(t));
}

/** Whether an executed item's verdict is one its duplicates would get too. */
export function shareable(r: ItemResult): boolean {
  if (r.mutatedDb || r.nondeterministicView !== undefined) return false;
  if (r.status === 'ok') return true;
  return r.status === 'error' && r.error !== null && /^(prediction|gold): /.test(r.error);
}

export function reuseKey(item: EvalItem): string {
  return `${item.dbId}\u0000${item.goldSql}\u0000${normalizedSql(item.predSql)}`;
}

interface ReusePlan {
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
