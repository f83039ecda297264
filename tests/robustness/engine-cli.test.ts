import { NativeDatabase as Database, type NativeDb } from '../helpers/native-sqlite.ts';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evalToReport, readJson, tempFile } from '../helpers/cli.ts';
import { superheroWithDeletes } from '../helpers/writing-predictions.ts';

/** The attacks on the SQL engine, through the CLI as a user runs it. */
interface OutItem {
  index: number;
  ex: number;
  status: string;
  error: string | null;
  mutated_db: boolean;
}

const SEP = '\t----- bird -----\t';

describe('eval --metrics ex,r-ves gives every item the same EX as --metrics ex when some predictions write', () => {
  it('gpt-4o on superhero, every tenth prediction a DELETE of a table its gold reads', async () => {
    const fx = superheroWithDeletes();
    const run = async (metrics: string) => {
      const r = await evalToReport(fx, '--metrics', metrics, '--ves-iterations', '2', '--workers', '1');
      expect(r.stderr).not.toMatch(/^error/m);
      expect(r.code).toBe(0);
      return { stdout: r.stdout, items: readJson<{ items: OutItem[] }>(r.out).items };
    };
    const ex = await run('ex');
    const rves = await run('ex,r-ves');
    expect(ex.items).toHaveLength(52);
    expect(ex.items.filter((i) => i.mutated_db && i.ex === 1).length).toBeGreaterThan(0);
    expect(rves.items.map((i) => [i.index, i.ex])).toEqual(ex.items.map((i) => [i.index, i.ex]));
    const total = (stdout: string) => /^EX\s+.*\s(\d+\.\d\d)\s*$/m.exec(stdout)?.[1];
    expect(total(rves.stdout)).toBe(total(ex.stdout));
  }, 240_000);
});

describe("a result whose values add up to more than a worker's memory", () => {
  it('a cross join over 1 KB texts, and one over 1 KB BLOBs: each item has the byte-limit error, the next item is EX 1, exit 0', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'wb-bigvalues-'));
    mkdirSync(path.join(root, 'big'));
    const db = new Database(path.join(root, 'big', 'big.sqlite'));
    db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT); CREATE TABLE b(id INTEGER PRIMARY KEY, v BLOB)');
    const insT = db.prepare('INSERT INTO t VALUES (?, ?)');
    const insB = db.prepare('INSERT INTO b VALUES (?, ?)');
    db.transaction(() => {
      for (let i = 1; i <= 2000; i++) {
        insT.run(i, String(i).padStart(1000, 'x'));
        insB.run(i, Buffer.alloc(1000, i % 256));
      }
    })();
    db.close();
    // 4,000,000 rows of 2 values (under the value cap): about 8 GB of text or 4 GB of BLOBs.
    const preds = {
      0: 'SELECT a.s, b.s FROM t a, t b',
      1: 'SELECT count(*) FROM t',
      2: 'SELECT a.v, b.id FROM b a, b b',
      3: 'SELECT count(*) FROM b',
    };
    const predFile = tempFile('preds.json');
    writeFileSync(
      predFile,
      JSON.stringify(Object.fromEntries(Object.entries(preds).map(([k, v]) => [k, `${v}${SEP}big`]))),
    );
    const gold = tempFile('gold.sql');
    writeFileSync(gold, 'SELECT 1\tbig\nSELECT 2000\tbig\nSELECT 1\tbig\nSELECT 2000\tbig\n');
    const r = await evalToReport({ predictions: predFile, gold, dbRoot: root }, '--workers', '1');
    expect(r.code).toBe(0);
    const items = readJson<{ items: OutItem[] }>(r.out).items;
    for (const i of [0, 2]) {
      expect(items[i]).toMatchObject({ status: 'error', ex: 0 });
      expect(items[i]!.error).toMatch(
        /^prediction: the result's values take more than 256 MiB \(the limit per result; [\d,]+ rows of 2 columns so far/,
      );
    }
    expect(items[1]).toMatchObject({ status: 'ok', ex: 1 });
    expect(items[3]).toMatchObject({ status: 'ok', ex: 1 });
  }, 120_000);
});

describe("the CLI's database folder with a WAL database", () => {
  it('an item of a database whose -wal holds committed rows is an error naming the -wal; the other database scores', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'wb-wal-cli-'));
    const open: NativeDb[] = [];
    for (const id of ['w', 'plain']) {
      mkdirSync(path.join(root, id));
      const db = new Database(path.join(root, id, `${id}.sqlite`));
      open.push(db);
      if (id === 'w') {
        db.pragma('journal_mode = WAL');
        db.pragma('wal_autocheckpoint = 0');
      }
      db.exec('CREATE TABLE t(x)');
      if (id === 'w') db.pragma('wal_checkpoint(TRUNCATE)');
      db.exec('INSERT INTO t VALUES (1), (2), (3)');
    }
    const predFile = tempFile('preds.json');
    writeFileSync(
      predFile,
      JSON.stringify({ 0: `SELECT count(*) FROM t${SEP}w`, 1: `SELECT count(*) FROM t${SEP}plain` }),
    );
    const gold = tempFile('gold.sql');
    writeFileSync(gold, 'SELECT 3\tw\nSELECT 3\tplain\n');
    let out: string;
    try {
      ({ out } = await evalToReport({ predictions: predFile, gold, dbRoot: root }, '--workers', '1'));
    } finally {
      for (const db of open) db.close();
    }
    const items = readJson<{ items: OutItem[] }>(out).items;
    const wal = path.join(root, 'w', 'w.sqlite');
    expect(items[0]).toMatchObject({ status: 'error', ex: 0 });
    expect(items[0]!.error).toContain(`database w: ${wal}-wal (`);
    expect(items[0]!.error).toContain(`sqlite3 "${wal}" "PRAGMA wal_checkpoint(TRUNCATE)"`);
    expect(items[1]).toMatchObject({ status: 'ok', ex: 1 });
  }, 60_000);
});
