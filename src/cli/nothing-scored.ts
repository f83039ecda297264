/**
 * "Nothing could be scored" as an error: an eval whose every item lacks its database or could
 * not open it measured nothing, and exiting 0 with a table of zeros would pass for a result.
 */
import { WorkbenchError } from '../core/errors.ts';
import type { ItemResult } from '../core/types.ts';

/** An item that failed because its database could not be opened (the pool's `database <db_id>: ...`). */
const dbFailure = (r: ItemResult) =>
  r.status === 'error' && r.error !== null && r.error.startsWith(`database ${r.dbId}`);

/**
 * Throws a summary of why no item was scored; returns when at least one item was. `noItems`:
 * the reason (and what to do) when there were no items at all; without it an empty run passes.
 */
export function assertSomethingScored(results: readonly ItemResult[], dbRoot: string, noItems?: string): void {
  if (results.length === 0 && noItems) throw new WorkbenchError('MISSING_FILE', `nothing was scored: ${noItems}`);
  if (results.length === 0 || results.some((r) => r.status !== 'missing-db' && !dbFailure(r))) return;
  const missing = new Map<string, number>();
  const unreadable = new Map<string, { items: number; error: string }>();
  const notFiles = new Map<string, { items: number; error: string }>();
  for (const r of results) {
    if (r.status === 'missing-db' && (r.error === null || r.error.startsWith(`database ${r.dbId} not found`)))
      missing.set(r.dbId, (missing.get(r.dbId) ?? 0) + 1);
    // Something there that is not a database file (a directory, a FIFO...): its error says what.
    else if (r.status === 'missing-db')
      notFiles.set(r.dbId, { items: (notFiles.get(r.dbId)?.items ?? 0) + 1, error: r.error! });
    else {
      const u = unreadable.get(r.dbId);
      if (u) u.items++;
      else unreadable.set(r.dbId, { items: 1, error: r.error! });
    }
  }
  const lines = [`nothing was scored: none of the ${results.length} item(s) could run against a database in ${dbRoot}`];
  if (missing.size > 0) {
    lines.push(
      `  ${missing.size} database(s) missing (expected <db-root>/<db_id>/<db_id>.sqlite): ` +
        [...missing].map(([db, n]) => `${db} (${n} item(s))`).join(', '),
    );
  }
  for (const [db, u] of notFiles) lines.push(`  ${db} (${u.items} item(s)) not scored: ${u.error}`);
  for (const [db, u] of unreadable) lines.push(`  ${db} (${u.items} item(s)) could not be opened: ${u.error}`);
  throw new WorkbenchError('MISSING_FILE', lines.join('\n'), '--db-root');
}
