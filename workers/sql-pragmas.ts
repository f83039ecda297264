/**
 * What each SQLite PRAGMA can do to the SQL worker, and what the worker does about it
 * (docs/isolation.md lists the same table with the reasons). Isolation is by construction:
 * - every statement that is not a query (a PRAGMA among them) marks the connection changed,
 *   so it is re-opened from the pristine bytes, with the worker's own settings, before the
 *   next item (sql-engine.ts); the same item's gold still sees it, as on the official
 *   evaluator's single connection;
 * - what a re-open cannot undo is refused before it runs: state of the whole worker
 *   (`process`: SQLite's heap limits, the temp directory) and the bounds the worker pins on
 *   every connection (`bound`: where temporary data lives, how far a database file may grow).
 *   A refused PRAGMA ends its item with an error naming it (in a gold: a gold error, which
 *   gold-check reports).
 * Only the setting form is refused (`PRAGMA x = v`, `PRAGMA x(v)`): reading a value is harmless.
 * PRAGMA table-valued functions (`pragma_hard_heap_limit()`) take no argument for a setting in
 * SQLite 3.54 ("too many arguments"), so they only read.
 */
import { isOp, isWord, sqlTokens, type SqlToken } from '../src/core/sql/sql-tokens.ts';

type PragmaScope = 'process' | 'bound' | 'connection' | 'file' | 'read';

interface PragmaPolicy {
  scope: PragmaScope;
  /** `refuse`: the setting form is an error; `reset`: allowed, undone by the re-open before the next item. */
  policy: 'refuse' | 'reset';
  reason: string;
}

const REOPEN = 'per connection: undone by the re-open before the next item';
const FILE = 'writes the database file (a write: mutated_db, the private copy is dropped)';
const READ = 'reads or checks only (an action at most): nothing to undo';

/** Every PRAGMA of SQLite 3.54 as built in sql.js 1.17 (`PRAGMA pragma_list`). */
export const PRAGMAS: Readonly<Record<string, PragmaPolicy>> = {
  hard_heap_limit: {
    scope: 'process',
    policy: 'refuse',
    reason:
      'the whole worker: SQLite lets it be lowered only, so no re-open and no later PRAGMA can restore it (every later item would run out of memory)',
  },
  soft_heap_limit: {
    scope: 'process',
    policy: 'refuse',
    reason: 'the whole worker (every connection), not undone by a re-open',
  },
  temp_store_directory: {
    scope: 'process',
    policy: 'refuse',
    reason: 'the whole worker (a global variable), not undone by a re-open',
  },
  temp_store: {
    scope: 'bound',
    policy: 'refuse',
    reason:
      'pinned to MEMORY: temporary tables, sorts and indexes then live in the bounded SQLite heap instead of the unbounded in-memory file system',
  },
  journal_mode: {
    scope: 'bound',
    policy: 'refuse',
    reason:
      'pinned to MEMORY: the rollback journal lives in the bounded SQLite heap instead of a file of the in-memory file system',
  },
  max_page_count: {
    scope: 'bound',
    policy: 'refuse',
    reason: 'pinned to the database size plus the write budget: the bound on how far a write grows the database file',
  },
  threads: {
    scope: 'connection',
    policy: 'reset',
    reason: `${REOPEN}; no effect in this build (MAX_WORKER_THREADS=0)`,
  },
  mmap_size: { scope: 'connection', policy: 'reset', reason: `${REOPEN}; no effect in this build (MAX_MMAP_SIZE=0)` },
  cache_size: {
    scope: 'connection',
    policy: 'reset',
    reason: `${REOPEN}; the page cache is inside the bounded SQLite heap`,
  },
  cache_spill: { scope: 'connection', policy: 'reset', reason: REOPEN },
  locking_mode: { scope: 'connection', policy: 'reset', reason: REOPEN },
  query_only: {
    scope: 'connection',
    policy: 'reset',
    reason: `${REOPEN}; read-only evaluation sets it again before each execution`,
  },
  writable_schema: {
    scope: 'connection',
    policy: 'reset',
    reason: `${REOPEN}; a change to the schema it allows is a write`,
  },
  foreign_keys: { scope: 'connection', policy: 'reset', reason: REOPEN },
  defer_foreign_keys: { scope: 'connection', policy: 'reset', reason: REOPEN },
  recursive_triggers: { scope: 'connection', policy: 'reset', reason: REOPEN },
  case_sensitive_like: { scope: 'connection', policy: 'reset', reason: REOPEN },
  reverse_unordered_selects: { scope: 'connection', policy: 'reset', reason: REOPEN },
  ignore_check_constraints: { scope: 'connection', policy: 'reset', reason: REOPEN },
  legacy_alter_table: { scope: 'connection', policy: 'reset', reason: REOPEN },
  automatic_index: { scope: 'connection', policy: 'reset', reason: REOPEN },
  full_column_names: { scope: 'connection', policy: 'reset', reason: REOPEN },
  short_column_names: { scope: 'connection', policy: 'reset', reason: REOPEN },
  count_changes: { scope: 'connection', policy: 'reset', reason: REOPEN },
  empty_result_callbacks: { scope: 'connection', policy: 'reset', reason: REOPEN },
  read_uncommitted: { scope: 'connection', policy: 'reset', reason: REOPEN },
  trusted_schema: { scope: 'connection', policy: 'reset', reason: REOPEN },
  cell_size_check: { scope: 'connection', policy: 'reset', reason: REOPEN },
  secure_delete: { scope: 'connection', policy: 'reset', reason: REOPEN },
  synchronous: { scope: 'connection', policy: 'reset', reason: REOPEN },
  fullfsync: { scope: 'connection', policy: 'reset', reason: REOPEN },
  checkpoint_fullfsync: { scope: 'connection', policy: 'reset', reason: REOPEN },
  busy_timeout: { scope: 'connection', policy: 'reset', reason: REOPEN },
  wal_autocheckpoint: { scope: 'connection', policy: 'reset', reason: REOPEN },
  journal_size_limit: { scope: 'connection', policy: 'reset', reason: REOPEN },
  analysis_limit: { scope: 'connection', policy: 'reset', reason: REOPEN },
  application_id: { scope: 'file', policy: 'reset', reason: FILE },
  user_version: { scope: 'file', policy: 'reset', reason: FILE },
  schema_version: { scope: 'file', policy: 'reset', reason: FILE },
  auto_vacuum: { scope: 'file', policy: 'reset', reason: FILE },
  page_size: { scope: 'file', policy: 'reset', reason: `${FILE} (only with a VACUUM after it)` },
  default_cache_size: { scope: 'file', policy: 'reset', reason: FILE },
  encoding: { scope: 'file', policy: 'reset', reason: `${FILE} (only on an empty database)` },
  incremental_vacuum: { scope: 'file', policy: 'reset', reason: FILE },
  optimize: { scope: 'file', policy: 'reset', reason: `${FILE} (it may run ANALYZE)` },
  wal_checkpoint: { scope: 'read', policy: 'reset', reason: READ },
  shrink_memory: { scope: 'read', policy: 'reset', reason: `${READ} (frees cache memory of this connection)` },
  integrity_check: { scope: 'read', policy: 'reset', reason: READ },
  quick_check: { scope: 'read', policy: 'reset', reason: READ },
  foreign_key_check: { scope: 'read', policy: 'reset', reason: READ },
  collation_list: { scope: 'read', policy: 'reset', reason: READ },
  compile_options: { scope: 'read', policy: 'reset', reason: READ },
  data_version: { scope: 'read', policy: 'reset', reason: READ },
  database_list: { scope: 'read', policy: 'reset', reason: READ },
  foreign_key_list: { scope: 'read', policy: 'reset', reason: READ },
  freelist_count: { scope: 'read', policy: 'reset', reason: READ },
  function_list: { scope: 'read', policy: 'reset', reason: READ },
  index_info: { scope: 'read', policy: 'reset', reason: READ },
  index_list: { scope: 'read', policy: 'reset', reason: READ },
  index_xinfo: { scope: 'read', policy: 'reset', reason: READ },
  module_list: { scope: 'read', policy: 'reset', reason: READ },
  page_count: { scope: 'read', policy: 'reset', reason: READ },
  pragma_list: { scope: 'read', policy: 'reset', reason: READ },
  table_info: { scope: 'read', policy: 'reset', reason: READ },
  table_list: { scope: 'read', policy: 'reset', reason: READ },
  table_xinfo: { scope: 'read', policy: 'reset', reason: READ },
};

/**
 * The PRAGMA a text sets that the worker refuses, or null. Reads the leading statement on the
 * shared SQL tokenizer (src/core/sql/sql-tokens.ts), so comments anywhere between its words,
 * empty statements before it, any case, quoted, bracketed or string names and a schema prefix
 * change nothing. `EXPLAIN` and `EXPLAIN QUERY PLAN` are seen through: SQLite applies a
 * PRAGMA's setting while it prepares the statement, so `EXPLAIN PRAGMA hard_heap_limit = 200000`
 * lowers the worker's limit as the PRAGMA alone does.
 */
export function refusedPragma(sql: string): string | null {
  const tokens = sqlTokens(sql);
  const next = (): SqlToken | undefined => tokens.next().value ?? undefined;
  let t = next();
  while (isOp(t, ';')) t = next();
  if (isWord(t, 'EXPLAIN')) {
    t = next();
    if (isWord(t, 'QUERY')) {
      if (!isWord(next(), 'PLAN')) return null;
      t = next();
    }
  }
  if (!isWord(t, 'PRAGMA')) return null;
  let name = next();
  let after = next();
  if (isOp(after, '.')) {
    name = next();
    after = next();
  }
  if (!name || (name.kind !== 'word' && name.kind !== 'quoted' && name.kind !== 'string')) return null;
  const key = name.value.toLowerCase();
  if (PRAGMAS[key]?.policy !== 'refuse') return null;
  // SQLite reads `==` as `=` here too.
  return isOp(after, '=') || isOp(after, '==') || isOp(after, '(') ? key : null;
}

export function refusedPragmaMessage(name: string): string {
  const p = PRAGMAS[name]!;
  const what =
    p.scope === 'process'
      ? 'changes the state of the whole SQL worker'
      : 'changes a bound the SQL worker pins on every connection';
  return `PRAGMA ${name} ${what}, which the worker refuses (${p.reason}; docs/isolation.md)`;
}
