/**
 * Spider's execution match, as test-suite-sql-eval's `exec_eval` decides it (docs/spider-rules.md):
 * - both texts are normalised first (`spiderQueryText`, src/core/sql/spider-text.ts): `> =`, `< =`, `! =` joined, every
 *   DISTINCT keyword removed (its default, keep_distinct off), `YEAR(CURDATE())` read as 2020;
 * - the results are bags of rows (duplicates count), in order only when the normalised gold
 *   text contains `order by`, and a prediction may return the gold's columns in another order.
 * Values compare as Python compares them (value-key.ts: 1 == 1.0, '1' != 1, NULL == NULL).
 */
import type { SqlValue } from '../types.ts';
import { valueKey } from './value-key.ts';

export type ExRule = 'bird' | 'spider';

export const EX_RULE_LABEL: Readonly<Record<ExRule, string>> = {
  bird: 'BIRD set equality',
  spider: 'Spider exec match (test-suite-sql-eval)',
};

/** A row as a bag of its values (the order of the columns forgotten). */
function unorderedKey(row: readonly SqlValue[]): string {
  return row
    .map((v) => {
      const k = valueKey(v);
      return k.length + ':' + k;
    })
    .sort()
    .join('');
}

function rowKeyOf(keys: readonly string[], perm: readonly number[] | null): string {
  let out = '';
  for (let c = 0; c < keys.length; c++) {
    const k = keys[perm ? perm[c]! : c]!;
    out += k.length + ':' + k;
  }
  return out;
}

/** 1 when the prediction's result equals the gold's under Spider's rule, else 0. */
export function spiderExecMatch(
  pred: readonly (readonly SqlValue[])[],
  gold: readonly (readonly SqlValue[])[],
  orderMatters: boolean,
): 0 | 1 {
  if (gold.length === 0 && pred.length === 0) return 1;
  if (gold.length !== pred.length) return 0;
  const cols = gold[0]!.length;
  if (pred[0]!.length !== cols) return 0;
  // Necessary condition: the same bag of values in each row (in order, or as sets of rows).
  const gu = gold.map(unorderedKey);
  const pu = pred.map(unorderedKey);
  if (orderMatters) {
    for (let r = 0; r < gu.length; r++) if (gu[r] !== pu[r]) return 0;
  } else {
    const gs = new Set(gu);
    const ps = new Set(pu);
    if (gs.size !== ps.size) return 0;
    for (const k of ps) if (!gs.has(k)) return 0;
  }
  const gk = gold.map((row) => row.map(valueKey));
  const pk = pred.map((row) => row.map(valueKey));
  // Gold column c can only be predicted column j when every value of j appears in c.
  const goldCol = Array.from({ length: cols }, (_, c) => new Set(gk.map((row) => row[c]!)));
  const allowed = goldCol.map((set) => {
    const ok: number[] = [];
    for (let j = 0; j < cols; j++) if (pk.every((row) => set.has(row[j]!))) ok.push(j);
    return ok;
  });
  const goldRows = gk.map((row) => rowKeyOf(row, null));
  const goldBag = new Map<string, number>();
  for (const k of goldRows) goldBag.set(k, (goldBag.get(k) ?? 0) + 1);
  const matches = (perm: readonly number[]): boolean => {
    if (orderMatters) {
      for (let r = 0; r < pk.length; r++) if (rowKeyOf(pk[r]!, perm) !== goldRows[r]) return false;
      return true;
    }
    const bag = new Map(goldBag);
    for (const row of pk) {
      const k = rowKeyOf(row, perm);
      const n = bag.get(k);
      if (!n) return false;
      bag.set(k, n - 1);
    }
    return true;
  };
  const perm: number[] = [];
  const used = new Array<boolean>(cols).fill(false);
  const search = (c: number): boolean => {
    if (c === cols) return matches(perm);
    for (const j of allowed[c]!) {
      if (used[j]) continue;
      used[j] = true;
      perm.push(j);
      if (search(c + 1)) return true;
      perm.pop();
      used[j] = false;
    }
    return false;
  };
  return search(0) ? 1 : 0;
}
