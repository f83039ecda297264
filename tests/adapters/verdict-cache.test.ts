import {
  chmodSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool, dbFileSha256 } from '../../src/adapters/node/sql-worker-host.ts';
import {
  CACHE_FILE,
  KEY_FILE,
  OLD_CACHE_FILE,
  ROW_OVERHEAD,
  openFileVerdictCache,
} from '../../src/adapters/node/verdict-cache-file.ts';
import { sha256File } from '../../src/cli/commands/run-out.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import { runEvaluation } from '../../src/core/run/replay.ts';
import {
  cacheableItem,
  cacheableResult,
  validVerdict,
  verdictKey,
  type CachedVerdict,
  type FactsStore,
  type VerdictStore,
} from '../../src/core/run/verdict-cache.ts';
import { createRunService } from '../../src/app/run-service.ts';
import type { AppPorts } from '../../src/app/ports.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig, type SampleRecord } from '../../src/core/run/types.ts';
import { fileDataset, memoryAppPorts } from '../helpers/memory-app-ports.ts';
import type { EvalItem } from '../../src/core/types.ts';
import { ROOT, readJson, runCli, runCommand, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { superheroItem } from '../helpers/item-results.ts';
import { cachedVerdictOf as verdict, counting, withFileCache } from '../helpers/file-verdict-cache.ts';

const DB_ROOT = sharedData('bird', 'databases');
/** better-sqlite3, to edit the store's file as an attacker would (it ships no types). */
const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (
  file: string,
  options?: { readonly?: boolean },
) => {
  prepare(sql: string): { all(...p: unknown[]): unknown[]; run(...p: unknown[]): unknown };
  exec(sql: string): void;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  close(): void;
};

describe('the verdict cache across runs, on real data', () => {
  const pool = createNodeSqlPool({ dbRoot: DB_ROOT, workers: 2 });
  afterAll(() => pool.dispose());

  it('never caches a prediction that writes or calls random(); the key holds the timeout and the database sha256, not the whitespace SQLite ignores', async () => {
    const items: EvalItem[] = [
      'SELECT random() FROM superhero LIMIT 1',
      "UPDATE superhero SET superhero_name = 'x' WHERE id = 1",
      'DELETE FROM superhero WHERE id = 1',
      'SELECT count(*) FROM superhero',
    ].map((predSql, index) => superheroItem(index, predSql));
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vcache-'));
    for (let round = 0; round < 2; round++) {
      const count = counting(pool);
      const { file, caching } = await withFileCache(dir, count.executor);
      await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: caching, reuse: false });
      await file.save();
      // The writes and random() are executed every time; the plain query only the first time.
      expect(count.asked.map((i) => i.index)).toEqual(round === 0 ? [0, 1, 2, 3] : [0, 1, 2]);
      expect(file.entries).toBe(1);
    }
    const key = verdictKey(items[3]!, 'a'.repeat(64), { executor: 'x', sqliteVersion: '3' }, DEFAULT_EVAL_OPTIONS);
    expect(key).not.toBe(
      verdictKey(
        items[3]!,
        'a'.repeat(64),
        { executor: 'x', sqliteVersion: '3' },
        { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 1000 },
      ),
    );
    expect(key).not.toBe(
      verdictKey(items[3]!, 'b'.repeat(64), { executor: 'x', sqliteVersion: '3' }, DEFAULT_EVAL_OPTIONS),
    );
    expect(key).toBe(
      verdictKey(
        { ...items[3]!, predSql: '  SELECT count(*) FROM superhero\n' },
        'a'.repeat(64),
        { executor: 'x', sqliteVersion: '3' },
        DEFAULT_EVAL_OPTIONS,
      ),
    );
    expect(
      validVerdict({ status: 'ok', ex: 1, softF1: 1, error: null, predRowCount: 1, goldRowCount: 1, elapsedMs: 1 }),
    ).toBe(true);
    expect(
      validVerdict({ status: 'ok', ex: 2, softF1: 1, error: null, predRowCount: 1, goldRowCount: 1, elapsedMs: 1 }),
    ).toBe(false);
    expect(
      validVerdict({
        status: 'missing-db',
        ex: 0,
        softF1: 0,
        error: 'x',
        predRowCount: null,
        goldRowCount: null,
        elapsedMs: null,
      }),
    ).toBe(false);
  }, 120_000);

  it('an entry edited in the SQLite file (its EX flipped, every non-secret column made consistent) fails its MAC: a miss, counted in a warning, executed again with the true verdict', async () => {
    const items = [
      superheroItem(0, 'SELECT count(*) FROM superhero'),
      superheroItem(1, 'SELECT count(id) FROM superhero'),
    ];
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vcache-'));
    const first = await withFileCache(dir, pool);
    const a = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: first.caching, reuse: false });
    expect(a.results.map((r) => r.ex)).toEqual([1, 1]);
    await first.file.save();

    // The attack: the verdict's EX set to 0 in place, the row's size recomputed (no checksum
    // anyone can recompute exists), and the second row given the first's body and MAC.
    const db = new Sqlite(path.join(dir, CACHE_FILE));
    const rows = db.prepare(`SELECT id, body, mac FROM entries WHERE kind = 'v' ORDER BY id`).all() as Array<{
      id: Buffer;
      body: string;
      mac: Buffer;
    }>;
    expect(rows).toHaveLength(2);
    const forged = rows[0]!.body.replace('"ex":1', '"ex":0').replace('"softF1":1', '"softF1":0');
    expect(forged).not.toBe(rows[0]!.body);
    db.prepare('UPDATE entries SET body = ?, bytes = ? WHERE id = ?').run(
      forged,
      forged.length + ROW_OVERHEAD,
      rows[0]!.id,
    );
    db.prepare('UPDATE entries SET body = ?, mac = ? WHERE id = ?').run(rows[0]!.body, rows[0]!.mac, rows[1]!.id);
    db.close();

    const warnings: string[] = [];
    const count = counting(pool);
    const second = await withFileCache(dir, count.executor, (m) => warnings.push(m));
    const b = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: second.caching, reuse: false });
    expect(second.caching.stats.hitSamples.size).toBe(0);
    expect(count.asked.map((i) => i.index)).toEqual([0, 1]);
    expect(b.results.map(verdict)).toEqual(a.results.map(verdict));
    await second.file.save();
    expect(warnings).toEqual([
      expect.stringMatching(/^2 entries of the verdict cache .*verdicts-v2\.sqlite failed authentication .* ignored/),
    ]);

    // The true verdicts were stored again: a third run takes both from the cache, silently.
    const third = await withFileCache(dir, pool, (m) => warnings.push(m));
    const c = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: third.caching, reuse: false });
    expect(third.caching.stats.hitSamples.size).toBe(2);
    expect(c.results.map(verdict)).toEqual(a.results.map(verdict));
    await third.file.save();
    expect(warnings).toHaveLength(1);
  }, 120_000);

  it('a file at the store path that is not ours (another SQLite database, not SQLite, a link) is refused and left as it is; the v1 JSON file is not touched', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vcache-'));
    const other = new Sqlite(path.join(dir, CACHE_FILE));
    other.exec('CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES (1)');
    other.close();
    const before = readFileSync(path.join(dir, CACHE_FILE));
    await expect(openFileVerdictCache(dir, { warn: () => undefined })).rejects.toThrow(
      /verdicts-v2\.sqlite is not a verdict cache of this program: it is left as it is/,
    );
    expect(readFileSync(path.join(dir, CACHE_FILE))).toEqual(before);

    writeFileSync(path.join(dir, CACHE_FILE), '{"someone":"else"}'.repeat(10));
    await expect(openFileVerdictCache(dir, { warn: () => undefined })).rejects.toThrow(
      /is not an SQLite file .*left as it is/,
    );
    expect(readFileSync(path.join(dir, CACHE_FILE), 'utf8')).toBe('{"someone":"else"}'.repeat(10));

    const mine = path.join(dir, 'mine.txt');
    writeFileSync(mine, '');
    rmSync(path.join(dir, CACHE_FILE));
    symlinkSync(mine, path.join(dir, CACHE_FILE));
    await expect(openFileVerdictCache(dir, { warn: () => undefined })).rejects.toThrow(/is not a regular file/);
    expect(readFileSync(mine, 'utf8')).toBe('');

    const fresh = mkdtempSync(path.join(tmpdir(), 'wb-vcache-'));
    writeFileSync(path.join(fresh, OLD_CACHE_FILE), '{"format":"rlvr-workbench verdict cache","version":1}');
    const store = await openFileVerdictCache(fresh, { warn: () => undefined });
    await store.put([['k', cached(1, 1)]]);
    await store.save();
    expect(readFileSync(path.join(fresh, OLD_CACHE_FILE), 'utf8')).toBe(
      '{"format":"rlvr-workbench verdict cache","version":1}',
    );
  });

  it('the CLI: a second eval takes its verdicts from --cache and records how many; a cache whose verdicts were edited in its file is a warning, not a different result', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vcache-cli-'));
    const args = [
      'eval',
      '--predictions',
      sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json'),
      '--gold',
      sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
      '--dataset',
      sharedData('bird', 'minidev', 'mini_dev_sqlite.json'),
      '--db-root',
      DB_ROOT,
      '--cache',
      dir,
    ];
    const outs = [0, 1, 2].map((i) => path.join(dir, `out${i}.json`));
    const r0 = await runCli([...args, '--out', outs[0]!]);
    expect(r0.code, r0.stderr).toBe(0);
    const r1 = await runCli([...args, '--out', outs[1]!]);
    expect(r1.code, r1.stderr).toBe(0);
    // Every cached verdict's EX flipped in the file itself (and its size column kept consistent).
    const db = new Sqlite(path.join(dir, CACHE_FILE));
    const rows = db.prepare(`SELECT id, body FROM entries WHERE kind = 'v'`).all() as Array<{
      id: Buffer;
      body: string;
    }>;
    const flip = (b: string) => b.replace(/"ex":([01])/, (_m, x: string) => `"ex":${1 - Number(x)}`);
    for (const { id, body } of rows)
      db.prepare('UPDATE entries SET body = ?, bytes = ? WHERE id = ?').run(
        flip(body),
        flip(body).length + ROW_OVERHEAD,
        id,
      );
    db.close();
    const r2 = await runCli([...args, '--out', outs[2]!]);
    expect(r2.code, r2.stderr).toBe(0);
    // Said at each end of phase that met them (the main run, then the version check's own
    // verdicts): every edited row counted once.
    const failed = [
      ...r2.stderr.matchAll(
        /warning: (\d+) entries of the verdict cache (.*) failed authentication \(changed outside this program/g,
      ),
    ];
    expect(failed.map((m) => m[2])).toEqual(failed.map(() => path.join(dir, CACHE_FILE)));
    expect(failed.reduce((n, m) => n + Number(m[1]), 0)).toBe(rows.length);
    const [o0, o1, o2] = outs.map((f) => JSON.parse(readFileSync(f, 'utf8')));
    expect(o0.summary.executions.from_cache).toBe(0);
    // All 140 but the two whose texts call a date or time function (questions 38 and 74: never cached).
    expect(o1.summary.executions.from_cache).toBe(138);
    expect(o2.summary.executions.from_cache).toBe(0);
    const items = (o: { items: Array<Record<string, unknown>> }) =>
      o.items.map((i) => [i.ex, i.soft_f1, i.status, i.error, i.pred_rows, i.gold_rows, i.result_key]);
    expect(items(o1)).toEqual(items(o0));
    expect(items(o2)).toEqual(items(o0));
    expect(o1.summary.by_difficulty).toEqual(o0.summary.by_difficulty);
  }, 300_000);
});

describe("the app's runs take verdicts from the cache through the run recipe (run service, memory ports)", () => {
  const PREDICTIONS = sharedData('bird', 'predictions', 'sql_output_kg', 'predict_mini_dev_gpt-4_sqlite.json');

  async function app(store: VerdictStore & FactsStore) {
    const dataset = await fileDataset({
      questions: sharedData('bird', 'minidev', 'mini_dev_sqlite.json'),
      gold: sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
      dbRoot: DB_ROOT,
    });
    const memory = memoryAppPorts(dataset, DB_ROOT);
    // Databases opened in a worker (their bytes read for it), counted.
    const opened: string[] = [];
    const ports: AppPorts = {
      ...memory.ports,
      datasets: {
        ...memory.ports.datasets,
        source: (databases, name) => {
          const source = memory.ports.datasets.source(databases, name);
          return { ...source, load: (dbId) => (opened.push(dbId), source.load(dbId)) };
        },
      },
      verdicts: store,
      executors: { ...memory.ports.executors, verdictExecutor: 'sql.js test' },
    };
    const service = createRunService(ports);
    const replay = async (name: string, config: RunConfig = DEFAULT_RUN_CONFIG) => {
      const run = await service.startReplay({
        name,
        datasetId: dataset.id,
        subset: { description: 'every question', indices: [] },
        predictions: { name: path.basename(PREDICTIONS), text: readFileSync(PREDICTIONS, 'utf8') },
        config,
      });
      return { run, samples: memory.samples(run.id) };
    };
    return { replay, opened };
  }
  const same = (samples: readonly SampleRecord[]) => samples.map(({ goldReused: _g, ...rest }) => rest);

  it('a file replayed twice: the second run takes every cacheable verdict from the cache, records how many, and stores the same samples; unticked, none', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vcache-app-'));
    // The CLI's file store, with its facts, as the app's IndexedDB store is (verdict-cache-idb.ts).
    const file = await openFileVerdictCache(dir, { warn: () => undefined });
    const { replay, opened } = await app({
      get: file.get,
      put: file.put,
      getFacts: async (key) => file.facts(key),
      putFacts: async (key, facts) => file.setFacts(key, facts),
    });
    const first = await replay('first');
    expect(first.run.executions).toMatchObject({ fromCache: 0 });
    expect(opened.length).toBeGreaterThanOrEqual(3);
    opened.length = 0;
    const second = await replay('second');
    // Verdicts and the databases' facts from the cache: only the database of the one item the
    // cache may not hold was opened (question 74, whose gold calls date(): never cached).
    expect(opened).toEqual(['student_club']);
    const scored = first.samples.filter((s) => s.status !== 'missing-db');
    expect(scored).toHaveLength(140);
    // Every other verdict of the 140 scored items may be cached (no write, no random(), no machine failure).
    const uncached = scored.filter((s) => !(cacheableResult(s) && cacheableItem({ ...s, predSql: s.sql })));
    expect(uncached.map((s) => s.index)).toEqual([74]);
    expect(second.run.executions!.fromCache).toBe(139 - second.run.executions!.reused);
    // The 360 items without a database, and question 74.
    expect(second.run.executions!.executed).toBe(361);
    // The same verdicts; one from the cache keeps the time of the execution it came from.
    const timeless = (samples: readonly SampleRecord[]) => same(samples).map(({ elapsedMs: _e, ...r }) => r);
    expect(timeless(second.samples)).toEqual(timeless(first.samples));
    const cached = (samples: readonly SampleRecord[]) => same(samples).filter((s) => s.index !== 74);
    expect(cached(second.samples)).toEqual(cached(first.samples));
    expect(second.run.score).toEqual(first.run.score);

    const third = await replay('third', { ...DEFAULT_RUN_CONFIG, verdictCache: false });
    expect(third.run.executions).toMatchObject({ fromCache: 0, executed: first.run.executions!.executed });
  }, 300_000);

  it('a store that cannot be read or written (a full disk) costs executions, never the run', async () => {
    const full = () => Promise.reject(new Error('QuotaExceededError'));
    const broken: VerdictStore & FactsStore = { get: full, put: full, getFacts: full, putFacts: full };
    const { replay } = await app(broken);
    const one = await replay('broken store');
    const two = await replay('broken store again');
    expect(one.run.status).toBe('done');
    expect(two.run.executions).toMatchObject({ fromCache: 0 });
    expect(same(two.samples).map(({ elapsedMs: _e, ...r }) => r)).toEqual(
      same(one.samples).map(({ elapsedMs: _e, ...r }) => r),
    );
  }, 300_000);
});

/** A verdict of `ex` with `rows` rows; `error` makes its JSON as long as wanted. */
function cached(ex: 0 | 1, rows: number, error: string | null = null): CachedVerdict {
  return error === null
    ? { status: 'ok', ex, softF1: ex, error: null, predRowCount: rows, goldRowCount: rows, elapsedMs: 1 }
    : { status: 'error', ex: 0, softF1: 0, error, predRowCount: null, goldRowCount: null, elapsedMs: 1 };
}

describe('the CLI store (verdicts-v2.sqlite): bounds, key, two runs at once, no trust in stat', () => {
  const open = (dir: string, options: Partial<Parameters<typeof openFileVerdictCache>[1]> = {}) =>
    openFileVerdictCache(dir, { warn: () => undefined, ...options });

  it('bounded in entries: past the bound the least recently used go first, a lookup counting as a use', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vstore-'));
    let t = 1000;
    const a = await open(dir, { maxEntries: 3, now: () => t++ });
    await a.put([['a', cached(1, 1)]]);
    await a.put([['b', cached(1, 2)]]);
    await a.put([['c', cached(1, 3)]]);
    expect(await a.get(['a'])).toEqual([cached(1, 1)]); // a is now the most recently used
    await a.put([['d', cached(0, 4)]]);
    await a.save();
    const b = await open(dir, { maxEntries: 3, now: () => t++ });
    expect(b.entries).toBe(3);
    expect(await b.get(['a', 'b', 'c', 'd'])).toEqual([cached(1, 1), undefined, cached(1, 3), cached(0, 4)]);
    await b.save();
  });

  it('bounded in bytes: a few long verdicts push out the least recently used until the JSON (plus a fixed cost a row) fits', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vstore-'));
    let t = 1000;
    const long = (c: string) => cached(0, 0, `prediction: ${c.repeat(1000)}`);
    const size = JSON.stringify(long('x')).length + ROW_OVERHEAD;
    const a = await open(dir, { maxBytes: 3 * size, now: () => t++ });
    for (const k of ['a', 'b', 'c', 'd', 'e']) await a.put([[k, long(k)]]);
    await a.get(['b']);
    await a.save();
    const b = await open(dir, { maxBytes: 3 * size, now: () => t++ });
    // Within the bound three rows fit: b (used last), e and d; a and c went first.
    expect(b.entries).toBe(3);
    expect(await b.get(['a', 'b', 'c', 'd', 'e'])).toEqual([undefined, long('b'), undefined, long('d'), long('e')]);
    await b.save();
  });

  it('the key: made once, private (0600); one that others may read, not a regular file, or not ours is refused with a message naming it, and the CLI runs without a cache', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vstore-'));
    await (await open(dir)).save();
    const key = path.join(dir, KEY_FILE);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dir, CACHE_FILE)).mode & 0o777).toBe(0o600);
    const bytes = readFileSync(key);
    expect(bytes).toHaveLength(32);
    await (await open(dir)).save();
    expect(readFileSync(key)).toEqual(bytes);

    chmodSync(key, 0o644);
    await expect(open(dir)).rejects.toThrow(
      /verdict cache's key .*verdicts-v2\.key may be read or written by others \(mode 644\).*chmod 600/,
    );
    chmodSync(key, 0o600);
    renameSync(key, `${key}.real`);
    symlinkSync(`${key}.real`, key);
    await expect(open(dir)).rejects.toThrow(/verdicts-v2\.key is not a regular file/);
    rmSync(key);
    renameSync(`${key}.real`, key);
    writeFileSync(path.join(dir, 'short'), 'abc', { mode: 0o600 });
    renameSync(path.join(dir, 'short'), key);
    await expect(open(dir)).rejects.toThrow(/verdicts-v2\.key is 3 bytes, not 32/);
    writeFileSync(key, bytes);
    chmodSync(key, 0o640);

    // The CLI: a warning naming the key, the run scored as without a cache, the key left as it is.
    const pred = tempFile('preds.sql');
    const gold = tempFile('gold.sql');
    writeFileSync(pred, 'SELECT count(*) FROM superhero\n');
    writeFileSync(gold, 'SELECT count(*) FROM superhero\tsuperhero\n');
    const out = tempFile('o.json');
    const r = await runCli([
      'eval',
      '--predictions',
      pred,
      '--gold',
      gold,
      '--db-root',
      DB_ROOT,
      '--cache',
      dir,
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /warning: the verdict cache folder .* cannot be used \(.*verdicts-v2\.key may be read or written by others/,
    );
    expect(readJson(out).items.map((i: { ex: number }) => i.ex)).toEqual([1]);
    expect(readJson(out).summary.executions.from_cache).toBe(0);
    expect(statSync(key).mode & 0o777).toBe(0o640);
    expect(readFileSync(key)).toEqual(bytes);
  }, 120_000);

  it('two runs at once (two processes, one new folder): neither loses the key race nor corrupts the file; every verdict of both is there and authentic', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vstore-'));
    const script = path.join(mkdtempSync(path.join(tmpdir(), 'wb-vstore-js-')), 'writer.mts');
    writeFileSync(
      script,
      `import { openFileVerdictCache } from ${JSON.stringify(path.join(ROOT, 'src/adapters/node/verdict-cache-file.ts'))};
const [dir, who] = process.argv.slice(2);
const v = (n) => ({ status: 'ok', ex: 1, softF1: 1, error: null, predRowCount: n, goldRowCount: n, elapsedMs: 1 });
for (let round = 0; round < 20; round++) {
  const store = await openFileVerdictCache(dir, { warn: (m) => console.error(m) });
  await store.put(Array.from({ length: 100 }, (_, i) => [who + ':' + (round * 100 + i), v(round * 100 + i)]));
  const back = await store.get([who + ':' + round * 100]);
  if (back[0]?.predRowCount !== round * 100) throw new Error('lost ' + who + ' ' + round);
  await store.save();
}
`,
    );
    const writer = (who: string) => runCommand(process.execPath, ['--import', 'tsx', script, dir, who], { cwd: ROOT });
    const [x, y] = await Promise.all([writer('x'), writer('y')]);
    expect(x.code, x.stderr).toBe(0);
    expect(y.code, y.stderr).toBe(0);
    const db = new Sqlite(path.join(dir, CACHE_FILE), { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
    const warnings: string[] = [];
    const store = await open(dir, { warn: (m) => warnings.push(m) });
    expect(store.entries).toBe(4000);
    const keys = ['x', 'y'].flatMap((w) => Array.from({ length: 2000 }, (_, i) => `${w}:${i}`));
    const got = await store.get(keys);
    expect(got.map((v) => v?.predRowCount)).toEqual(keys.map((k) => Number(k.slice(2))));
    await store.save();
    expect(warnings).toEqual([]);
  }, 120_000);

  it('trusts no stat: a database with the same path, size and modification time but other bytes (cp -p, rsync -a) gets its own sha256, and no path is kept in the store', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vstore-'));
    const dbFile = path.join(mkdtempSync(path.join(tmpdir(), 'wb-vstore-db-')), 'x.sqlite');
    // Both versions get the same modification time, as cp -p gives a copy its source's.
    const same = new Date('2024-01-02T03:04:05Z');
    writeFileSync(dbFile, 'a'.repeat(4096));
    utimesSync(dbFile, same, same);
    const first = statSync(dbFile);
    const store = await open(dir);
    const before = await dbFileSha256('x', dbFile);
    writeFileSync(dbFile, 'b'.repeat(4096));
    utimesSync(dbFile, same, same);
    expect([statSync(dbFile).size, statSync(dbFile).mtimeMs]).toEqual([first.size, first.mtimeMs]);
    const after = await dbFileSha256('x', dbFile);
    expect(after).not.toBe(before);
    expect(after).toBe(await sha256File(dbFile));
    await store.put([['k', cached(1, 1)]]);
    await store.save();
    expect(readFileSync(path.join(dir, CACHE_FILE)).includes(path.dirname(dbFile))).toBe(false);
  });
});
