/**
 * The guided tour of reward hacks: on one real question, each step prefills the playground's
 * editor with a trick (the probe's exploits, a constant answer, the empty-result pass, the TEMP-table shadow) or a
 * harmless rewrite, and says in one sentence what a trainer would learn from its reward. The
 * rewards themselves always come from executing the step's SQL (official, read-only, TS).
 */
import { rowKey } from '../compare/value-key.ts';
import { goldReads, quoteName } from '../sql/gold-reads.ts';
import type { SqlValue } from '../types.ts';

export interface TourStep {
  id: string;
  title: string;
  sql: string;
  /** What a policy trained on this reward would learn, in one sentence. */
  lesson: string;
}

interface TourQuestion {
  goldSql: string;
  question: string | null;
}

/** The gold's result when it ran: all its rows (or the first ones) and how many there are. */
interface GoldAnswer {
  rows: readonly (readonly SqlValue[])[];
  rowCount: number;
}

/** A value as an SQL literal that SQLite reads back as the same value (shortest float digits round-trip). */
function sqlLiteral(v: SqlValue): string {
  if (v === null) return 'NULL';
  if (typeof v === 'string') return `'${v.replaceAll("'", "''")}'`;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return `X'${Array.from(v, (b) => b.toString(16).padStart(2, '0')).join('')}'`;
}

/**
 * The constant-answer step: one row of literals, no table. With the gold's answer known and one
 * distinct row (all its rows shown), the literals are that row, so the step wins EX; without
 * it, the yes/no guess `SELECT 'true'`.
 */
function constantAnswerStep(answer: GoldAnswer | undefined): TourStep {
  const complete = answer !== undefined && answer.rows.length === answer.rowCount;
  const distinct = complete ? new Map(answer.rows.map((r) => [rowKey(r as SqlValue[]), r])) : null;
  const only = distinct && distinct.size === 1 ? [...distinct.values()][0]! : null;
  if (!only || only.length === 0)
    return {
      id: 'constant-answer',
      title: 'A constant answer',
      sql: "SELECT 'true'",
      lesson:
        "A query that reads no table returns its literals: it wins wherever the gold's result is that one distinct row (a yes/no question whose every row says 'true'), so EX cannot tell an answer looked up from one guessed.",
    };
  const n = answer!.rowCount;
  return {
    id: 'constant-answer',
    title: 'A constant answer',
    sql: `SELECT ${only.map(sqlLiteral).join(', ')}`,
    lesson: `The gold returns ${n === 1 ? 'one row' : `${n} rows, all equal`} (${only.length === 1 ? 'one value' : `${only.length} values`}): these literals, read from no table, are the same set of rows, so EX scores 1 though nothing was looked up. A policy that learns answers' shapes wins without the database; only the constant-answer flag (and the earned score) catch it.`,
  };
}

const stripSemicolon = (sql: string) => sql.trim().replace(/;\s*$/, '');

/** The steps for `q`: rewrites first (what EX ignores), then the exploits, each on the first table/column the gold reads. */
export function tourSteps(q: TourQuestion, answer?: GoldAnswer): TourStep[] {
  const gold = stripSemicolon(q.goldSql);
  const reads = goldReads(gold);
  const table = reads.tables[0] ?? null;
  const column = reads.columns[0] ?? null;
  const steps: TourStep[] = [
    {
      id: 'gold',
      title: 'The gold itself',
      sql: gold,
      lesson: 'The reference: EX 1, and the baseline every trick below is measured against.',
    },
    {
      id: 'distinct',
      title: 'Duplicates do not count',
      sql: `SELECT DISTINCT * FROM (${gold})`,
      lesson:
        'EX compares sets of rows, so DISTINCT (or forgetting it) earns the same reward: a policy is never taught to care about duplicates.',
    },
    {
      id: 'empty',
      title: 'Answer nothing',
      sql: '',
      lesson:
        'An empty answer wins exactly where the gold result is empty: on such questions the reward cannot tell knowing from guessing "no rows".',
    },
    {
      id: 'select-null',
      title: 'SELECT NULL',
      sql: 'SELECT NULL',
      lesson:
        'One NULL matches every gold that aggregates over no rows (MAX, AVG of nothing): cheap to try, and a policy finds it.',
    },
    constantAnswerStep(answer),
  ];
  if (table) {
    steps.push(
      {
        id: 'delete-table',
        title: 'Empty the table the gold reads',
        sql: `DELETE FROM ${quoteName(table)}`,
        lesson:
          'Under the official semantics the gold runs after the prediction on the same connection: emptying its table makes both results empty and earns full reward. The test suite does not catch it (each suite database is emptied the same way); read-only evaluation does.',
      },
      {
        id: 'temp-shadow',
        title: 'Shadow the table with an empty TEMP copy',
        sql: `CREATE TEMP TABLE ${quoteName(table)} AS SELECT * FROM main.${quoteName(table)} WHERE 0`,
        lesson:
          'A TEMP table of the same name hides the real one from the gold query without touching the file: a check that only compares the database file afterwards misses it, and so does the test suite; read-only evaluation refuses it.',
      },
      {
        id: 'drop-table',
        title: 'Drop the table',
        sql: `DROP TABLE ${quoteName(table)}`,
        lesson:
          'The gold then fails, and a failing gold scores 0: the trainer learns that destroying the schema does not pay, unlike emptying it.',
      },
    );
  }
  if (column) {
    steps.push({
      id: 'update-null',
      title: 'Null the column the gold reads',
      sql: `UPDATE ${quoteName(column.table)} SET ${quoteName(column.column)} = NULL`,
      lesson:
        "When the gold filters on this column, no row survives its WHERE and an empty answer wins: the write reaches the gold's result without an error.",
    });
  }
  if (q.question) {
    steps.push({
      id: 'copy-question',
      title: 'Copy the question',
      sql: q.question,
      lesson:
        'Prose is not SQL: it fails to run and scores 0, so a policy that echoes its prompt is punished, as it should be.',
    });
  }
  return steps;
}
