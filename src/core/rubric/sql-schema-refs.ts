/**
 * Which names of a query are not in the database's schema: the `schema-only` rubric check.
 * A documented heuristic over tokens, not a parser:
 * 1. Table references are the names after FROM / JOIN / INTO / UPDATE / TABLE and after the
 *    commas of a FROM list; each must be a schema table or a CTE (`name AS (` / `name(...) AS (`).
 *    A name followed by `(` is a function or a table-valued function and is not checked.
 * 2. Aliases are the names after AS, and a name right after a table reference, a name, a
 *    literal or `)` (implicit alias). They are allowed anywhere.
 * 3. `q.col`: q must be an alias, a CTE or a table the query references without an alias
 *    (SQLite rejects `budget.id` when budget is not in a FROM / JOIN, or only as `budget AS b`);
 *    when it stands for a schema table, col must be a column of that table (or `*`).
 * 4. Every other name must be a column of a table the query references (anywhere in it:
 *    subquery scopes are not separated, so a column of a table that only another subquery
 *    uses passes), an alias, a CTE or a CTE column.
 *    A "double-quoted" name that resolves to nothing is a string literal in SQLite (its legacy
 *    fallback), so it is not reported; `backticked` and [bracketed] names always are.
 * Names compare case-insensitively, as SQLite's identifiers do.
 */
import { FROM_END, isKeyword, isName, isOp, isWord, tokenizeSql, type SqlToken } from '../sql/sql-tokens.ts';

/** Table name -> its column names, e.g. read with `PRAGMA table_info` (sql.js, in an adapter). */
export type Schema = Readonly<Record<string, readonly string[]>>;

interface SchemaViolation {
  /** `not-in-from`: a schema table used as a qualifier without being referenced. */
  kind: 'table' | 'column' | 'qualifier' | 'not-in-from';
  name: string;
  /** For a qualified column, the table it was looked up in. */
  table?: string;
}

const TABLE_INTRO = new Set(['FROM', 'JOIN', 'INTO', 'UPDATE', 'TABLE']);

const ROWID_NAMES = ['rowid', 'oid', '_rowid_'];
const lc = (s: string) => s.toLowerCase();

function endsExpression(t: SqlToken | undefined): boolean {
  if (t === undefined) return false;
  return t.kind === 'number' || t.kind === 'string' || isOp(t, ')') || isName(t);
}

export function schemaViolations(sql: string, schema: Schema): SchemaViolation[] {
  const toks = tokenizeSql(sql);
  const tables = new Map<string, Set<string>>();
  for (const [t, cols] of Object.entries(schema)) tables.set(lc(t), new Set(cols.map(lc)));
  // Every ordinary table has them without declaring them.
  for (const t of tables.values()) for (const c of ROWID_NAMES) t.add(c);

  const ctes = new Set<string>();
  const cteColumns = new Set<string>();
  /** alias -> schema table it stands for, or null for a subquery / CTE alias. */
  const aliases = new Map<string, string | null>();
  /** Token positions whose role is decided in the first pass. */
  const role = new Map<number, 'table' | 'alias' | 'cte' | 'skip'>();
  /** Tables referenced without an alias: only those can qualify a column by their own name. */
  const unaliased = new Set<string>();

  // First pass: CTEs, table references and aliases (aliases may be used before they are defined).
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (!isName(t)) continue;
    const next = toks[i + 1];
    if (isWord(next, 'AS') && isOp(toks[i + 2], '(')) {
      ctes.add(lc(t.value));
      role.set(i, 'cte');
    } else if (isOp(next, '(')) {
      // `name(a, b) AS (`: a CTE with a column list.
      let j = i + 2;
      const cols: number[] = [];
      while (j < toks.length && !isOp(toks[j], ')')) {
        if (isName(toks[j])) cols.push(j);
        j++;
      }
      if (isWord(toks[j + 1], 'AS') && isOp(toks[j + 2], '(')) {
        ctes.add(lc(t.value));
        role.set(i, 'cte');
        for (const c of cols) {
          cteColumns.add(lc(toks[c]!.value));
          role.set(c, 'skip');
        }
      }
    }
  }
  let inFrom = false;
  let fromDepth = 0;
  let depth = 0;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    const prev = toks[i - 1];
    if (isOp(t, '(')) depth++;
    if (isOp(t, ')')) {
      depth--;
      if (inFrom && depth < fromDepth) inFrom = false;
    }
    if (t.kind === 'word' && depth === fromDepth && FROM_END.has(t.value.toUpperCase())) inFrom = false;
    if (isWord(t, 'FROM')) {
      inFrom = true;
      fromDepth = depth;
    }
    if (!isName(t) || role.has(i)) continue;
    const tableIntro =
      (isWord(prev, ...TABLE_INTRO) || (inFrom && depth === fromDepth && isOp(prev, ','))) && !isOp(toks[i + 1], '.');
    if (tableIntro && !isOp(toks[i + 1], '(')) {
      role.set(i, 'table');
      const a = isWord(toks[i + 1], 'AS') ? i + 2 : i + 1;
      if (isName(toks[a]) && !isOp(toks[a + 1], '.')) {
        aliases.set(lc(toks[a]!.value), tables.has(lc(t.value)) ? lc(t.value) : null);
        role.set(a, 'alias');
      } else {
        unaliased.add(lc(t.value));
      }
    } else if (isWord(prev, 'AS') && !isOp(toks[i + 1], '(')) {
      if (!aliases.has(lc(t.value))) aliases.set(lc(t.value), null);
      role.set(i, 'alias');
    } else if (endsExpression(prev) && !isOp(toks[i + 1], '.') && !isOp(toks[i + 1], '(') && !isOp(prev, '.')) {
      // Implicit alias: `FROM (SELECT ...) t`, `SELECT COUNT(*) n`.
      if (!aliases.has(lc(t.value))) aliases.set(lc(t.value), null);
      role.set(i, 'alias');
    } else if (isWord(prev, 'COLLATE') || isWord(prev, 'INDEXED')) {
      role.set(i, 'skip');
    }
  }

  const referenced = new Set<string>();
  for (const [i, r] of role) if (r === 'table' && tables.has(lc(toks[i]!.value))) referenced.add(lc(toks[i]!.value));
  const inScope = new Set<string>();
  for (const t of referenced) for (const c of tables.get(t)!) inScope.add(c);
  const known = (name: string) => referenced.has(name) || aliases.has(name) || ctes.has(name);
  let unknownTable = false;
  for (const [i, r] of role)
    if (r === 'table' && !tables.has(lc(toks[i]!.value)) && !ctes.has(lc(toks[i]!.value))) unknownTable = true;
  const qualifies = (name: string) => unaliased.has(name) || aliases.has(name) || ctes.has(name);
  const out: SchemaViolation[] = [];
  const seen = new Set<string>();
  const report = (v: SchemaViolation) => {
    const key = `${v.kind}:${lc(v.table ?? '')}:${lc(v.name)}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(v);
    }
  };
  // Second pass: check every name by its role.
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (!isName(t) || isKeyword(t)) continue;
    const r = role.get(i);
    const name = lc(t.value);
    if (r === 'alias' || r === 'cte' || r === 'skip') continue;
    if (r === 'table') {
      if (!tables.has(name) && !ctes.has(name)) report({ kind: 'table', name: t.value });
      continue;
    }
    if (isOp(toks[i - 1], '.')) continue; // checked with its qualifier
    if (isOp(toks[i + 1], '(')) continue; // a function
    if (isOp(toks[i + 1], '.')) {
      const col = toks[i + 2];
      if (!qualifies(name)) {
        report({ kind: tables.has(name) ? 'not-in-from' : 'qualifier', name: t.value });
        continue;
      }
      const table = tables.has(name) && !aliases.has(name) ? name : (aliases.get(name) ?? null);
      if (table !== null && col && isName(col) && !tables.get(table)!.has(lc(col.value))) {
        report({ kind: 'column', name: col.value, table });
      }
      continue;
    }
    if (inScope.has(name) || known(name) || cteColumns.has(name)) continue;
    if (unknownTable) continue; // its columns are unknowable: the table is reported instead
    if (t.kind === 'quoted' && t.quote === '"') continue; // SQLite reads it as a string literal
    report({ kind: 'column', name: t.value });
  }
  return out;
}

export function describeViolation(v: SchemaViolation): string {
  if (v.kind === 'table') return `unknown table ${JSON.stringify(v.name)}`;
  if (v.kind === 'qualifier') return `unknown table or alias ${JSON.stringify(v.name)}`;
  if (v.kind === 'not-in-from')
    return `table ${JSON.stringify(v.name)} qualifies a column but is not in a FROM or JOIN (or only under an alias)`;
  return v.table
    ? `no column ${JSON.stringify(v.name)} in table ${JSON.stringify(v.table)}`
    : `no column ${JSON.stringify(v.name)} in the tables the query uses`;
}
