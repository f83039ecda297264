import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  generateFullsize,
  goldLiterals,
  loadGolds,
  loadSchemas,
  tableRows,
  type Manifest,
} from '../../bench/bird-fullsize.ts';

// The full-size BIRD generator at a small scale: the real schemas, foreign keys that resolve, the
// golds' literals present, the same bytes for the same seed, and the cache reused.
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'wb-bird-fullsize-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const DBS = ['thrombosis_prediction', 'california_schools'];
const SCALE = 0.1;
const schemas = loadSchemas();
const literals = goldLiterals(schemas, loadGolds());

describe('bench/bird-fullsize.ts', () => {
  let manifest: Manifest;
  let root: string;

  it('writes the real tables and row counts; every foreign key resolves', async () => {
    const dir = tmp();
    ({ root, manifest } = await generateFullsize({ dir, scale: SCALE, dbs: DBS }));
    for (const dbId of DBS) {
      const db = new Database(path.join(root, dbId, `${dbId}.sqlite`), { readonly: true });
      try {
        const schema = schemas.get(dbId)!;
        const want = tableRows(dbId, SCALE);
        for (const t of schema.tables) {
          const cols = (db.prepare(`PRAGMA table_info("${t.name}")`).all() as { name: string }[]).map((c) => c.name);
          expect(cols, `${dbId}.${t.name}`).toEqual(t.columns.map((c) => c.name));
          const n = (db.prepare(`SELECT count(*) AS n FROM "${t.name}"`).get() as { n: number }).n;
          expect(n, `${dbId}.${t.name} rows`).toBe(want.get(t.name));
          for (const [c, ref] of t.fks) {
            const col = t.columns[c]!.name;
            const parentCol = schema.tables.find((x) => x.name === ref.table)!.columns[ref.col]!.name;
            const unresolved = (
              db
                .prepare(
                  `SELECT count(*) AS n FROM "${t.name}" WHERE "${col}" IS NOT NULL AND "${col}" NOT IN (SELECT "${parentCol}" FROM "${ref.table}")`,
                )
                .get() as { n: number }
            ).n;
            expect(unresolved, `${dbId}.${t.name}.${col} -> ${ref.table}.${parentCol}`).toBe(0);
          }
        }
      } finally {
        db.close();
      }
    }
  });

  it('holds every literal the golds compare a column with, where the table has the rows', () => {
    let checked = 0;
    for (const dbId of DBS) {
      const db = new Database(path.join(root, dbId, `${dbId}.sqlite`), { readonly: true });
      try {
        const schema = schemas.get(dbId)!;
        const rows = tableRows(dbId, SCALE);
        for (const [table, cols] of literals.values.get(dbId) ?? []) {
          const t = schema.tables.find((x) => x.name === table)!;
          const tuples = literals.tuples.get(dbId)?.get(table)?.length ?? 0;
          for (const [col, values] of cols) {
            const c = t.columns.findIndex((x) => x.name === col);
            // A foreign key takes its parent's values: its literals are in the parent's column.
            if (t.fks.has(c) || t.pk.length > 1) continue;
            if (rows.get(table)! < tuples + values.length) continue;
            for (const v of values) {
              const n = (db.prepare(`SELECT count(*) AS n FROM "${table}" WHERE "${col}" = ?`).get(v) as { n: number })
                .n;
              expect(n, `${dbId}.${table}.${col} = ${JSON.stringify(v)}`).toBeGreaterThan(0);
              checked++;
            }
          }
        }
      } finally {
        db.close();
      }
    }
    // The gold literals of these two databases at this scale: about a hundred (a scan that found none would pass above).
    expect(checked).toBeGreaterThan(50);
  });

  it('gives the same bytes for the same seed, other bytes for another, and reuses its cache', async () => {
    const again = await generateFullsize({ dir: tmp(), scale: SCALE, dbs: DBS });
    for (const dbId of DBS) expect(again.manifest.databases[dbId]!.sha256).toBe(manifest.databases[dbId]!.sha256);
    const other = await generateFullsize({ dir: tmp(), scale: SCALE, dbs: [DBS[0]!], seed: 7 });
    expect(other.manifest.databases[DBS[0]!]!.sha256).not.toBe(manifest.databases[DBS[0]!]!.sha256);

    const file = path.join(root, DBS[0]!, `${DBS[0]}.sqlite`);
    const mtime = statSync(file).mtimeMs;
    const logs: string[] = [];
    await generateFullsize({ dir: path.dirname(root), scale: SCALE, dbs: DBS, log: (m) => logs.push(m) });
    expect(statSync(file).mtimeMs).toBe(mtime);
    expect(logs.filter((l) => l.includes('reused'))).toHaveLength(DBS.length);
  });

  it('refuses a cache folder inside the repository, naming the setting', async () => {
    await expect(generateFullsize({ dir: path.resolve('bench', 'x'), scale: SCALE, dbs: DBS })).rejects.toThrow(
      /inside the repository; set RLVR_BIRD_FULLSIZE_DIR/,
    );
  });
});
