/**
 * The playground's attempt under the EX rule of the question's dataset (docs/spider-rules.md),
 * on real Spider dev (concert_singer) with the real sql.js worker pool: rows equal to the gold's
 * in another order under the gold's ORDER BY are EX 0 under Spider's rule and EX 1 under BIRD's,
 * as the CLI's `eval --ex-rule` scores the same SQL, and the explanation names the first row
 * out of order.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import type { SqlPool } from '../../../src/adapters/sql-pool.ts';
import type { ExRule } from '../../../src/core/compare/spider-ex.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { readJson, runCli, tempFile } from '../../helpers/cli.ts';
import { attemptOn, playgroundQuestion } from '../../helpers/playground.ts';
import { readSharedText, sharedData } from '../../helpers/shared-data.ts';

const questions = parseQuestions(readSharedText('spider', 'dev.json'), 'dev.json');
/** Spider dev #2: `SELECT name , country , age FROM singer ORDER BY age DESC` (six singers, distinct ages). */
const INDEX = 2;
const q = questions[INDEX]!;
const question = playgroundQuestion(q, INDEX);
const REVERSED = q.goldSql.replace(/DESC\s*$/i, 'ASC');

let pool: SqlPool;
beforeAll(() => {
  pool = createNodeSqlPool({ dbRoot: sharedData('spider'), workers: 1 });
});
afterAll(async () => {
  await pool.dispose();
});

const attempt = (sql: string, exRule: ExRule) => attemptOn(pool, question, sql, { exRule, vesIterations: 0 });

/** The CLI's verdict for the same SQL against the same gold line, under `rule`. */
async function cliVerdict(sql: string, rule: ExRule): Promise<number> {
  const gold = tempFile('gold.sql');
  const pred = tempFile('pred.sql');
  writeFileSync(gold, `${q.goldSql}\t${q.dbId}\n`);
  writeFileSync(pred, `${sql}\t${q.dbId}\n`);
  const out = tempFile(`${rule}.json`);
  const r = await runCli([
    'eval',
    '--predictions',
    pred,
    '--gold',
    gold,
    '--db-root',
    sharedData('spider'),
    '--ex-rule',
    rule,
    '--no-cache',
    '--out',
    out,
  ]);
  expect(r.code, r.stderr).toBe(0);
  const got = readJson(out);
  expect(got.summary.ex_rule).toBe(rule);
  return (got.items as { ex: number }[])[0]!.ex;
}

describe("tryAttempt under the dataset's EX rule (Spider dev, concert_singer)", () => {
  it('the gold in reverse order: EX 0 under Spider rule, EX 1 under BIRD rule, as the CLI scores it', async () => {
    expect(REVERSED).not.toBe(q.goldSql);
    const spider = await attempt(REVERSED, 'spider');
    const bird = await attempt(REVERSED, 'bird');
    expect(spider.exRule).toBe('spider');
    expect(bird.exRule).toBe('bird');
    expect([spider.record.ex, bird.record.ex]).toEqual([0, 1]);
    // Both runs saw the same six rows on each side.
    expect(spider.record.predRowCount).toBe(6);
    expect(spider.record.goldRowCount).toBe(6);
    expect([await cliVerdict(REVERSED, 'spider'), await cliVerdict(REVERSED, 'bird')]).toEqual([
      spider.record.ex,
      bird.record.ex,
    ]);

    // Why: under Spider's rule, the order, from the first row (the youngest against the oldest).
    const order = spider.explanation.reasons[0]!;
    expect(order.kind).toBe('order');
    expect(order.kind === 'order' ? order.position : null).toBe(0);
    expect(order.detail).toContain("Spider's rule compares in order");
    expect(order.detail).toContain(String(spider.preview!.goldRows[0]![0]));
    // Under BIRD's, a set match that ignored the gold's ORDER BY.
    expect(bird.explanation.reasons.map((r) => r.kind)).toEqual(['match', 'row-order']);
  }, 120_000);

  it("the gold itself passes under Spider's rule, explained as Spider compares", async () => {
    const r = await attempt(q.goldSql, 'spider');
    expect(r.record.ex).toBe(1);
    expect(r.explanation.reasons.map((x) => x.kind)).toEqual(['match']);
    expect(r.explanation.reasons[0]!.detail).toContain("in the order of the gold's ORDER BY");
  }, 60_000);
});
