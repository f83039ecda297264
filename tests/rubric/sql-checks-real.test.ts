/**
 * Programmatic SQL rubric checks on real BIRD mini-dev predictions and databases
 * (../shared/data/bird): the one-item "result matches gold" rubric equals EX on every item,
 * and the other checks agree with what SQLite did.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { BIRD_RUBRIC, EX_ONLY_RUBRIC, birdSample } from '../../src/core/rubric/bird-rubric.ts';
import { scoreSample } from '../../src/core/rubric/score.ts';
import { runSqlCheck, type Schema } from '../../src/core/rubric/sql-checks.ts';
import type { ItemStatus } from '../../src/core/types.ts';
import { evalMinidev } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { runBirdPredictions, miniDev, type BirdRunItem } from './helpers/bird-run.ts';
import { BIRD_DBS_HERE, readBirdSchema } from './helpers/schema.ts';

interface OutItem {
  index: number;
  question_id: number;
  db_id: string;
  ex: 0 | 1;
  status: ItemStatus;
  error: string | null;
  mutated_db: boolean;
}

const schemas: Record<string, Schema> = {};
beforeAll(async () => {
  for (const db of BIRD_DBS_HERE) schemas[db] = await readBirdSchema(db);
});

// Real executions (CLI and worker pool) on a 2-core machine that other test files share.
describe('a rubric with the single item "result matches gold" is the EX reward', { timeout: 240_000 }, () => {
  it.each([
    'TA_output/predict_mini_dev_gpt-4-o_cot_SQLite.json',
    'sql_output_kg/predict_mini_dev_meta-llama-3-8b-instruct-2_sqlite.json',
  ])('%s: explicit score = ex on all 500 items of `eval --out`', async (file) => {
    const { report } = await evalMinidev<{ items: OutItem[] }>(sharedData('bird', 'predictions', file), [
      '--workers',
      '2',
    ]);
    const items = report.items;
    expect(items).toHaveLength(500);
    const { questions } = miniDev();
    const mismatches: string[] = [];
    for (const it of items) {
      const q = questions[it.index]!;
      const s = await scoreSample(
        EX_ONLY_RUBRIC,
        birdSample({
          question: q,
          sql: '',
          execution: { status: it.status, ex: it.ex, error: it.error, mutatedDb: it.mutated_db },
        }),
        { aggregations: ['explicit'] },
      );
      // An item without its database was never run: not scored (null), never a silent EX 0.
      if (it.status === 'missing-db') {
        if (s.explicit!.score !== null || s.criteria[0]!.status !== 'not-applicable')
          mismatches.push(`item ${it.index}: unscored item got ${s.explicit!.score}`);
      } else if (s.explicit!.score !== it.ex || s.explicit!.status !== 'ok')
        mismatches.push(`item ${it.index}: explicit ${s.explicit!.score} vs ex ${it.ex}`);
    }
    expect(mismatches).toEqual([]);
    // Both outcomes occur among the items that ran; the 360 items without a database are not scored.
    const present = items.filter((i) => i.status !== 'missing-db');
    expect(present).toHaveLength(140);
    expect(present.some((i) => i.ex === 1) && present.some((i) => i.ex === 0)).toBe(true);
  });
});

describe('schema-only on the real schemas (read with sql.js from the .sqlite files)', { timeout: 240_000 }, () => {
  it('accepts all 140 gold queries whose database is present', () => {
    const { gold } = miniDev();
    const here = gold.filter((g) => schemas[g.dbId]);
    expect(here).toHaveLength(140);
    const rejected = here
      .map((g, i) => ({
        i,
        r: runSqlCheck({ kind: 'sql', name: 'schema-only' }, { sql: g.sql, schema: schemas[g.dbId] }),
      }))
      .filter(({ r }) => r.met !== true);
    expect(rejected).toEqual([]);
  });

  /**
   * Scope limits of the heuristic (subquery scopes are not separated): SQLite says "no such
   * column" for a column of a table that only another subquery of the same query uses.
   */
  const KNOWN_MISSES: Record<string, number[]> = {
    'sql_output_kg/predict_mini_dev_gpt-35-turbo-instruct_sqlite.json': [57, 275],
  };

  it.each([
    'sql_output_kg/predict_mini_dev_gpt-35-turbo-instruct_sqlite.json',
    'sql_output_kg/predict_mini_dev_meta-llama-3-8b-instruct-2_sqlite.json',
    'TA_output/predict_mini_dev_gpt-4-o_cot_SQLite.json',
  ])('%s: agrees with SQLite: a flagged query never ran, and "no such column/table" is flagged', async (file) => {
    const run = await runBirdPredictions(file);
    const flaggedButRan: number[] = [];
    const missed: number[] = [];
    let flagged = 0;
    for (const r of run) {
      const check = runSqlCheck(
        { kind: 'sql', name: 'schema-only' },
        { sql: r.item.predSql, schema: schemas[r.item.dbId] },
      );
      if (check.met === false) flagged++;
      if (check.met === false && r.result.status === 'ok') flaggedButRan.push(r.item.index);
      if (check.met === true && /no such (column|table)/.test(r.result.error ?? '')) missed.push(r.item.index);
    }
    expect(flaggedButRan).toEqual([]);
    expect(missed).toEqual(KNOWN_MISSES[file] ?? []);
    if (file.includes('gpt-35-turbo-instruct')) expect(flagged).toBeGreaterThan(10);
  });
});

describe('execution-based checks on a real run', () => {
  let run: BirdRunItem[];
  beforeAll(async () => {
    // One prediction that writes, added to the real file: the pool executes it on the real database.
    run = await runBirdPredictions('sql_output_kg/predict_mini_dev_gpt-35-turbo-instruct_sqlite.json', (items) => [
      ...items,
      { ...items[0]!, index: 10_000, predSql: 'DELETE FROM event' },
    ]);
  }, 240_000);

  it('executes = the prediction ran; matches-gold = EX; no-write holds for every published prediction', () => {
    const real = run.filter((r) => r.item.index !== 10_000);
    expect(real).toHaveLength(140);
    for (const r of real) {
      const input = { sql: r.item.predSql, execution: r.facts };
      expect(runSqlCheck({ kind: 'sql', name: 'executes' }, input).met, `item ${r.item.index}`).toBe(
        r.result.status === 'ok',
      );
      expect(runSqlCheck({ kind: 'sql', name: 'matches-gold' }, input).met).toBe(r.result.ex === 1);
      expect(runSqlCheck({ kind: 'sql', name: 'no-write' }, input).met).toBe(true);
    }
    expect(real.filter((r) => r.result.status !== 'ok').length).toBeGreaterThan(10);
  });

  it('no-write fails for a DELETE that the pool saw change the real database', () => {
    const w = run.find((r) => r.item.index === 10_000)!;
    expect(w.facts.mutatedDb).toBe(true);
    expect(runSqlCheck({ kind: 'sql', name: 'no-write' }, { sql: w.item.predSql, execution: w.facts })).toMatchObject({
      met: false,
      explanation: 'the query changed the database',
    });
  });

  it('column-count: met whenever EX = 1 with rows, and some wrong answers return the wrong number of columns', () => {
    const outcomes = run
      .filter((r) => r.item.index !== 10_000)
      .map((r) => ({
        r,
        c: runSqlCheck({ kind: 'sql', name: 'column-count' }, { sql: r.item.predSql, execution: r.facts }),
      }));
    for (const { r, c } of outcomes) {
      if (r.result.ex === 1 && (r.result.goldRowCount ?? 0) > 0) expect(c.met, `item ${r.item.index}`).toBe(true);
      if (r.result.status !== 'ok') expect(c.met).toBe(false);
    }
    const wrongWidth = outcomes.filter(({ r, c }) => r.result.status === 'ok' && c.met === false);
    expect(wrongWidth.length).toBeGreaterThan(0);
    expect(wrongWidth.every(({ r }) => r.result.ex === 0)).toBe(true);
  });
});

describe('uses-evidence-formula on the gold queries (documented heuristic)', () => {
  it('applies to the 29 questions whose evidence defines a formula; 25 golds use it, 4 compute it another way', () => {
    const { questions } = miniDev();
    const here = questions.filter((q) => schemas[q.dbId]);
    const results = here.map((q) => ({
      q,
      r: runSqlCheck(
        { kind: 'sql', name: 'uses-evidence-formula' },
        { sql: q.goldSql, evidence: q.evidence, schema: schemas[q.dbId] },
      ),
    }));
    expect(results.filter(({ r }) => r.status === 'ok')).toHaveLength(29);
    // 790 subtracts two subqueries without SUM; 800 and 219 count other columns than the evidence
    // names; 198 averages per-molecule counts instead of dividing.
    expect(
      results
        .filter(({ r }) => r.met === false)
        .map(({ q }) => q.questionId)
        .sort((a, b) => a - b),
    ).toEqual([198, 219, 790, 800]);
  });
});

describe('the built-in BIRD rubric mixes programmatic and judge items', { timeout: 240_000 }, () => {
  it('without a judge, its judge items are skipped (score null) and the programmatic verdicts stand', async () => {
    const run = await runBirdPredictions('TA_output/predict_mini_dev_gpt-4-o_cot_SQLite.json');
    const r = run.find((x) => x.result.ex === 1)!;
    const s = await scoreSample(
      BIRD_RUBRIC,
      birdSample({ question: r.question, sql: r.item.predSql, execution: r.facts, schema: schemas[r.item.dbId] }),
    );
    expect(s.criteria.filter((c) => c.source === 'judge').map((c) => c.status)).toEqual([
      'skipped',
      'skipped',
      'skipped',
    ]);
    expect(s.criteria.find((c) => c.id === 'matches-gold')).toMatchObject({ status: 'ok', met: true });
    expect(s.criteria.find((c) => c.id === 'no-write')).toMatchObject({ status: 'ok', met: true });
    expect(s.explicit).toMatchObject({
      score: null,
      status: 'incomplete',
      unresolved: ['answers-all-parts', 'avoids-hardcoding', 'simple'],
    });
    expect(s.implicit!.status).toBe('skipped');
  });
});
