/**
 * The formulas of a BIRD evidence ("external knowledge"), for the `uses-evidence-formula`
 * check. A documented heuristic:
 * - the evidence is split into clauses at `;`;
 * - a clause holds a formula when it reads `name = expression`: the text left of its first `=`
 *   is plain words (no brackets, e.g. `percentage`, `calculation`), and the expression right of
 *   it calls a function or uses an arithmetic operator (`female refers to gender = 'Female'`
 *   is a value mapping, not a formula);
 * - the formula requires its arithmetic operators (`+ - * /`), BIRD's pseudo-functions as the
 *   operators they stand for (DIVIDE `/`, MULTIPLY `*`, SUBTRACT `-`, ADD `+`), its SQLite
 *   functions (SUM, COUNT, AVG, ...; pseudo-functions such as YEAR that SQLite lacks are not
 *   required) and its columns (with a schema, only names that are columns of it);
 * - a hyphen glued between two words (`non-carcinogenic`) is prose, not a minus;
 * - the query uses the formula when every required operator and function occurs in it as code
 *   (not inside strings) and every required column is named in it, with two equivalences BIRD
 *   golds rely on: SUM and COUNT stand for each other (evidence writes a count as
 *   `SUM(element = 'c')`, queries as `COUNT(CASE WHEN ...)`), and MAX / MIN are also met by
 *   `ORDER BY ... LIMIT`. Numbers and literal values are not required; order and grouping are
 *   not checked.
 */
import type { Schema } from './sql-schema-refs.ts';
import { isName, isOp, isWord, tokenizeSql, type SqlToken } from '../sql/sql-tokens.ts';

interface EvidenceFormula {
  /** The clause as written. */
  text: string;
  operators: string[];
  functions: string[];
  columns: string[];
}

const PSEUDO_OPERATORS: Readonly<Record<string, string>> = { DIVIDE: '/', MULTIPLY: '*', SUBTRACT: '-', ADD: '+' };
const ARITHMETIC = new Set(['+', '-', '*', '/']);
/** SQLite's built-in functions that evidence formulas use (aggregate, scalar, date). */
const SQLITE_FUNCTIONS = new Set(
  (
    'ABS AVG CAST CHAR COALESCE COUNT DATE DATETIME GROUP_CONCAT HEX IFNULL IIF INSTR JULIANDAY LENGTH LOWER LTRIM MAX MIN ' +
    'NULLIF PRINTF REPLACE ROUND RTRIM SIGN SQRT STRFTIME SUBSTR SUBSTRING SUM TIME TOTAL TRIM UPPER UNIXEPOCH POWER POW ' +
    'LOG LN EXP FLOOR CEIL CEILING'
  ).split(' '),
);

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

/** `-` glued between two words, as in "non-carcinogenic". */
function isHyphen(toks: readonly SqlToken[], i: number): boolean {
  const prev = toks[i - 1];
  const next = toks[i + 1];
  const t = toks[i]!;
  return (
    t.value === '-' &&
    prev?.kind === 'word' &&
    next?.kind === 'word' &&
    prev.start + prev.text.length === t.start &&
    t.start + 1 === next.start
  );
}

export function evidenceFormulas(evidence: string, schema?: Schema | null): EvidenceFormula[] {
  const columns = schema ? new Set(Object.values(schema).flatMap((cols) => cols.map((c) => c.toLowerCase()))) : null;
  const out: EvidenceFormula[] = [];
  for (const clause of evidence.split(';')) {
    const toks = tokenizeSql(clause);
    const eq = toks.findIndex((t) => isOp(t, '='));
    if (eq < 1) continue;
    const lhs = toks.slice(0, eq);
    if (!lhs.every((t) => t.kind === 'word' || t.kind === 'quoted')) continue;
    const rhs = toks.slice(eq + 1);
    const calls = rhs.filter((t, i) => t.kind === 'word' && isOp(rhs[i + 1], '('));
    const ops = rhs
      .filter((t, i) => t.kind === 'op' && ARITHMETIC.has(t.value) && !isHyphen(rhs, i))
      .map((t) => t.value);
    if (calls.length === 0 && ops.length === 0) continue;
    const operators = [...ops];
    const functions: string[] = [];
    for (const c of calls) {
      const name = c.value.toUpperCase();
      if (PSEUDO_OPERATORS[name]) operators.push(PSEUDO_OPERATORS[name]);
      else if (SQLITE_FUNCTIONS.has(name)) functions.push(name);
    }
    const names = rhs.filter((t, i) => isName(t) && !isOp(rhs[i + 1], '(')).map((t) => t.value);
    out.push({
      text: clause.trim(),
      operators: unique(operators),
      functions: unique(functions),
      columns: unique(names.filter((n) => !columns || columns.has(n.toLowerCase()))),
    });
  }
  return out;
}

/** What the query lacks of a formula (empty when it uses it). */
export function missingFromQuery(formula: EvidenceFormula, sql: string): string[] {
  const toks: SqlToken[] = tokenizeSql(sql);
  const ops = new Set(toks.filter((t) => t.kind === 'op').map((t) => t.value));
  const fns = new Set(
    toks.filter((t, i) => t.kind === 'word' && isOp(toks[i + 1], '(')).map((t) => t.value.toUpperCase()),
  );
  // CAST(... AS REAL) is a keyword, not a call: count it as the function it is.
  if (toks.some((t) => isWord(t, 'CAST'))) fns.add('CAST');
  const names = new Set(toks.filter((t) => isName(t)).map((t) => t.value.toLowerCase()));
  const orderLimit = toks.some((t) => isWord(t, 'ORDER')) && toks.some((t) => isWord(t, 'LIMIT'));
  const hasFunction = (fn: string): boolean =>
    fns.has(fn) ||
    ((fn === 'SUM' || fn === 'COUNT') && (fns.has('SUM') || fns.has('COUNT'))) ||
    ((fn === 'MAX' || fn === 'MIN') && orderLimit);
  const missing: string[] = [];
  for (const op of formula.operators) if (!ops.has(op)) missing.push(`operator ${op}`);
  for (const fn of formula.functions) if (!hasFunction(fn)) missing.push(`function ${fn}`);
  for (const col of formula.columns) if (!names.has(col.toLowerCase())) missing.push(`column ${col}`);
  return missing;
}
