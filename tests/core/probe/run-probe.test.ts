import { describe, expect, it } from 'vitest';
import type { EvalOptions, SqlExecutor } from '../../../src/core/eval/executor.ts';
import { itemResult } from '../../../src/core/eval/item-result.ts';
import { EXPLOITS, exploitItems, exploitSqls, type ProbeQuestion } from '../../../src/core/probe/exploits.ts';
import { probeJson, probeTable } from '../../../src/core/probe/probe-report.ts';
import { runProbe } from '../../../src/core/probe/run-probe.ts';
import type { EvalItem } from '../../../src/core/types.ts';

const q = (index: number, goldSql: string, dbId = 'db', question: string | null = 'How many?'): ProbeQuestion => ({
  index,
  questionId: 100 + index,
  dbId,
  difficulty: 'simple',
  goldSql,
  question,
});

describe('exploit predictions', () => {
  it('DELETE and DROP target every table the gold reads, UPDATE every column it reads', () => {
    const g = q(0, 'SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.singer_id');
    expect(exploitSqls('delete-table', g)).toEqual(['DELETE FROM "singer"', 'DELETE FROM "concert"']);
    expect(exploitSqls('drop-table', g)).toEqual(['DROP TABLE "singer"', 'DROP TABLE "concert"']);
    expect(exploitSqls('update-null', g)).toEqual([
      'UPDATE "singer" SET "name" = NULL',
      'UPDATE "singer" SET "id" = NULL',
      'UPDATE "concert" SET "singer_id" = NULL',
    ]);
    expect(exploitSqls('temp-shadow', g)).toEqual([
      'CREATE TEMP TABLE "singer" AS SELECT * FROM main."singer" WHERE 0',
      'CREATE TEMP TABLE "concert" AS SELECT * FROM main."concert" WHERE 0',
    ]);
    expect(exploitSqls('empty', g)).toEqual(['']);
    expect(exploitSqls('select-null', g)).toEqual(['SELECT NULL']);
    expect(exploitSqls('constant-answer', g)).toEqual(["SELECT 'true'", "SELECT 'false'", 'SELECT 1', 'SELECT 0']);
    expect(exploitSqls('copy-question', g)).toEqual(['How many?']);
    expect(exploitSqls('copy-question', q(1, 'SELECT 1', 'db', null))).toEqual([]);
  });

  it("constant answers have the gold's width: one literal per column of its outermost SELECT list", () => {
    const two = q(0, 'SELECT T1.a, COUNT(T2.b) FROM x AS T1 JOIN (SELECT b, c FROM y) AS T2 ON T1.id = T2.c');
    expect(exploitSqls('constant-answer', two)).toEqual([
      "SELECT 'true', 'true'",
      "SELECT 'false', 'false'",
      'SELECT 1, 1',
      'SELECT 0, 0',
    ]);
    const cte = q(1, 'WITH t AS (SELECT a, b, c FROM x) SELECT IIF(a > 0, 1, 0) FROM t');
    expect(exploitSqls('constant-answer', cte)).toEqual(["SELECT 'true'", "SELECT 'false'", 'SELECT 1', 'SELECT 0']);
  });

  it('numbers the variants of a question as its samples', () => {
    const items = exploitItems('delete-table', [q(3, 'SELECT a FROM x, y')]);
    expect(items.map((i) => [i.index, i.sample, i.predSql])).toEqual([
      [3, 0, 'DELETE FROM "x"'],
      [3, 1, 'DELETE FROM "y"'],
    ]);
  });
});

/** An executor that scores by a rule, like the official semantics would on a toy database. */
function fakeExecutor(
  win: (item: EvalItem, readOnly: boolean) => boolean,
  missing = new Set<string>(),
): SqlExecutor & { calls: EvalOptions[] } {
  const calls: EvalOptions[] = [];
  return {
    calls,
    async evaluate(items, options) {
      calls.push(options);
      return items.map((it) =>
        missing.has(it.dbId)
          ? itemResult(it, { status: 'missing-db' })
          : itemResult(it, {
              status: 'ok',
              ex: win(it, options.readOnly) ? 1 : 0,
              mutatedDb: /^(DELETE|DROP|UPDATE)/.test(it.predSql) && !options.readOnly,
            }),
      );
    },
    async dispose() {},
  };
}

describe('runProbe', () => {
  it('counts a question once when any variant wins, separately under each semantics, and leaves out missing databases', async () => {
    const questions = [q(0, 'SELECT a FROM x, y'), q(1, 'SELECT a FROM x'), q(2, 'SELECT a FROM z', 'gone')];
    const exec = fakeExecutor((it, ro) => !ro && it.predSql === 'DELETE FROM "y"', new Set(['gone']));
    const r = await runProbe(questions, exec, { timeoutMs: 5000 });
    expect(exec.calls.map((c) => c.readOnly)).toEqual([false, true]);
    expect(exec.calls.every((c) => c.timeoutMs === 5000 && c.metrics.join() === 'ex')).toBe(true);
    expect(r.questions).toBe(2);
    expect(r.missingDb).toEqual({ questions: 1, databases: ['gone'] });
    const del = r.exploits.find((e) => e.id === 'delete-table')!;
    expect(del).toMatchObject({
      questions: 2,
      variants: 3,
      official: { won: 1, wonIndices: [0], mutated: 3 },
      readOnly: { won: 0, wonIndices: [] },
    });
    expect(r.exploits.map((e) => e.id)).toEqual(EXPLOITS.map((e) => e.id));
    expect(
      r.verdicts.filter((v) => v.exploit === 'delete-table').map((v) => [v.index, v.sample, v.official.ex]),
    ).toEqual([
      [0, 0, 0],
      [0, 1, 1],
      [1, 0, 0],
    ]);
    expect(probeTable(r)).toMatch(/DELETE FROM <table>\s+2\s+3\s+1 \(50\.0%\)\s+0 \(0\.0%\)/);
    expect(probeTable(r)).toContain('Evaluate with --read-only');
    expect(probeJson(r)).toMatchObject({
      questions: 2,
      exploits: expect.arrayContaining([
        expect.objectContaining({ id: 'delete-table', read_only: expect.objectContaining({ won: 0 }) }),
      ]),
    });
  });

  it('runs only the exploits asked for', async () => {
    const r = await runProbe(
      [q(0, 'SELECT a FROM x')],
      fakeExecutor(() => false),
      { timeoutMs: 1000, exploits: ['empty'] },
    );
    expect(r.exploits.map((e) => e.id)).toEqual(['empty']);
  });
});
