/**
 * Which tables and columns a gold query reads: the targets of the reward-hacking probe's write
 * exploits. A heuristic over the rubric's tokenizer, not a parser (like sql-schema-refs.ts):
 * tables are the names after FROM / JOIN and the commas of a FROM list, minus CTEs and
 * table-valued functions; columns are `q.col` with q resolved through aliases, and bare names
 * that are not keywords, tables, aliases or functions. A name that is not really a column only
 * makes an exploit variant fail with an error, which counts as not won.
 */
import { FROM_END, isKeyword, isName, isOp, isWord, tokenizeSql, type SqlToken } from './sql-tokens.ts';

interface GoldReads {
  /** Tables in order of first reference, as written (case kept). */
  tables: string[];
  /** Columns per table, in order of first reference. */
  columns: Array<{ table: string; column: string }>;
}

const lc = (s: string) => s.toLowerCase();

export function goldReads(sql: string): GoldReads {
  const toks = tokenizeSql(sql);
  const ctes = new Set<string>();
  /** lower-case alias or table name -> table as written (null: a subquery or CTE alias). */
  const names = new Map<string, string | null>();
  const tables: string[] = [];
  const roles = new Map<number, 'table' | 'alias' | 'cte'>();

  // CTE names: `name AS (` or `name (cols) AS (`.
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i];
    if (!isName(t)) continue;
    let j = i + 1;
    if (isOp(toks[j], '(')) {
      while (j < toks.length && !isOp(toks[j], ')')) j++;
      j++;
    }
    if (
      isWord(toks[j], 'AS') &&
      isOp(toks[j + 1], '(') &&
      (isWord(toks[i - 1], 'WITH', 'RECURSIVE') || isOp(toks[i - 1], ','))
    ) {
      ctes.add(lc(t.value));
      roles.set(i, 'cte');
    }
  }

  const alias = (at: number, stands: string | null): number => {
    let j = at;
    if (isWord(toks[j], 'AS')) j++;
    const a = toks[j];
    if (isName(a) && !isOp(toks[j + 1], '(') && !isOp(toks[j + 1], '.')) {
      names.set(lc(a.value), stands);
      roles.set(j, 'alias');
      return j + 1;
    }
    return at;
  };

  let inFrom = false;
  let depth = 0;
  let fromDepth = -1;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (isOp(t, '(')) depth++;
    else if (isOp(t, ')')) {
      depth--;
      // `(SELECT ...) AS x`: an alias of a subquery.
      if (depth >= 0) alias(i + 1, null);
    }
    if (isWord(t, 'FROM') || isWord(t, 'JOIN')) {
      inFrom = true;
      fromDepth = depth;
    } else if (inFrom && depth === fromDepth && t.kind === 'word' && FROM_END.has(t.value.toUpperCase())) {
      inFrom = false;
    }
    const prev = toks[i - 1];
    const introduces = isWord(prev, 'FROM', 'JOIN') || (inFrom && depth === fromDepth && isOp(prev, ','));
    if (!introduces || !isName(t) || isOp(toks[i + 1], '(')) continue;
    const name = t.value;
    if (ctes.has(lc(name))) {
      names.set(lc(name), null);
      roles.set(i, 'cte');
      alias(i + 1, null);
      continue;
    }
    roles.set(i, 'table');
    if (!tables.some((x) => lc(x) === lc(name))) tables.push(name);
    if (!names.has(lc(name))) names.set(lc(name), name);
    alias(i + 1, name);
  }

  const columns: GoldReads['columns'] = [];
  const add = (table: string, column: string) => {
    if (!columns.some((c) => lc(c.table) === lc(table) && lc(c.column) === lc(column))) columns.push({ table, column });
  };
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (roles.has(i) || !isName(t)) continue;
    const prev = toks[i - 1];
    if (isWord(prev, 'AS')) continue; // a result alias
    if (isOp(toks[i + 1], '(')) continue; // a function
    if (isOp(toks[i + 1], '.')) {
      const col = toks[i + 2];
      const table = names.get(lc(t.value));
      if (table && col && (isName(col) || isKeyword(col))) add(table, col.value);
      continue;
    }
    if (isOp(prev, '.')) continue; // handled with its qualifier
    if (names.has(lc(t.value)) || ctes.has(lc(t.value))) continue;
    if (t.kind === 'quoted' && t.quote === '"' && !looksLikeColumn(toks, i)) continue;
    // Unqualified: a column of one of the tables (which one is unknown without the schema).
    for (const table of tables) add(table, t.value);
  }
  return { tables, columns };
}

/** A "double-quoted" token right after a comparison is likely a string literal (SQLite's fallback). */
function looksLikeColumn(toks: SqlToken[], i: number): boolean {
  const prev = toks[i - 1];
  return !(prev?.kind === 'op' && ['=', '==', '<>', '!=', '<', '>', '<=', '>='].includes(prev.value));
}

/** `"name"` with embedded quotes doubled: safe in any SQLite identifier position. */
export function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
