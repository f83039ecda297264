import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import { CACHE_FILE, openFileVerdictCache } from '../../src/adapters/node/verdict-cache-file.ts';
import { sha256File } from '../../src/cli/commands/run-out.ts';
import { DEFAULT_EVAL_OPTIONS, type SqlExecutor } from '../../src/core/eval/executor.ts';
import { runEvaluation } from '../../src/core/run/replay.ts';
import {
  cacheableItem,
  cacheableResult,
  cachingExecutor,
  validVerdict,
  verdictKey,
  type FactsStore,
  type VerdictStore,
} from '../../src/core/run/verdict-cache.ts';
import { createRunService } from '../../src/app/run-service.ts';
import type { AppPorts } from '../../src/app/ports.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig, type SampleRecord } from '../../src/core/run/types.ts';
import { fileDataset, memoryAppPorts } from '../helpers/memory-app-ports.ts';
import type { EvalItem, ItemResult } from '../../src/core/types.ts';
import { runCli } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { superheroItem, verdictOf } from '../helpers/item-results.ts';
import { thirteenSampleRun } from '../helpers/thirteen-files.ts';

const DB_ROOT = sharedData('bird', 'databases');
/** What the cache must give back exactly: the verdict of every item (its result key included), and its question. */
const verdict = (r: ItemResult) => [...verdictOf(r), r.questionId];

/** The pool, counting the items it is asked to execute. */
function counting(inner: SqlExecutor) {
  const asked: EvalItem[] = [];
  const executor: SqlExecutor = {
    evaluate: (items, options, hooks) => {
      asked.push(...items);
      return inner.evaluate(items, options, hooks);
    },
    dispose: () => inner.dispose(),
  };
  return { executor, asked };
}

async function withFileCache(dir: string, inner: SqlExecutor, warn: (m: string) => void = () => undefined) {
  const file = await openFileVerdictCache(dir, { warn });
  const caching = cachingExecutor(inner, {
    store: file,
    context: { executor: 'sql.js test', sqliteVersion: '3.test' },
    dbSha256: (dbId) => file.fileSha256(path.join(DB_ROOT, dbId, `${dbId}.sqlite`), sha256File),
  });
  return { file, caching };
}

describe('the verdict cache across runs, on real data', () => {
  const pool = createNodeSqlPool({ dbRoot: DB_ROOT, workers: 2 });
  afterAll(() => pool.dispose());

  it('the 13 mini-dev files: a second run from the cache (written, read back from its file) gives every item the same EX, Soft-F1, status and error, executing none of the cached ones', async () => {
    const items = thirteenSampleRun();
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vcache-'));
    const first = await withFileCache(dir, pool);
    const a = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: first.caching });
    expect(first.caching.stats.hitSamples.size).toBe(0);
    expect(first.caching.stats.stored).toBeGreaterThan(1000);
    await first.file.save();

    const count = counting(pool);
    const second = await withFileCache(dir, count.executor);
    expect(second.file.entries).toBe(first.file.entries);
    const b = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: second.caching });
    expect(b.results.map(verdict)).toEqual(a.results.map(verdict));
    expect(b.summary.byDifficulty).toEqual(a.summary.byDifficulty);
    // What was executed again: only items the cache may not hold (writes, random(), machine failures).
    for (const it of count.asked) {
      const r = a.results[it.sample!]!;
      expect(
        !cacheableItem(it) ||
          r.mutatedDb ||
          !['ok', 'error'].includes(r.status) ||
          (r.status === 'error' && !/^(prediction|gold): /.test(r.error ?? '')),
      ).toBe(true);
    }
    expect(second.caching.stats.hitSamples.size).toBeGreaterThan(1000);
    console.log(
      `13 files, ${items.length} items: ${first.caching.stats.stored} verdicts stored, ${second.caching.stats.hitSamples.size} answered from the cache, ${count.asked.length} executed again`,
    );
  }, 600_000);

  it('never caches a prediction that writes or calls random(), and a timeout only under the same timeout', async () => {
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

  it('a truncated cache file is ignored with a warning and replaced; a foreign file is ignored and left as it is', async () => {
    const items: EvalItem[] = [
      {
        index: 0,
        questionId: 0,
        dbId: 'superhero',
        difficulty: 'simple',
        predSql: 'SELECT 1',
        goldSql: 'SELECT 1',
        extraction: { rule: 'sql-line', thinkStripped: false },
      },
    ];
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-vcache-'));
    const first = await withFileCache(dir, pool);
    await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: first.caching });
    await first.file.save();
    const whole = readFileSync(path.join(dir, CACHE_FILE), 'utf8');
    writeFileSync(path.join(dir, CACHE_FILE), whole.slice(0, Math.floor(whole.length / 2)));
    const warnings: string[] = [];
    const count = counting(pool);
    const second = await withFileCache(dir, count.executor, (m) => warnings.push(m));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/verdict cache .*verdicts-v1\.json is ignored: it is not whole/);
    expect(second.file.entries).toBe(0);
    await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: second.caching });
    expect(count.asked).toHaveLength(1);
    await second.file.save();
    expect(() => JSON.parse(readFileSync(path.join(dir, CACHE_FILE), 'utf8'))).not.toThrow();

    // An edited verdict: the checksum no longer matches.
    writeFileSync(
      path.join(dir, CACHE_FILE),
      readFileSync(path.join(dir, CACHE_FILE), 'utf8').replace('"ex":1', '"ex":0'),
    );
    const edited: string[] = [];
    expect((await withFileCache(dir, pool, (m) => edited.push(m))).file.entries).toBe(0);
    expect(edited[0]).toMatch(/checksum does not match/);

    const foreign = mkdtempSync(path.join(tmpdir(), 'wb-vcache-'));
    writeFileSync(path.join(foreign, CACHE_FILE), '{"someone":"else"}');
    const w: string[] = [];
    const other = await withFileCache(foreign, pool, (m) => w.push(m));
    await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: other.caching });
    await other.file.save();
    expect(w[0]).toMatch(/is not a verdict cache of this program.*left as it is/);
    expect(readFileSync(path.join(foreign, CACHE_FILE), 'utf8')).toBe('{"someone":"else"}');
  }, 120_000);

  it('the CLI: a second eval takes its verdicts from --cache and records how many; a truncated cache file is a warning, not a different result', async () => {
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
    const cut = readFileSync(path.join(dir, CACHE_FILE), 'utf8');
    writeFileSync(path.join(dir, CACHE_FILE), cut.slice(0, 1000));
    const r2 = await runCli([...args, '--out', outs[2]!]);
    expect(r2.code, r2.stderr).toBe(0);
    expect(r2.stderr).toMatch(/warning: verdict cache .* is ignored: it is not whole/);
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
