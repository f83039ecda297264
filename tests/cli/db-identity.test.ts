/**
 * The database behind a verdict, as the CLI sees it: what stands where a database should be
 * (a directory, a FIFO, a device, a socket, a dangling link) is named and its items not
 * scored; a database whose committed changes sit in its -wal, or whose bytes were replaced
 * under the same size and mtime, gets from the verdict cache exactly what --no-cache gives.
 * Each on a temp copy of mini-dev's databases (never written in /work/shared).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { NativeDatabase, type NativeDb } from '../helpers/native-sqlite.ts';
import { gpt4oMinidevPredictions, minidevFlags, sharedData } from '../helpers/shared-data.ts';

const SHARED_DBS = sharedData('bird', 'databases');
const sharedDb = (dbId: string) => path.join(SHARED_DBS, dbId, `${dbId}.sqlite`);

const opened: NativeDb[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) db.close();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const tempRoot = () => mkdtempSync(path.join(tmpdir(), 'wb-dbid-'));
/** `<root>/<dbId>/<dbId>.sqlite`, its folder made. */
function dbPath(root: string, dbId: string): string {
  mkdirSync(path.join(root, dbId), { recursive: true });
  return path.join(root, dbId, `${dbId}.sqlite`);
}
/** A copy of mini-dev's database `dbId` in `root`. */
function copyDb(root: string, dbId: string): string {
  const file = dbPath(root, dbId);
  copyFileSync(sharedDb(dbId), file);
  return file;
}

interface ItemJson {
  db_id: string;
  ex: 0 | 1 | null;
  status: string;
  error: string | null;
  pred_rows: number | null;
  gold_rows: number | null;
  result_key: string | null;
}
interface EvalJson {
  summary: { count: number; by_db: Record<string, unknown>; executions: { from_cache: number } };
  items: ItemJson[];
}

/** `eval` of GPT-4o's mini-dev predictions against the databases in `root`, one worker; its code, stderr and --out. */
async function evalOn(root: string, ...extra: string[]) {
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'wb-dbid-out-')), 'out.json');
  const r = await runCli([
    'eval',
    '--predictions',
    gpt4oMinidevPredictions(),
    ...minidevFlags({ dbRoot: root }),
    '--workers',
    '1',
    '--out',
    out,
    ...extra,
  ]);
  const json = r.code === 0 ? (JSON.parse(readFileSync(out, 'utf8')) as EvalJson) : null;
  return { code: r.code, stderr: r.stderr, json };
}

/** Everything an item's verdict is, per item of `dbId`. */
const verdicts = (o: EvalJson, dbId: string) =>
  o.items.filter((i) => i.db_id === dbId).map((i) => [i.ex, i.status, i.error, i.pred_rows, i.gold_rows, i.result_key]);

describe('what stands where a database file should be, and is not one', () => {
  it('a directory, a FIFO and a symlink to /dev/zero: each named with what it is, nothing opened, nothing scored, exit 2', async () => {
    const root = tempRoot();
    mkdirSync(dbPath(root, 'student_club'));
    execFileSync('mkfifo', [dbPath(root, 'superhero')]);
    symlinkSync('/dev/zero', dbPath(root, 'toxicology'));
    const r = await evalOn(root);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('nothing was scored');
    expect(r.stderr).toContain(
      `student_club (48 item(s)) not scored: database student_club: ${dbPath(root, 'student_club')} is a directory`,
    );
    expect(r.stderr).toContain(
      `superhero (52 item(s)) not scored: database superhero: ${dbPath(root, 'superhero')} is a FIFO (named pipe)`,
    );
    expect(r.stderr).toContain(
      `toxicology (40 item(s)) not scored: database toxicology: ${dbPath(root, 'toxicology')} is a character device`,
    );
    expect(r.stderr).toContain('put the SQLite file of superhero there');
  }, 120_000);

  it('a socket and a dangling link are not scored (null in the export), while a link to a database outside the root is read', async () => {
    const root = tempRoot();
    symlinkSync(sharedDb('superhero'), dbPath(root, 'superhero'));
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(dbPath(root, 'student_club'), resolve));
    symlinkSync(path.join(root, 'nowhere.sqlite'), dbPath(root, 'toxicology'));
    const r = await evalOn(root);
    expect(r.code, r.stderr).toBe(0);
    const o = r.json!;
    const of = (dbId: string) => o.items.filter((i) => i.db_id === dbId);
    expect(of('student_club')).toHaveLength(48);
    for (const i of of('student_club')) {
      expect(i).toMatchObject({ status: 'missing-db', ex: null });
      expect(i.error).toContain(`${dbPath(root, 'student_club')} is a socket, not a database file`);
    }
    expect(of('toxicology')).toHaveLength(40);
    for (const i of of('toxicology')) {
      expect(i).toMatchObject({ status: 'missing-db', ex: null });
      expect(i.error).toContain(
        `${dbPath(root, 'toxicology')} is a symbolic link to ${JSON.stringify(path.join(root, 'nowhere.sqlite'))}, which does not exist (a dangling link)`,
      );
    }
    // Only superhero's 52 items count; each of them ran against the database the link leads to.
    expect(o.summary.count).toBe(52);
    expect(Object.keys(o.summary.by_db)).toEqual(['superhero']);
    expect(of('superhero').every((i) => i.status !== 'missing-db')).toBe(true);
    expect(of('superhero').some((i) => i.ex === 1)).toBe(true);
  }, 120_000);
});

describe("the verdict cache's identity of a database is the bytes SQLite would read", () => {
  it('committed changes left in the -wal after a cached run: the cached run gives what --no-cache gives (the -wal refused), not the old verdicts', async () => {
    const root = tempRoot();
    const file = copyDb(root, 'superhero');
    copyDb(root, 'student_club'); // scored in every run, so each run writes its --out
    // A WAL database from the start, checkpointed: later commits leave the main file untouched.
    const wal = new NativeDatabase(file);
    wal.pragma('journal_mode = WAL');
    wal.close();
    const cache = mkdtempSync(path.join(tmpdir(), 'wb-dbid-cache-'));
    const first = await evalOn(root, '--cache', cache);
    expect(first.code, first.stderr).toBe(0);
    expect(verdicts(first.json!, 'superhero').some(([, status]) => status === 'ok')).toBe(true);

    const main = statSync(file);
    const db = new NativeDatabase(file);
    opened.push(db); // kept open: closing it would checkpoint the -wal into the main file
    db.pragma('wal_autocheckpoint = 0');
    db.exec('DELETE FROM hero_power; DELETE FROM hero_attribute; UPDATE superhero SET height_cm = NULL');
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
    // The main file is as the cached run hashed it: only the -wal tells the change.
    const now = statSync(file);
    expect([now.size, now.mtimeMs]).toEqual([main.size, main.mtimeMs]);

    const cached = await evalOn(root, '--cache', cache);
    const truth = await evalOn(root, '--no-cache');
    expect(cached.code, cached.stderr).toBe(0);
    expect(truth.code, truth.stderr).toBe(0);
    for (const [, status, error] of verdicts(truth.json!, 'superhero')) {
      expect(status).toBe('error');
      expect(error).toContain(`${file}-wal`);
    }
    expect(verdicts(cached.json!, 'superhero')).toEqual(verdicts(truth.json!, 'superhero'));
    // student_club did not change: its verdicts still come from the cache.
    expect(cached.json!.summary.executions.from_cache).toBeGreaterThan(0);
    expect(verdicts(cached.json!, 'student_club')).toEqual(verdicts(truth.json!, 'student_club'));
  }, 300_000);

  it('other bytes under the same path, size and mtime (as cp -p, rsync -a, tar x leave them): the cached run gives what --no-cache gives', async () => {
    const root = tempRoot();
    const file = copyDb(root, 'superhero');
    const mtime = 1_700_000_000; // whole seconds: the replacement gets exactly the same mtime back
    utimesSync(file, mtime, mtime);
    const cache = mkdtempSync(path.join(tmpdir(), 'wb-dbid-cache-'));
    const first = await evalOn(root, '--cache', cache);
    expect(first.code, first.stderr).toBe(0);

    // Other bytes of the same size: names rewritten to strings of the same length, in place.
    const other = path.join(mkdtempSync(path.join(tmpdir(), 'wb-dbid-other-')), 'superhero.sqlite');
    copyFileSync(sharedDb('superhero'), other);
    const db = new NativeDatabase(other);
    db.exec("UPDATE superhero SET superhero_name = 'Q' || substr(superhero_name, 2), full_name = upper(full_name)");
    db.close();
    const before = statSync(file);
    copyFileSync(other, file);
    utimesSync(file, mtime, mtime);
    const after = statSync(file);
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
    expect(readFileSync(file).equals(readFileSync(sharedDb('superhero')))).toBe(false);

    const cached = await evalOn(root, '--cache', cache);
    const truth = await evalOn(root, '--no-cache');
    expect(cached.code, cached.stderr).toBe(0);
    expect(truth.code, truth.stderr).toBe(0);
    // The change shows in the verdicts (so old verdicts served from the cache would differ)...
    expect(verdicts(truth.json!, 'superhero')).not.toEqual(verdicts(first.json!, 'superhero'));
    // ...and the cached run gives exactly the new bytes' verdicts.
    expect(verdicts(cached.json!, 'superhero')).toEqual(verdicts(truth.json!, 'superhero'));
  }, 300_000);
});
