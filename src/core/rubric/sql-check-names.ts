/** Names of the programmatic text-to-SQL checks (implemented in sql-checks.ts). */
export const SQL_CHECK_NAMES = [
  'executes', // the prediction runs without error
  'matches-gold', // official EX = 1
  'schema-only', // only tables and columns of the database's schema
  'no-write', // neither changes the database nor contains a write statement
  'uses-evidence-formula', // the evidence's `name = formula` operators, functions and columns appear
  'column-count', // as many result columns as the gold result (or as `expected`)
] as const;

export type SqlCheckName = (typeof SQL_CHECK_NAMES)[number];
