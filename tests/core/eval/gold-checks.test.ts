import { afterAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import { goldIssuesOf } from '../../../src/core/eval/gold-checks.ts';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { rewardAnnotator } from '../../../src/core/run/item-annotations.ts';
import { runEvaluation } from '../../../src/core/run/replay.ts';
import type { EvalItem } from '../../../src/core/types.ts';
import { readSharedText, sharedData } from '../../helpers/shared-data.ts';

const spiderGold = parseGoldSql(readSharedText('spider', 'dev_gold.sql'), 'dev_gold.sql');
const spiderQuestions = parseQuestions(readSharedText('spider', 'dev.json'), 'dev.json');
const pool = createNodeSqlPool({ dbRoot: sharedData('spider'), workers: 1 });
afterAll(() => pool.dispose());

/** Spider dev golds run as their own predictions through the real pool, with the gold checks. */
async function selfTest(indices: number[]) {
  const items: EvalItem[] = indices.map((index) => ({
    index,
    questionId: index,
    dbId: spiderGold[index]!.dbId,
    difficulty: 'unknown',
    predSql: spiderGold[index]!.sql,
    goldSql: spiderGold[index]!.sql,
    extraction: { rule: 'sql-line', thinkStripped: false },
  }));
  const annotate = rewardAnnotator({ columnTypes: {}, questionOf: (i) => spiderQuestions[i]!.question });
  const { results } = await runEvaluation(
    items,
    { metrics: ['ex'], timeoutMs: 30_000, readOnly: false, vesIterations: 0, previewRows: 0 },
    { executor: pool, annotate },
  );
  return new Map(results.map((r) => [r.index, (r.goldIssues ?? []).map((g) => g.kind)]));
}

describe('gold checks on real Spider dev golds', () => {
  it('count asked, gold lists one value per row (161, the GROUP BY count); list asked, gold counts (578); no rows (223); clean golds (0, 1)', async () => {
    const got = await selfTest([0, 1, 161, 578, 223, 664]);
    expect(spiderQuestions[161]!.question).toMatch(/^How many countries/);
    expect(got.get(161)).toEqual(['count-as-list']);
    expect(got.get(578)).toEqual(['list-as-count']);
    expect(got.get(223)).toEqual(['no-rows']);
    expect(got.get(0)).toEqual([]);
    expect(got.get(1)).toEqual([]);
    // "What are the names ..., ordered by the number of ..." asks for a list: not a count.
    expect(got.get(664)).toEqual([]);
  });
});

describe('goldIssuesOf', () => {
  it("flags 'now' and CURRENT_* but not the word inside another string, and a failing gold", () => {
    const base = { question: 'List the members.', goldRowCount: 3, goldColumnCount: 1 };
    expect(
      goldIssuesOf({ ...base, goldSql: "SELECT name FROM m WHERE date(joined) > date('now', '-1 year')" }).map(
        (g) => g.kind,
      ),
    ).toEqual(['date-dependent']);
    expect(goldIssuesOf({ ...base, goldSql: 'SELECT name FROM m WHERE joined < CURRENT_DATE' })[0]!.reason).toContain(
      'CURRENT_DATE',
    );
    expect(goldIssuesOf({ ...base, goldSql: "SELECT name FROM m WHERE note = 'now and then'" })).toEqual([]);
    expect(
      goldIssuesOf({
        ...base,
        goldSql: 'SELECT x FROM nope',
        goldRowCount: null,
        error: 'gold: no such table: nope',
      }).map((g) => g.kind),
    ).toEqual(['gold-error']);
  });
  it("after the prediction changed the database, the gold's result and error are not the gold's: only its text is checked", () => {
    const emptied = { goldSql: 'SELECT name FROM member', question: 'How many members are there?', goldRowCount: 0 };
    expect(goldIssuesOf(emptied).map((g) => g.kind)).toEqual(['no-rows']);
    expect(goldIssuesOf({ ...emptied, predChangedDb: true })).toEqual([]);
    const listed = { ...emptied, goldRowCount: 5, goldColumnCount: 1 };
    expect(goldIssuesOf(listed).map((g) => g.kind)).toEqual(['count-as-list']);
    expect(goldIssuesOf({ ...listed, predChangedDb: true })).toEqual([]);
    const dropped = { ...emptied, goldRowCount: null, error: 'gold: no such table: member' };
    expect(goldIssuesOf({ ...dropped, predChangedDb: true })).toEqual([]);
    // What the gold's text says stays the gold's.
    const dated = { ...emptied, goldSql: "SELECT name FROM member WHERE joined > date('now')" };
    expect(goldIssuesOf({ ...dated, predChangedDb: true }).map((g) => g.kind)).toEqual(['date-dependent']);
  });
  it('reads the order-dependent flag of the row-order check when present', () => {
    const f = {
      goldSql: 'SELECT name FROM m LIMIT 1',
      question: 'Name one member.',
      goldRowCount: 1,
      goldColumnCount: 1,
    };
    expect(goldIssuesOf(f)).toEqual([]);
    expect(goldIssuesOf({ ...f, goldOrderDependent: true }).map((g) => g.kind)).toEqual(['order-dependent']);
  });
  it('a count with arithmetic (a ratio) is not a COUNT answer; several columns are not "one value per row"', () => {
    expect(
      goldIssuesOf({
        goldSql: 'SELECT COUNT(a) * 100 / COUNT(*) FROM t',
        question: 'List the share of a.',
        goldRowCount: 1,
      }),
    ).toEqual([]);
    expect(
      goldIssuesOf({
        goldSql: 'SELECT a, b FROM t',
        question: 'How many a and b are there per c?',
        goldRowCount: 4,
        goldColumnCount: 2,
      }),
    ).toEqual([]);
  });
});
