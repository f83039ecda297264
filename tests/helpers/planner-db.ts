/**
 * Constructed data for planner differences (docs/version-effects.md): a database written by
 * SQLite itself whose CTE gold SQLite 3.54 re-runs for every joined row (30,000 rows grouped,
 * 10,000 times: minutes) and SQLite 3.39/3.40 materialise once (about 0.1 s), in BIRD's layout.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NativeDatabase } from './native-sqlite.ts';

/** A CTE joined on a condition no index serves: a co-routine re-run per row of `small` on 3.54. */
export const CO_ROUTINE_GOLD =
  'WITH c AS (SELECT k, count(*) AS n FROM big GROUP BY k) SELECT count(*) FROM small AS s JOIN c ON c.n > s.k % 5';
/** The same query with the CTE materialised by hand: fast on both generations. */
export const MATERIALIZED_PRED =
  'WITH c AS MATERIALIZED (SELECT k, count(*) AS n FROM big GROUP BY k) SELECT count(*) FROM small AS s JOIN c ON c.n > s.k % 5';

/** A fresh root holding `planner/planner.sqlite`: big (30,000 rows, 10 keys), small (10,000 rows). */
export function plannerDbRoot(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'wb-planner-'));
  mkdirSync(path.join(root, 'planner'));
  const db = new NativeDatabase(path.join(root, 'planner', 'planner.sqlite'));
  db.exec(`CREATE TABLE big(id INTEGER PRIMARY KEY, k INTEGER, v INTEGER);
    CREATE TABLE small(id INTEGER PRIMARY KEY, k INTEGER, label TEXT);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
      INSERT INTO big SELECT i, i % 10, (i * 7919) % 1000 FROM n;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
      INSERT INTO small SELECT i, i, 'l' || i FROM n;`);
  db.close();
  return root;
}
