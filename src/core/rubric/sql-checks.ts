/**
 * Programmatic rubric checks for text-to-SQL, computed from a sample's execution result and
 * light analysis of its SQL. Pure: the execution happened before (sql.js worker), the schema
 * was read by an adapter. A check that lacks what it needs is `not-applicable`, not failed.
 */
import type { ItemStatus } from '../types.ts';
import type { SqlRubricCheck } from './model.ts';
import { evidenceFormulas, missingFromQuery } from './sql-evidence.ts';
import { describeViolation, schemaViolations, type Schema } from './sql-schema-refs.ts';
import { isConstantAnswer } from '../sql/constant-answer.ts';
import { isOp, isWord, tokenizeSql } from '../sql/sql-tokens.ts';

export type { Schema } from './sql-schema-refs.ts';

/** What the executor reported for the sample (ItemResult, plus the column counts of ExecDone). */
export interface SqlExecutionFacts {
  status: ItemStatus;
  ex: 0 | 1;
  /** `prediction: ...` or `gold: ...` for status `error`. */
  error: string | null;
  mutatedDb: boolean;
  /** Columns of the predicted / gold result (ExecDone `predColumns.length`), when known. */
  predColumnCount?: number | null;
  goldColumnCount?: number | null;
}

/** The execution facts of a result that may carry column counts (a sample record, a playground attempt). */
export function executionFacts(r: SqlExecutionFacts): SqlExecutionFacts {
  const { status, ex, error, mutatedDb, predColumnCount = null, goldColumnCount = null } = r;
  return { status, ex, error, mutatedDb, predColumnCount, goldColumnCount };
}

export interface SqlCheckInput {
  /** The SQL extracted from the completion. */
  sql: string;
  execution?: SqlExecutionFacts | null;
  schema?: Schema | null;
  /** BIRD evidence of the question. */
  evidence?: string | null;
}

export interface CheckOutcome {
  status: 'ok' | 'not-applicable';
  met: boolean | null;
  explanation: string;
}

const ok = (met: boolean, explanation: string): CheckOutcome => ({ status: 'ok', met, explanation });
const na = (explanation: string): CheckOutcome => ({ status: 'not-applicable', met: null, explanation });

/** Statement keywords that write to the database or the connection. */
const WRITE_KEYWORDS = new Set([
  'INSERT',
  'UPDATE',
  'DELETE',
  'DROP',
  'CREATE',
  'ALTER',
  'ATTACH',
  'DETACH',
  'VACUUM',
  'REINDEX',
  'PRAGMA',
]);

/** Write keywords found as code (not in strings or quoted names). `REPLACE(` is the function. */
export function writeKeywords(sql: string): string[] {
  const toks = tokenizeSql(sql);
  const found = toks
    .filter(
      (t, i) =>
        t.kind === 'word' &&
        (WRITE_KEYWORDS.has(t.value.toUpperCase()) || (isWord(t, 'REPLACE') && !isOp(toks[i + 1], '('))),
    )
    .map((t) => t.value.toUpperCase());
  return [...new Set(found)];
}

function predictionFailed(e: SqlExecutionFacts): boolean {
  return e.status === 'timeout' || (e.status === 'error' && !(e.error ?? '').startsWith('gold:'));
}

export function runSqlCheck(check: SqlRubricCheck, input: SqlCheckInput): CheckOutcome {
  const e = input.execution ?? null;
  switch (check.name) {
    case 'matches-gold':
      // Exactly the EX reward, including 0 for errors and timeouts; a missing database was
      // never run, so it is not scored (never a silent EX 0).
      if (!e) return na('no execution result for this sample');
      if (e.status === 'missing-db') return na('the database is missing: the sample was not scored');
      return ok(
        e.ex === 1,
        e.ex === 1
          ? 'the result equals the gold result (EX = 1)'
          : `EX = 0 (${e.status}${e.error ? `: ${e.error}` : ''})`,
      );
    case 'executes':
      if (!e) return na('no execution result for this sample');
      if (e.status === 'missing-db') return na('the database is missing, the query was not run');
      if (predictionFailed(e))
        return ok(false, e.status === 'timeout' ? 'the query timed out' : `the query failed: ${e.error}`);
      return ok(true, 'the query ran without error');
    case 'no-write': {
      const words = writeKeywords(input.sql);
      if (e?.mutatedDb) return ok(false, 'the query changed the database');
      if (words.length) return ok(false, `the query contains ${words.join(', ')}`);
      return ok(true, e ? 'no write keyword, and the database was not changed' : 'no write keyword (not executed)');
    }
    case 'schema-only': {
      if (!input.schema) return na('no schema for this database');
      // Naming nothing is not grounding: a constant answer would otherwise tick this vacuously.
      if (isConstantAnswer(input.sql))
        return ok(
          false,
          'the query reads no table of the database (a constant answer): nothing is grounded in the schema',
        );
      const v = schemaViolations(input.sql, input.schema);
      return v.length
        ? ok(false, v.map(describeViolation).join('; '))
        : ok(true, 'every table and column is in the schema');
    }
    case 'uses-evidence-formula': {
      if (!input.evidence) return na('the question has no evidence');
      const formulas = evidenceFormulas(input.evidence, input.schema);
      if (formulas.length === 0) return na('the evidence gives no `name = formula`');
      const missing = formulas.flatMap((f) => missingFromQuery(f, input.sql).map((m) => `${m} (from "${f.text}")`));
      return missing.length
        ? ok(false, `missing ${missing.join('; ')}`)
        : ok(true, 'uses the operators, functions and columns of the evidence formula');
    }
    case 'column-count': {
      if (!e) return na('no execution result for this sample');
      if (e.status === 'missing-db') return na('the database is missing, the query was not run');
      if (predictionFailed(e)) return ok(false, 'the query did not run, so it returned no columns');
      const expected = check.expected ?? e.goldColumnCount ?? null;
      const got = e.predColumnCount ?? null;
      if (expected === null) return na('the number of columns asked for is unknown (gold columns not reported)');
      if (got === null) return na('the number of returned columns was not reported');
      return ok(got === expected, `${got} column(s) returned, ${expected} asked for`);
    }
  }
}
