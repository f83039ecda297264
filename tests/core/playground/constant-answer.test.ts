/**
 * What the playground teaches about answers that do not read the database and about writes, on
 * real BIRD mini-dev questions executed by the real sql.js worker pool: `SELECT 'true'` on
 * question 1338 (student_club: its gold returns three rows, each 'true') wins EX and is flagged
 * as a constant answer, its "why" counts one distinct row, the rubric's "only schema tables and
 * columns" does not tick; the tour's constant-answer step wins on a gold of one value; after a
 * DELETE, a TEMP-table shadow or an UPDATE the findings blame the write, never the gold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import type { SqlPool } from '../../../src/adapters/sql-pool.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { tourSteps } from '../../../src/core/playground/tour.ts';
import type { PlaygroundQuestion } from '../../../src/core/playground/try-attempt.ts';
import type { SqlValue } from '../../../src/core/types.ts';
import { attemptOn, playgroundQuestion } from '../../helpers/playground.ts';
import { readSharedText, sharedData } from '../../helpers/shared-data.ts';

const questions = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json');
const byId = (id: number): PlaygroundQuestion => {
  const index = questions.findIndex((q) => q.questionId === id);
  return playgroundQuestion(questions[index]!, index);
};

let pool: SqlPool;
beforeAll(() => {
  pool = createNodeSqlPool({ dbRoot: sharedData('bird', 'databases'), workers: 1 });
});
afterAll(async () => {
  await pool.dispose();
});

const attempt = (questionId: number, sql: string) => attemptOn(pool, byId(questionId), sql);
const constantStep = (q: PlaygroundQuestion, answer?: { rows: SqlValue[][]; rowCount: number }) =>
  tourSteps({ goldSql: q.goldSql, question: q.question }, answer).find((s) => s.id === 'constant-answer')!;

describe("a constant answer on a real question (1338: the gold returns 'true' three times)", () => {
  it("SELECT 'true' wins EX, and the why counts one distinct row on each side, not the gold's three rows", async () => {
    const r = await attempt(1338, "SELECT 'true'");
    expect(r.record.ex).toBe(1);
    expect(r.record.goldRowCount).toBe(3);
    expect(r.record.predRowCount).toBe(1);
    const match = r.explanation.reasons[0]!;
    expect(match.kind).toBe('match');
    expect(match.detail).toContain('1 distinct row (the gold returns 3 rows, the attempt 1 row)');
    expect(match.detail).not.toContain('3 distinct rows');
  });

  it('is flagged as a constant answer with the reason, in the flags the findings show', async () => {
    const r = await attempt(1338, "SELECT 'true'");
    const constant = r.flags.classes.find((c) => c.id === 'constant-answer');
    expect(constant?.explain).toContain('reads no table of the database');
    expect(r.flags.writes).toEqual([]);
    // The gold itself reads tables: no constant-answer flag.
    const gold = await attempt(1338, byId(1338).goldSql);
    expect(gold.flags.classes.map((c) => c.id)).not.toContain('constant-answer');
  });

  it.each([["SELECT 'true'"], ['VALUES (1)'], ["WITH a AS (SELECT 'true' AS v) SELECT v FROM a"]])(
    'the rubric\'s "only schema tables and columns" does not tick for %s, which reads no table',
    async (sql) => {
      const r = await attempt(1338, sql);
      const check = r.rubric.find((c) => c.id === 'schema-only')!;
      expect(check.outcome.status).toBe('ok');
      expect(check.outcome.met).toBe(false);
      expect(check.outcome.explanation).toContain('reads no table');
      expect(r.flags.classes.map((c) => c.id)).toContain('constant-answer');
    },
  );

  it('the rubric still ticks for the gold, which reads only schema tables and columns', async () => {
    const r = await attempt(1338, byId(1338).goldSql);
    expect(r.rubric.find((c) => c.id === 'schema-only')?.outcome.met).toBe(true);
  });
});

describe("the tour's constant-answer step", () => {
  it("wins EX on a gold of one row of one value (719's count), with the gold's literal, and says why", async () => {
    const q = byId(719);
    const gold = await attempt(719, q.goldSql);
    const answer = { rows: gold.preview!.goldRows as SqlValue[][], rowCount: gold.record.goldRowCount! };
    expect(answer.rowCount).toBe(1);
    const step = constantStep(q, answer);
    expect(step.sql).toBe(`SELECT ${String(answer.rows[0]![0])}`);
    expect(step.lesson).toContain('one row');
    expect(step.lesson).toContain('EX scores 1 though nothing was looked up');
    const r = await attempt(719, step.sql);
    expect(r.record.ex).toBe(1);
    expect(r.flags.classes.map((c) => c.id)).toContain('constant-answer');
  });

  it("on 1338 the gold's three equal rows give one literal row, which wins", async () => {
    const q = byId(1338);
    const gold = await attempt(1338, q.goldSql);
    const step = constantStep(q, { rows: gold.preview!.goldRows as SqlValue[][], rowCount: 3 });
    expect(step.sql).toBe("SELECT 'true'");
    expect(step.lesson).toContain('3 rows, all equal');
    expect((await attempt(1338, step.sql)).record.ex).toBe(1);
  });

  it("falls back to SELECT 'true' where the gold has several distinct rows (717), and loses there", async () => {
    const q = byId(717);
    const gold = await attempt(717, q.goldSql);
    expect(new Set(gold.preview!.goldRows.map((r) => JSON.stringify(r))).size).toBeGreaterThan(1);
    const step = constantStep(q, { rows: gold.preview!.goldRows as SqlValue[][], rowCount: gold.record.goldRowCount! });
    expect(step.sql).toBe("SELECT 'true'");
    expect((await attempt(717, step.sql)).record.ex).toBe(0);
  });
});

describe('after a write the findings blame the write, never the gold', () => {
  it.each([
    ['a DELETE of the table the gold reads', 'DELETE FROM superhero'],
    ['a TEMP-table shadow', 'CREATE TEMP TABLE superhero AS SELECT * FROM main.superhero WHERE 0'],
  ])('%s: EX 1 on an emptied gold, and no "gold returns no rows" finding', async (_title, sql) => {
    const r = await attempt(717, sql);
    expect(r.record.mutatedDb).toBe(true);
    expect(r.record.goldRowCount).toBe(0);
    expect(r.record.ex).toBe(1);
    expect((r.record.goldIssues ?? []).map((g) => g.kind)).not.toContain('no-rows');
    expect(r.explanation.reasons[0]!.detail).toContain('the attempt changed the database');
  });

  it('the same gold with nothing written keeps its findings clean of writes (717 returns rows)', async () => {
    const r = await attempt(717, byId(717).goldSql);
    expect(r.record.mutatedDb).toBe(false);
    expect(r.explanation.reasons.map((x) => x.kind)).not.toContain('write');
  });

  it('an UPDATE that changes what the gold reads: EX 0 explained as the write, DROP TABLE not as a failing gold', async () => {
    // 719's gold counts rows: after the UPDATE it still returns one row, which the UPDATE's none do not equal.
    const r = await attempt(719, 'UPDATE superhero SET height_cm = 0');
    expect(r.record.mutatedDb).toBe(true);
    expect(r.record.ex).toBe(0);
    const write = r.explanation.reasons.find((x) => x.kind === 'write');
    expect(write?.detail).toContain(
      "the attempt changed the database before the gold ran on the same connection: the gold's result (1 row)",
    );
    const drop = await attempt(717, 'DROP TABLE superhero');
    expect(drop.record.status).toBe('error');
    expect((drop.record.goldIssues ?? []).map((g) => g.kind)).not.toContain('gold-error');
  });
});
