/**
 * The playground's attempt on real BIRD mini-dev questions (superhero), executed by the real
 * sql.js worker pool: each panel's signal (verdict, explanation, flags, what a write changed,
 * read-only verdict, rubric checks, reward formula) for the SQL a student would try.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import type { SqlPool } from '../../../src/adapters/sql-pool.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import type { AttemptRequest, PlaygroundQuestion } from '../../../src/core/playground/try-attempt.ts';
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

const attempt = (questionId: number, sql: string, extra: Partial<AttemptRequest> = {}) =>
  attemptOn(pool, byId(questionId), sql, extra);

describe('tryAttempt on real mini-dev questions', () => {
  it('scores the gold itself EX 1 and explains it as a set match', async () => {
    const r = await attempt(717, byId(717).goldSql);
    expect(r.record.ex).toBe(1);
    expect(r.record.softF1).toBe(1);
    expect(r.explanation.reasons[0]!.kind).toBe('match');
    expect(r.flags.writes).toEqual([]);
    expect(r.readOnly).toBeNull();
    expect(r.rubric.find((c) => c.id === 'executes')?.outcome.met).toBe(true);
    expect(r.sqliteVersion).toMatch(/^3\.\d+\.\d+$/);
  });

  it('names the gold rows an attempt misses (LIMIT 1 of a longer answer)', async () => {
    const r = await attempt(717, `${byId(717).goldSql} LIMIT 1`);
    expect(r.record.ex).toBe(0);
    const rows = r.explanation.reasons.find((x) => x.kind === 'rows');
    expect(rows && rows.kind === 'rows' ? rows.notes.map((n) => n.kind) : []).toContain('missing');
    expect(r.record.goldRowCount).toBeGreaterThan(1);
  });

  it.each([
    ['tells a number returned as TEXT from a wrong number', 'SELECT CAST(COUNT(T1.id) AS TEXT)', 'type'],
    ['tells other float digits apart from a wrong value', 'SELECT COUNT(T1.id) * 1.00000001', 'float'],
  ])('%s', async (_title, select, note) => {
    const r = await attempt(719, byId(719).goldSql.replace('SELECT COUNT(T1.id)', select));
    expect(r.record.ex).toBe(0);
    const rows = r.explanation.reasons.find((x) => x.kind === 'rows');
    expect(rows && rows.kind === 'rows' ? rows.notes[0]?.kind : null).toBe(note);
  });

  it('a DELETE of the gold table wins officially, is refused read-only, and the census names the emptied table', async () => {
    const r = await attempt(717, 'DELETE FROM superhero');
    expect(r.record.ex).toBe(1);
    expect(r.record.mutatedDb).toBe(true);
    expect(r.explanation.reasons[0]!.kind).toBe('empty-pass');
    expect(r.flags.classes.map((c) => c.id)).toEqual(expect.arrayContaining(['delete-table', 'empty-result']));
    expect(r.readOnly?.ex).toBe(0);
    expect(r.readOnly?.status).toBe('error');
    const change = r.changes?.find((c) => c.object === 'main.superhero');
    expect(change?.kind).toBe('rows');
    expect(change?.detail).toMatch(/^\d+ → 0 rows$/);
    expect(r.rubric.find((c) => c.id === 'no-write')?.outcome.met).toBe(false);
  });

  it('a TEMP table shadow is flagged and the census shows what it hides', async () => {
    const r = await attempt(717, 'CREATE TEMP TABLE superhero AS SELECT * FROM main.superhero WHERE 0');
    expect(r.flags.classes.map((c) => c.id)).toContain('temp-shadow');
    expect(r.changes?.some((c) => c.kind === 'shadowed' && c.object === 'temp.superhero')).toBe(true);
    expect(r.record.ex).toBe(1);
    expect(r.readOnly?.ex).toBe(0);
  });

  it('DROP TABLE breaks the gold, which scores 0', async () => {
    const r = await attempt(717, 'DROP TABLE hero_power');
    expect(r.record.ex).toBe(0);
    expect(r.explanation.reasons[0]!.kind).toBe('gold-error');
    expect(r.changes?.some((c) => c.kind === 'dropped' && c.object === 'main.hero_power')).toBe(true);
  });

  it('evaluates the reward formula, and reports a formula that needs a metric that did not run', async () => {
    const ok = await attempt(717, byId(717).goldSql, { formula: '0.9 * ex + 0.1 * format' });
    expect(ok.reward).toBeCloseTo(1);
    const bad = await attempt(717, byId(717).goldSql, { formula: 'ts' });
    expect(bad.reward).toBeNull();
    expect(bad.formulaError).toMatch(/ts/);
  });

  it('a hard-coded count passes EX but a test-suite database tells it apart (TS 0, EX only)', async () => {
    const gold = await attempt(719, byId(719).goldSql);
    const count = gold.preview!.goldRows[0]![0];
    const r = await attempt(719, `SELECT ${String(count)}`, { metrics: ['ts'] });
    expect(r.record.ex).toBe(1);
    expect(r.record.ts).toBe(0);
    const exOnly = r.explanation.reasons.find((x) => x.kind === 'ex-only');
    expect(exOnly).toBeDefined();
  }, 180_000);
});

describe('tryAttempt: findings', () => {
  it("names the version-sensitive part of the attempt (round() to decimal places), as a run's annotations do", async () => {
    const sql = byId(719).goldSql.replace('SELECT COUNT(T1.id)', 'SELECT ROUND(COUNT(T1.id), 2)');
    const r = await attempt(719, sql);
    expect(r.record.versionFeatures).toEqual([
      { feature: 'round() to decimal places (float rounding)', since: '3.43.0', where: 'pred' },
    ]);
    // The gold alone has none.
    expect((await attempt(719, byId(719).goldSql)).record.versionFeatures ?? []).toEqual([]);
  });
});

describe('tryAttempt: statements without a result', () => {
  it('explains a DELETE on a COUNT question by the rows, not by its zero columns', async () => {
    const r = await attempt(719, 'DELETE FROM superhero');
    expect(r.record.ex).toBe(0);
    const rows = r.explanation.reasons[0]!;
    expect(rows.kind).toBe('rows');
    expect(rows.detail).toMatch(/^the attempt returns 0 rows, the gold 1 row/);
  });
});
