// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- better-sqlite3 ships no types; the bench declares the part it uses
/// <reference path="../../bench/better-sqlite3.d.ts" />
/**
 * `--db-root x.zip` and Inspect `.eval` logs built hostile at test time: every zip goes through
 * src/adapters/zip/zip-entries.ts (names after normalisation, duplicates, encryption, entry
 * count, bytes and ratio), a `-wal` or hot `-journal` inside the zip is refused as in a folder,
 * and the inflated folder goes with the process on SIGINT. Real BIRD databases from ../shared/data.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { deflateRawSync } from 'node:zlib';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BlobWriter, TextReader, Uint8ArrayReader, ZipWriter } from '@zip.js/zip.js';
import { describe, expect, it } from 'vitest';
import { CLI_SCRIPT, ROOT, runCli, tempFile } from '../helpers/cli.ts';
import { gpt4oMinidevPredictions, minidevFlags, sharedData } from '../helpers/shared-data.ts';
import { storedZip, type RawEntry } from '../helpers/stored-zip.ts';

const GOLD = sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql');
const db = (name: string) => readFileSync(sharedData('bird', 'databases', name, `${name}.sqlite`));

type Add = [name: string, data: Uint8Array | string, opts?: Record<string, unknown>];

async function zipOf(entries: Add[], level = 6): Promise<Uint8Array> {
  const w = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false, level });
  for (const [name, data, opts] of entries) {
    await w.add(name, typeof data === 'string' ? new TextReader(data) : new Uint8ArrayReader(data), opts);
  }
  return new Uint8Array(await (await w.close()).arrayBuffer());
}

/** What the CLI left in its TMPDIR (tsx keeps its compile cache there). */
const left = (tmp: string) => readdirSync(tmp).filter((f) => !f.startsWith('tsx-'));

/** A fresh TMPDIR for the child, so whatever it leaves (or writes outside its folder) is seen. */
function isolatedTmp(): string {
  return mkdtempSync(path.join(tmpdir(), 'wb-ztmp-'));
}

const evalArgs = (zip: string, ...extra: string[]) => [
  'eval',
  '--predictions',
  gpt4oMinidevPredictions(),
  ...minidevFlags({ dbRoot: zip }),
  '--workers',
  '1',
  ...extra,
];

async function evalZip(bytes: Uint8Array, ...extra: string[]) {
  const zip = tempFile('db.zip');
  writeFileSync(zip, bytes);
  const tmp = isolatedTmp();
  const run = await runCli(evalArgs(zip, ...extra), ROOT, { TMPDIR: tmp });
  return { ...run, tmp, left: left(tmp) };
}

/** `evalZip`, which must be refused (exit code 2). */
async function refused(bytes: Uint8Array, ...extra: string[]) {
  const r = await evalZip(bytes, ...extra);
  expect(r.code).toBe(2);
  return r;
}

/** A stored zip of real BIRD databases: each entry's path in the zip and the database it holds. */
const dbZip = (...entries: [name: string, dbId: string][]) =>
  storedZip(entries.map(([name, dbId]) => ({ name, data: db(dbId) })));

describe('--db-root zip within bounds', { timeout: 180_000 }, () => {
  it('path traversal: an entry x/...sqlite (db_id "..") is refused and nothing is written outside the temporary folder', async () => {
    const r = await refused(dbZip(['x/...sqlite', 'superhero'], ['superhero/superhero.sqlite', 'superhero']));
    expect(r.stderr).toMatch(
      /--db-root: db\.zip: the entry "x\/\.\.\.sqlite" has a database name that gives no usable db_id \("\.\."\)/,
    );
    expect(r.left).toEqual([]); // no `...sqlite` in TMPDIR, no folder left behind
    const dots = await refused(dbZip(['a/../../evil/evil.sqlite', 'superhero']));
    expect(dots.stderr).toMatch(/has a "\.\." segment/);
    expect(dots.left).toEqual([]);
  });

  it('a duplicated entry is refused (superhero.sqlite twice, the second holding student_club), not silently won by one copy', async () => {
    const r = await refused(
      dbZip(
        ['dev_databases/superhero/superhero.sqlite', 'superhero'],
        ['dev_databases/superhero/superhero.sqlite', 'student_club'],
      ),
    );
    expect(r.stderr).toMatch(/the entry dev_databases\/superhero\/superhero\.sqlite appears twice/);
    // Backslashes and ./ normalise to the same name: still a duplicate.
    const norm = await refused(
      dbZip(['superhero/superhero.sqlite', 'superhero'], ['./superhero\\superhero.sqlite', 'student_club']),
    );
    expect(norm.stderr).toMatch(/appears twice/);
  });

  it('one database at two paths with different contents (a/ and b/, or outer and inner zip) is refused naming both; the same bytes twice are one database', async () => {
    const r = await refused(
      dbZip(['a/superhero/superhero.sqlite', 'superhero'], ['b/superhero/superhero.sqlite', 'student_club']),
    );
    expect(r.stderr).toContain(
      '--db-root: database superhero is in the zip twice with different contents: db.zip/a/superhero/superhero.sqlite and db.zip/b/superhero/superhero.sqlite; ' +
        'which copy the golds are meant for cannot be told, so neither is used. Keep one copy in the zip, or unzip it and give --db-root the folder that holds the one you mean',
    );
    expect(r.left).toEqual([]);
    // An outer entry and an inner zip's, the inner one deflated.
    const inner = await zipOf([['dev_databases/superhero/superhero.sqlite', db('student_club')]]);
    const nested = await refused(
      await zipOf([
        ['superhero/superhero.sqlite', db('superhero')],
        ['dev_databases.zip', inner],
      ]),
    );
    expect(nested.stderr).toMatch(
      /database superhero is in the zip twice with different contents: db\.zip\/superhero\/superhero\.sqlite and db\.zip\/dev_databases\.zip\/dev_databases\/superhero\/superhero\.sqlite/,
    );
    expect(nested.left).toEqual([]);
    // The same bytes at two paths (Spider's release has database/ and test_database/): one database, scored as usual.
    const out = (name: string) => tempFile(name);
    const once = out('once.json');
    const twice = out('twice.json');
    const one = await evalZip(dbZip(['a/superhero/superhero.sqlite', 'superhero']), '--out', once);
    const two = await evalZip(
      dbZip(['a/superhero/superhero.sqlite', 'superhero'], ['b/superhero/superhero.sqlite', 'superhero']),
      '--out',
      twice,
    );
    expect(one.code, one.stderr).toBe(0);
    expect(two.code, two.stderr).toBe(0);
    const total = (f: string) => JSON.parse(readFileSync(f, 'utf8')).summary.by_difficulty.total;
    expect(total(twice)).toEqual(total(once));
    expect(total(once).ex).toBeGreaterThan(0);
    expect(two.left).toEqual([]);
  }, 180_000);

  it('a zip bomb (64 MiB of zeros in 64 KiB) and a fake inner zip are refused before a byte is written', async () => {
    const zeros = new Uint8Array(64 * 1024 * 1024);
    const bomb = await refused(
      await zipOf(
        [
          ['bomb/bomb.sqlite', zeros],
          ['superhero/superhero.sqlite', db('superhero')],
        ],
        9,
      ),
    );
    expect(bomb.stderr).toMatch(
      /bomb\/bomb\.sqlite inflates .* to 64\.0 MiB \(\d+ to 1, more than the 100 to 1 .*zip bomb; unzip it and give the folder to --db-root/,
    );
    expect(bomb.left).toEqual([]);
    const inner = await refused(await zipOf([['dev/dev_databases.zip', zeros]], 9));
    expect(inner.stderr).toMatch(/dev\/dev_databases\.zip inflates .* zip bomb/);
    expect(inner.left).toEqual([]);
  });

  it('an entry that inflates past the size its header declares is stopped there (a forged header), nothing left behind', async () => {
    const r = await refused(
      storedZip([
        {
          name: 'superhero/superhero.sqlite',
          data: db('superhero'),
          deflated: deflateRawSync(db('superhero')),
          declaredSize: 4096,
        },
      ]),
    );
    expect(r.stderr).toMatch(
      /superhero\/superhero\.sqlite (is damaged \(Invalid uncompressed size\)|inflates to more than the 4,096 bytes its header declares)/,
    );
    expect(r.left).toEqual([]);
  });

  it('more than 20,000 entries are refused while the central directory is read (the generator stops there)', async () => {
    const entries: RawEntry[] = [{ name: 'superhero/superhero.sqlite', data: db('superhero') }];
    for (let i = 0; i < 20_001; i++) entries.push({ name: `junk/${i}.txt`, data: 'x' });
    const r = await refused(storedZip(entries));
    expect(r.stderr).toMatch(/holds more than 20,000 entries/);
  }, 120_000);

  it('an encrypted zip is reported as encrypted, not as damaged', async () => {
    const r = await refused(
      await zipOf([['superhero/superhero.sqlite', db('superhero'), { password: 'secret', encryptionStrength: 3 }]]),
    );
    expect(r.stderr).toMatch(
      /superhero\/superhero\.sqlite is encrypted \(password-protected\): the workbench reads no passwords; unzip it and give the folder to --db-root, giving the password to the unzip tool/,
    );
    expect(r.stderr).not.toMatch(/damaged/);
  });

  it('a -wal with committed changes (hero_power emptied) or a hot -journal inside the zip is refused as in a folder', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-wal-'));
    const file = path.join(dir, 'superhero.sqlite');
    copyFileSync(sharedData('bird', 'databases', 'superhero', 'superhero.sqlite'), file);
    const conn = new Database(file);
    conn.pragma('journal_mode = WAL');
    conn.pragma('wal_autocheckpoint = 0');
    conn.exec('DELETE FROM hero_power');
    // Read while the connection is open: the deletion is in the WAL only, not in the main file.
    const main = readFileSync(file);
    const wal = readFileSync(`${file}-wal`);
    conn.close();
    expect(wal.length).toBeGreaterThan(4096);
    const r = await refused(
      await zipOf([
        ['dev_databases/superhero/superhero.sqlite', main],
        ['dev_databases/superhero/superhero.sqlite-wal', wal],
      ]),
    );
    expect(r.stderr).toMatch(
      /db\.zip\/dev_databases\/superhero\/superhero\.sqlite: db\.zip\/dev_databases\/superhero\/superhero\.sqlite-wal \([\d,]+ bytes\) may hold committed changes .*PRAGMA wal_checkpoint\(TRUNCATE\).* then zip the folder again, or give the folder to --db-root/,
    );
    expect(r.left).toEqual([]);

    const journal = new Uint8Array(4096);
    journal.set([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]);
    const j = await refused(
      await zipOf([
        ['superhero/superhero.sqlite', db('superhero')],
        ['superhero/superhero.sqlite-journal', journal],
      ]),
    );
    expect(j.stderr).toMatch(/superhero\.sqlite-journal is a hot rollback journal/);
    // An empty (committed) WAL is no problem: the database is read as usual.
    const ok = await evalZip(
      await zipOf([
        ['superhero/superhero.sqlite', db('superhero')],
        ['superhero/superhero.sqlite-wal', ''],
      ]),
      '--out',
      tempFile('ok.json'),
    );
    expect(ok.code, ok.stderr).toBe(0);
  }, 120_000);

  it('SIGINT while evaluating from a zip removes the inflated folder (Ctrl-C leaves nothing in TMPDIR)', async () => {
    const zip = tempFile('db.zip');
    writeFileSync(
      zip,
      await zipOf([
        ['superhero/superhero.sqlite', db('superhero')],
        ['student_club/student_club.sqlite', db('student_club')],
        ['toxicology/toxicology.sqlite', db('toxicology')],
      ]),
    );
    const tmp = isolatedTmp();
    // Every item ~slow: a recursive CTE per prediction keeps the run going until the signal.
    const preds = path.join(mkdtempSync(path.join(tmpdir(), 'wb-slow-')), 'slow.sql');
    const gold = readFileSync(GOLD, 'utf8').trim().split('\n');
    writeFileSync(
      preds,
      gold
        .map(
          () =>
            'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c',
        )
        .join('\n') + '\n',
    );
    const child = spawn(
      process.execPath,
      [
        // The CLI as `npm run cli` runs it (its bundle, no compiler started), in this process.
        CLI_SCRIPT,
        'eval',
        '--predictions',
        preds,
        ...minidevFlags({ dataset: null, dbRoot: zip }),
        '--workers',
        '1',
      ],
      {
        cwd: ROOT,
        env: { ...process.env, TMPDIR: tmp },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal })),
    );
    const inflated = await new Promise<boolean>((resolve) => {
      const poll = setInterval(() => {
        const dir = readdirSync(tmp).find((f) => f.startsWith('wb-db-root-'));
        if (dir && existsSync(path.join(tmp, dir, 'toxicology', 'toxicology.sqlite'))) {
          clearInterval(poll);
          setTimeout(() => {
            child.kill('SIGINT');
            resolve(true);
          }, 1500);
        } else if (child.exitCode !== null) {
          clearInterval(poll);
          resolve(false);
        }
      }, 20);
    });
    expect(inflated).toBe(true);
    const end = await closed;
    expect(end.signal ?? end.code).toBe(end.signal ? 'SIGINT' : 130);
    expect(left(tmp)).toEqual([]);
  }, 120_000);
});

describe('Inspect .eval log within bounds', { timeout: 180_000 }, () => {
  it('a 1 MB .eval whose sample inflates to hundreds of MiB is refused by the ratio bound, without reading it whole', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-inspect-'));
    mkdirSync(dir, { recursive: true });
    const huge =
      '{"id": 1, "epoch": 1, "input": "q", "target": "SELECT 1", "output": {"choices": [{"message": {"content": "' +
      ' '.repeat(100 * 1024 * 1024) +
      '"}}]}}';
    const log = path.join(dir, 'log.eval');
    writeFileSync(
      log,
      await zipOf(
        [
          ['header.json', '{}'],
          ['samples/1_epoch_1.json', huge],
        ],
        9,
      ),
    );
    expect(readFileSync(log).length).toBeLessThan(2 * 1024 * 1024);
    const r = await runCli(['harness', '--completions', log, ...minidevFlags(), '--workers', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/log\.eval: samples\/1_epoch_1\.json inflates .* to 100\.0 MiB .*zip bomb/);
  }, 120_000);
});
