/** A tiny BIRD-layout folder built in the test: one database, its gold file and predictions. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import initSqlJs from 'sql.js';
import { datasetFlags } from '../helpers/shared-data.ts';

export interface TinyBird {
  dir: string;
  dbRoot: string;
  db: string;
  gold: string;
  predictions: string;
}

export async function tinyBird(): Promise<TinyBird> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-tiny-'));
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');");
  const dbRoot = path.join(dir, 'dbs');
  mkdirSync(path.join(dbRoot, 'tiny'), { recursive: true });
  const dbFile = path.join(dbRoot, 'tiny', 'tiny.sqlite');
  writeFileSync(dbFile, db.export());
  db.close();
  const gold = path.join(dir, 'gold.sql');
  writeFileSync(gold, 'SELECT name FROM t ORDER BY id\ttiny\nSELECT COUNT(*) FROM t\ttiny\n');
  const predictions = path.join(dir, 'pred.json');
  writeFileSync(
    predictions,
    JSON.stringify({
      0: 'SELECT name FROM t ORDER BY id\t----- bird -----\ttiny',
      1: 'SELECT 3\t----- bird -----\ttiny',
    }),
  );
  return { dir, dbRoot, db: dbFile, gold, predictions };
}

/** `eval` of the tiny folder's predictions (or another database folder's), one worker, then `extra`. */
export const evalArgs = (t: Pick<TinyBird, 'predictions' | 'gold' | 'dbRoot'>, ...extra: string[]) => [
  'eval',
  '--predictions',
  t.predictions,
  ...datasetFlags({ gold: t.gold, dataset: null, dbRoot: t.dbRoot }),
  '--workers',
  '1',
  ...extra,
];
