import { afterAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import { rewardAnnotator } from '../../src/core/run/item-annotations.ts';
import { runEvaluation } from '../../src/core/run/replay.ts';
import { readDbFacts } from '../../src/core/eval/db-facts.ts';
import type { EvalItem, ItemResult } from '../../src/core/types.ts';
import { runCli, tempFile, readJson } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { superheroItem, VERDICT_FIELDS, verdictOf } from '../helpers/item-results.ts';
import { thirteenSampleRun } from '../helpers/thirteen-files.ts';

/** What the two engines must agree on: an item's verdict without its result key. */
const ENGINE_FIELDS = VERDICT_FIELDS.filter((f) => f !== 'resultKey');
const verdict = (r: ItemResult) => verdictOf(r, ENGINE_FIELDS);

const DB_ROOT = sharedData('bird', 'databases');

describe('--engine native: better-sqlite3 behind the same SQL worker engine', () => {
  const native = createNodeSqlPool({ dbRoot: DB_ROOT, workers: 2, engine: 'native' });
  const wasm = createNodeSqlPool({ dbRoot: DB_ROOT, workers: 2 });
  afterAll(() => Promise.all([native.dispose(), wasm.dispose()]));

  it('agrees with sql.js on every item of the 13 mini-dev files that is not version-sensitive', async () => {
    const items = thirteenSampleRun();
    expect(items).toHaveLength(1820);
    const run = async (pool: typeof native) => {
      const facts = await readDbFacts(
        pool,
        items.map((i) => i.dbId),
      );
      const annotate = rewardAnnotator({ columnTypes: facts.columnTypes });
      return { facts, out: await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: pool, annotate }) };
    };
    const n = await run(native);
    const w = await run(wasm);
    expect(n.facts.sqliteVersion).not.toBe(w.facts.sqliteVersion);
    const flagged = (r: ItemResult) => (r.versionFeatures?.length ?? 0) > 0;
    // A query near the 30 s limit may time out on one side only on a loaded machine: set apart, few.
    const slow = new Set(
      n.out.results.flatMap((r, i) => (r.status === 'timeout' || w.out.results[i]!.status === 'timeout' ? [i] : [])),
    );
    expect(slow.size).toBeLessThanOrEqual(3);
    const differ = n.out.results.flatMap((r, i) =>
      JSON.stringify(verdict(r)) === JSON.stringify(verdict(w.out.results[i]!)) ? [] : [i],
    );
    const unexplained = differ.filter(
      (i) => !slow.has(i) && !flagged(n.out.results[i]!) && !flagged(w.out.results[i]!),
    );
    expect(unexplained.map((i) => [verdict(n.out.results[i]!), verdict(w.out.results[i]!), items[i]!.predSql])).toEqual(
      [],
    );
    console.log(
      `native ${n.facts.sqliteVersion} vs sql.js ${w.facts.sqliteVersion}: ${differ.length} of 1820 verdicts differ, all on version-sensitive items (${n.out.results.filter(flagged).length} flagged)`,
    );
  }, 600_000);

  it('the same read-only, write and error semantics on hand-written items', async () => {
    const items: EvalItem[] = [
      'DELETE FROM superhero',
      'SELECT count(*) FROM superhero; SELECT 1',
      'SELECT "no such thing" FROM superhero LIMIT 1',
      'SELECT count(*) FROM superhero;;',
      'SELECT nope FROM superhero',
      '',
      '-- nothing',
      'SELECT 9007199254740993 AS big',
      'WITH x AS (SELECT 1) DELETE FROM superhero',
      "VACUUM INTO '/tmp/x.sqlite'",
      "ATTACH ':memory:' AS m",
    ].map((predSql, index) => superheroItem(index, predSql));
    for (const readOnly of [false, true]) {
      const options = { ...DEFAULT_EVAL_OPTIONS, readOnly };
      const a = await runEvaluation(items, options, { executor: native, reuse: false });
      const b = await runEvaluation(items, options, { executor: wasm, reuse: false });
      expect(a.results.map(verdict)).toEqual(b.results.map(verdict));
    }
  }, 120_000);

  it('the CLI names the engine and its SQLite version in the output and the run file', async () => {
    const run = tempFile('native.run.json');
    const r = await runCli([
      'eval',
      '--engine',
      'native',
      '--no-cache',
      '--predictions',
      sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json'),
      '--gold',
      sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
      '--db-root',
      DB_ROOT,
      '--run-out',
      run,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/verdicts from SQLite 3\.\d+\.\d+ \(better-sqlite3 \d+\.\d+\.\d+\)/);
    expect(readJson(run).run.executor).toMatch(/^better-sqlite3 /);
    const bad = await runCli([
      'eval',
      '--engine',
      'native',
      '--metrics',
      'ex,ts',
      '--predictions',
      'x',
      '--gold',
      'y',
      '--db-root',
      'z',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--engine: native runs metrics ex and soft-f1/);
  }, 120_000);
});
