/**
 * Two attacks (a PRAGMA lowering the heap limit, and its EXPLAIN), in the SQL worker's body on real sql.js (in-process; the pool
 * tests run the same in worker threads): one execution never changes the limits or settings
 * another starts from, and memory-hungry statements end at the worker's stated bounds.
 */
import { describe, expect, it } from 'vitest';
import { HEAP_LIMIT, WRITE_BUDGET } from '../../workers/sql-engine.ts';
import { PRAGMAS, refusedPragma } from '../../workers/sql-pragmas.ts';
import type { ExecDone, ExecRequest } from '../../workers/sql.api.ts';
import { sqlEngineFixture } from '../helpers/sql-engine-fixture.ts';

const fx = sqlEngineFixture(
  'h',
  `CREATE TABLE hero (id INTEGER PRIMARY KEY, name TEXT, parent INTEGER REFERENCES hero(id));
    INSERT INTO hero VALUES (1, 'Ada', NULL), (2, 'bob', 1), (3, 'Cy', 2);
    CREATE TABLE n (i INTEGER); INSERT INTO n SELECT value FROM (WITH RECURSIVE c(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM c WHERE value < 2000) SELECT value FROM c);`,
  { softF1: false, previewRows: 5 },
);
const run = (predSql: string, goldSql = 'SELECT 1', extra: Partial<ExecRequest> = {}): Promise<ExecDone> =>
  fx.run(predSql, goldSql, extra);

/** A setting as the next item reads it (`PRAGMA x` as its prediction). */
async function reading(name: string): Promise<unknown> {
  const r = await run(`PRAGMA ${name}`);
  return r.predPreview[0]?.[0] ?? null;
}

describe('PRAGMAs that a re-open cannot undo are refused (docs/isolation.md)', () => {
  const spellings: [string, string][] = [
    ['plain', 'PRAGMA hard_heap_limit = 200000'],
    ['call form', 'PRAGMA hard_heap_limit(200000)'],
    ['schema-qualified', 'PRAGMA main.hard_heap_limit = 200000'],
    ['quoted', 'PRAGMA "hard_heap_limit" = 200000'],
    ['bracketed, upper case', 'pragma [HARD_HEAP_LIMIT]=200000'],
    ['after comments and an empty statement', '/* x */ ; -- y\n PRAGMA /* z */ hard_heap_limit = 200000'],
  ];
  it.each(spellings)(
    'PRAGMA hard_heap_limit, %s: an error naming it; the limit and the next items unchanged',
    async (_n, sql) => {
      expect(refusedPragma(sql)).toBe('hard_heap_limit');
      const r = await run(sql);
      expect(r.status).toBe('error');
      expect(r.error).toMatch(
        /^prediction: PRAGMA hard_heap_limit changes the state of the whole SQL worker, which the worker refuses/,
      );
      expect(await reading('hard_heap_limit')).toBe(HEAP_LIMIT);
      // A query that needs a few MiB of heap still runs.
      const big = await run(
        "SELECT length(group_concat(printf('%0100d', i))) FROM n, (SELECT 1 UNION ALL SELECT 2)",
        'SELECT 403999',
      );
      expect(big).toMatchObject({ status: 'ok', ex: 1 });
    },
  );

  it('in a gold, under --read-only too: a gold error (what gold-check reports)', async () => {
    const r = await run('SELECT 1', 'PRAGMA soft_heap_limit = 1000', { readOnly: true });
    expect(r.status).toBe('error');
    expect(r.error).toMatch(/^gold: PRAGMA soft_heap_limit changes the state of the whole SQL worker/);
    const p = await run('PRAGMA hard_heap_limit = 200000', 'SELECT 1', { readOnly: true });
    expect(p.error).toMatch(/^prediction: PRAGMA hard_heap_limit/);
    expect(await reading('hard_heap_limit')).toBe(HEAP_LIMIT);
  });

  it('reading a refused PRAGMA is allowed', async () => {
    expect(refusedPragma('PRAGMA hard_heap_limit')).toBeNull();
    expect(refusedPragma('SELECT * FROM pragma_hard_heap_limit')).toBeNull();
    expect(await reading('temp_store')).toBe(2);
    expect(await reading('journal_mode')).toBe('memory');
  });

  it.each(
    Object.entries(PRAGMAS)
      .filter(([, p]) => p.policy === 'refuse')
      .map(([n]) => n),
  )('PRAGMA %s = ... is refused', async (name) => {
    const before = await reading(name);
    const r = await run(`PRAGMA ${name} = 1`);
    expect(r.error).toContain(`PRAGMA ${name} `);
    expect(await reading(name)).toEqual(before);
  });

  // SQLite applies a PRAGMA's setting while it prepares it, so EXPLAIN does not stop it (
  // `EXPLAIN PRAGMA hard_heap_limit = 200000` took gpt-4o mini-dev EX from 77.14 to 52.14).
  const explainForms: [string, (name: string) => string][] = [
    ['EXPLAIN', (n) => `EXPLAIN PRAGMA ${n} = 1`],
    ['EXPLAIN QUERY PLAN', (n) => `EXPLAIN QUERY PLAN PRAGMA ${n} = 1`],
    ['EXPLAIN, a comment before PRAGMA', (n) => `EXPLAIN /* x */ PRAGMA ${n} = 1`],
    [
      'explain query plan, comments between every word, schema, call form',
      (n) => `;/*a*/ explain -- b\n query /**/ plan\t/* c */pragma /*d*/ main /*e*/./*f*/ "${n}" /*g*/ (1)`,
    ],
    ['EXPLAIN, a string name and ==', (n) => `EXPLAIN PRAGMA '${n}' == 1`],
  ];
  const refusedNames = Object.entries(PRAGMAS)
    .filter(([, p]) => p.policy === 'refuse')
    .map(([n]) => n);
  it.each(explainForms.flatMap(([form, sql]) => refusedNames.map((n) => [form, n, sql(n)] as const)))(
    '%s: PRAGMA %s is refused, the setting unchanged for the next item',
    async (_form, name, sql) => {
      expect(refusedPragma(sql)).toBe(name);
      const before = await reading(name);
      for (const readOnly of [false, true]) {
        const r = await run(sql, 'SELECT 1', { readOnly });
        expect(r.status).toBe('error');
        expect(r.error).toMatch(new RegExp(`^prediction: PRAGMA ${name} changes `));
        expect(r.retire).toBeUndefined();
      }
      expect(await reading(name)).toEqual(before);
      expect(await reading('hard_heap_limit')).toBe(HEAP_LIMIT);
    },
  );

  it('EXPLAIN of a reading PRAGMA or of a query is not refused', async () => {
    expect(refusedPragma('EXPLAIN PRAGMA hard_heap_limit')).toBeNull();
    expect(refusedPragma('EXPLAIN QUERY PLAN SELECT * FROM hero')).toBeNull();
    expect(refusedPragma('EXPLAIN QUERY SELECT 1')).toBeNull();
    expect(refusedPragma("SELECT 'EXPLAIN PRAGMA hard_heap_limit = 1'")).toBeNull();
    expect(await run('EXPLAIN QUERY PLAN SELECT * FROM hero', 'SELECT 1')).toMatchObject({ error: null });
  });

  it('a check of the worker that itself fails retires the worker (fail closed)', async () => {
    // A TEMP view shadowing a table the check reads makes the check fail (integer overflow).
    const r = await run(
      'CREATE TEMP VIEW pragma_soft_heap_limit AS SELECT abs(-9223372036854775807 - 1) AS x',
      'SELECT 1',
    );
    expect(r.retire).toMatch(/^the check of the worker's state around an execution failed \(integer overflow\)/);
    // A worker that could not be checked is replaced by the pool: it says so on every item.
    expect((await run('SELECT 1')).retire).toBe(r.retire);
  });

  it('the table covers every PRAGMA of this SQLite build', async () => {
    const r = await run('SELECT group_concat(name) FROM (SELECT name FROM pragma_pragma_list ORDER BY name)');
    const names = String(r.predPreview[0]![0]).split(',');
    expect(names.length).toBeGreaterThan(60);
    expect(names.filter((n) => !PRAGMAS[n])).toEqual([]);
  });
});

describe("per-connection PRAGMAs: allowed, seen by the same item's gold, reset before the next item", () => {
  // A value other than the default for each setting that takes one.
  const other: Record<string, string> = {
    threads: '4',
    mmap_size: '4096',
    cache_size: '7',
    cache_spill: '0',
    locking_mode: 'EXCLUSIVE',
    query_only: '1',
    writable_schema: '1',
    foreign_keys: '1',
    defer_foreign_keys: '1',
    recursive_triggers: '0',
    case_sensitive_like: '1',
    reverse_unordered_selects: '1',
    ignore_check_constraints: '1',
    legacy_alter_table: '1',
    automatic_index: '0',
    full_column_names: '1',
    short_column_names: '0',
    count_changes: '1',
    empty_result_callbacks: '1',
    read_uncommitted: '1',
    trusted_schema: '0',
    cell_size_check: '1',
    secure_delete: '1',
    synchronous: '0',
    fullfsync: '1',
    checkpoint_fullfsync: '1',
    busy_timeout: '99',
    wal_autocheckpoint: '7',
    journal_size_limit: '4096',
    analysis_limit: '7',
  };
  it('every per-connection PRAGMA of the table has a test value', () => {
    const conn = Object.entries(PRAGMAS)
      .filter(([, p]) => p.scope === 'connection')
      .map(([n]) => n)
      .sort();
    expect(Object.keys(other).sort()).toEqual(conn);
  });
  it.each(Object.entries(other))('PRAGMA %s = %s does not reach the next item', async (name, value) => {
    const before = await reading(name);
    const r = await run(`PRAGMA ${name} = ${value}`, `PRAGMA ${name}`);
    expect(r.error).toBeNull();
    expect(await reading(name)).toEqual(before);
  });
  it("case_sensitive_like changes the same item's gold (one connection, as official), not the next", async () => {
    const same = await run('PRAGMA case_sensitive_like = 1', "SELECT count(*) FROM hero WHERE name LIKE 'B%'");
    expect(same.goldPreview).toEqual([[0]]);
    const next = await run('SELECT 1', "SELECT count(*) FROM hero WHERE name LIKE 'B%'");
    expect(next.goldPreview).toEqual([[1]]);
  });
});

describe(`memory: the SQLite heap (${HEAP_LIMIT / 2 ** 20} MiB) and the write budget (${WRITE_BUDGET / 2 ** 20} MiB) bound every execution`, () => {
  const rows = (n: number) =>
    `(WITH RECURSIVE c(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM c WHERE v < ${n}) SELECT v FROM c)`;
  it('CREATE TABLE ... AS SELECT randomblob(1000) x 1,500,000 ends at the write budget, the worker is to be replaced, the next item scores', async () => {
    const r = await run(`CREATE TABLE big AS SELECT randomblob(1000) AS b FROM ${rows(1_500_000)}`);
    expect(r.status).toBe('error');
    expect(r.error).toBe(
      `prediction: database or disk is full: the write grew the database by more than the worker's ${WRITE_BUDGET / 2 ** 20} MiB write budget (docs/isolation.md)`,
    );
    expect(r.retire).toContain('write budget');
    expect(await run('SELECT count(*) FROM hero', 'SELECT 3')).toMatchObject({ status: 'ok', ex: 1 });
    expect((await run('SELECT 1')).retire).toBeUndefined();
  }, 120_000);
  it('a SELECT that sorts 1.5 GB ends at the heap budget (it no longer spills to the in-memory file system), under --read-only too', async () => {
    const r = await run(
      `SELECT count(*) FROM (SELECT randomblob(1000) AS b FROM ${rows(1_500_000)} ORDER BY b)`,
      'SELECT 1',
      { readOnly: true },
    );
    expect(r.status).toBe('error');
    expect(r.error).toMatch(/^prediction: out of memory: over the worker's 512 MiB SQLite heap budget/);
    expect(r.retire).toContain('heap budget');
    expect(await run('SELECT name FROM hero ORDER BY name', 'SELECT name FROM hero')).toMatchObject({
      status: 'ok',
      ex: 1,
    });
  }, 120_000);
  it('a TEMP table of 1.5 GB ends at the heap budget', async () => {
    const r = await run(`CREATE TEMP TABLE big AS SELECT randomblob(1000) AS b FROM ${rows(1_500_000)}`);
    expect(r.error).toMatch(/^prediction: out of memory: over the worker's 512 MiB SQLite heap budget/);
    expect(await run('SELECT count(*) FROM hero', 'SELECT 3')).toMatchObject({ status: 'ok', ex: 1 });
  }, 120_000);
  it('a write within the budget is seen by its gold as before', async () => {
    const r = await run(
      `CREATE TABLE mid AS SELECT randomblob(1000) AS b FROM ${rows(20_000)}`,
      'SELECT count(*) FROM mid',
    );
    expect(r).toMatchObject({ status: 'ok', mutatedDb: true, goldPreview: [[20000]] });
    expect((await run("SELECT count(*) FROM sqlite_master WHERE name = 'mid'", 'SELECT 0')).ex).toBe(1);
  }, 120_000);
});

describe('docs/isolation.md lists every PRAGMA with its policy', () => {
  it('one table row per PRAGMA of sql-pragmas.ts, refused exactly where the code refuses', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../../docs/isolation.md', import.meta.url), 'utf8');
    for (const [name, p] of Object.entries(PRAGMAS)) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
      expect(row, name).toBeDefined();
      expect(row!.includes('**refused**'), name).toBe(p.policy === 'refuse');
    }
  });
});
