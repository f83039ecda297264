import { itemResult } from '../../src/core/eval/item-result.ts';
import type { EvalItem, ItemResult } from '../../src/core/types.ts';

/** An item to evaluate: a simple question `index` on database "db", its SQL a plain line; `fields` replaces any. */
export function evalItem(fields: Partial<EvalItem> & Pick<EvalItem, 'index' | 'predSql'>): EvalItem {
  return {
    questionId: fields.index,
    dbId: 'db',
    difficulty: 'simple',
    goldSql: 'SELECT 1',
    extraction: { rule: 'sql-line', thinkStripped: false },
    ...fields,
  };
}

/** An item on BIRD's superhero database (question 0) whose gold counts the heroes: `predSql` at `index`. */
export function superheroItem(index: number, predSql: string): EvalItem {
  return evalItem({ index, predSql, questionId: 0, dbId: 'superhero', goldSql: 'SELECT count(*) FROM superhero' });
}

/**
 * What an executor gives for an item that ran: verdict `ex`, one row each side, 1 ms, no error,
 * Soft-F1 and R-VES not computed; `fields` replaces any of it. For fake executors in tests.
 */
export function ranResult(item: EvalItem, ex: 0 | 1, fields: Partial<ItemResult> = {}): ItemResult {
  return itemResult(item, { status: 'ok', ex, predRowCount: 1, goldRowCount: 1, elapsedMs: 1, ...fields });
}

/** The fields of a result that two runs of the same item must agree on. */
export const VERDICT_FIELDS = [
  'index',
  'sample',
  'ex',
  'softF1',
  'status',
  'error',
  'mutatedDb',
  'predRowCount',
  'goldRowCount',
  'resultKey',
] as const satisfies ReadonlyArray<keyof ItemResult>;

/** A result's verdict: the values of `fields`, an absent one as null. */
export function verdictOf(r: ItemResult, fields: ReadonlyArray<keyof ItemResult> = VERDICT_FIELDS): unknown[] {
  return fields.map((f) => r[f] ?? null);
}

/**
 * The verdicts of two runs of the same items, without the items that timed out in either (a
 * query near the 30 s limit may time out in one pass and not the other on a loaded machine:
 * that is the machine, not the code under test); `slow` counts those set apart.
 */
export function verdictsBesideTimeouts(
  a: readonly ItemResult[],
  b: readonly ItemResult[],
  fields: ReadonlyArray<keyof ItemResult> = VERDICT_FIELDS,
): { slow: number; a: unknown[][]; b: unknown[][] } {
  const slow = new Set(a.flatMap((r, i) => (r.status === 'timeout' || b[i]!.status === 'timeout' ? [i] : [])));
  const keep = (rs: readonly ItemResult[]) => rs.filter((_, i) => !slow.has(i)).map((r) => verdictOf(r, fields));
  return { slow: slow.size, a: keep(a), b: keep(b) };
}
