import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { checkOverlayKnown, overlayItems, parseGoldOverlay } from '../../../src/core/formats/gold-overlay.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { compareWithOverlay } from '../../../src/core/run/gold-overlay-run.ts';
import { planReplay, runEvaluation } from '../../../src/core/run/replay.ts';
import type { EvalItem, ItemResult } from '../../../src/core/types.ts';
import { evalOptionsOf } from '../../../src/core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig } from '../../../src/core/run/types.ts';
import { readSharedText, sharedData } from '../../helpers/shared-data.ts';

const HERE = new Set(['student_club', 'superhero', 'toxicology']);
const config: RunConfig = {
  ...DEFAULT_RUN_CONFIG,
  metrics: ['ex'],
  timeoutMs: 30_000,
  readOnly: false,
  vesIterations: 0,
};
const options = evalOptionsOf(config);
const minidev = JSON.parse(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json')) as {
  question_id: number;
  db_id: string;
  SQL: string;
}[];
const arcwiseName = 'arcwise_plat_sql_only_with_diff.json';
const arcwiseText = readSharedText('bird', 'corrections', arcwiseName);

let items: EvalItem[];
let official: ItemResult[];
const pool = createNodeSqlPool({ dbRoot: sharedData('bird', 'databases'), workers: 2 });
beforeAll(async () => {
  const plan = planReplay({
    predictions: {
      name: 'llama-70b-cot.json',
      text: readSharedText(
        'bird',
        'predictions',
        'TA_output',
        'predict_mini_dev_meta-llama-3-70b-instruct2_cot_SQLite.json',
      ),
    },
    gold: parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'gold.sql'),
    questions: parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json'),
  });
  // The items whose databases are here (140 of 500).
  items = plan.items.filter((it) => HERE.has(it.dbId));
  official = (await runEvaluation(items, options, { executor: pool })).results;
});
afterAll(() => pool.dispose());

describe('parseGoldOverlay', () => {
  it('reads the real Arcwise-Plat file: 498 questions keyed by question_id (string ids)', () => {
    const o = parseGoldOverlay(arcwiseText, arcwiseName);
    expect(o.keyedBy).toBe('question-id');
    expect(o.entries.size).toBe(498);
    expect(o.entries.get(1471)!.dbId).toBe('debit_card_specializing');
  });
  it('reads JSONL and a BIRD gold .sql (by position); bad entries name the file and the line or question', () => {
    const jsonl = parseGoldOverlay(
      '{"question_id": 7, "SQL": "SELECT 1"}\n\n{"question_id": "8", "sql": "SELECT 2", "db_id": "x"}\n',
      'fix.jsonl',
    );
    expect([...jsonl.entries.keys()]).toEqual([7, 8]);
    const sql = parseGoldOverlay('SELECT 1\tdb_a\nSELECT 2\tdb_b\n', 'fix.sql');
    expect(sql.keyedBy).toBe('position');
    expect(sql.entries.get(1)).toEqual({ sql: 'SELECT 2', dbId: 'db_b' });
    expect(() => parseGoldOverlay('{"question_id": 7}\n', 'fix.jsonl')).toThrow(
      /fix\.jsonl:1.*question 7: no "SQL"|question 7: no "SQL"/,
    );
    expect(() => parseGoldOverlay('[{"question_id": "x1", "SQL": "SELECT 1"}]', 'fix.json')).toThrow(
      /question_id must be an integer/,
    );
    expect(() =>
      parseGoldOverlay('{"question_id": 7, "SQL": "a"}\n{"question_id": 7, "SQL": "b"}', 'fix.jsonl'),
    ).toThrow(/question 7 appears twice/);
  });
  it("refuses an overlay whose database disagrees with the run's, naming the question", () => {
    const it0 = items[0]!;
    const o = parseGoldOverlay(
      JSON.stringify([{ question_id: it0.questionId, SQL: 'SELECT 1', db_id: 'california_schools' }]),
      'wrong.json',
    );
    expect(() => overlayItems(items, o)).toThrow(
      new RegExp(`question ${it0.questionId}: the overlay's gold is for database california_schools`),
    );
  });
});

describe('compareWithOverlay (real sql.js, meta-llama-3-70b CoT on the 140 mini-dev items here)', () => {
  it('the Arcwise-Plat SQL-only corrections: both totals, and the changed verdicts are exactly the items whose EX differs', async () => {
    const c = await compareWithOverlay(items, official, parseGoldOverlay(arcwiseText, arcwiseName), config, {
      executor: pool,
    });
    const arcwise = new Map(
      (JSON.parse(arcwiseText) as { question_id: string; SQL: string }[]).map((e) => [Number(e.question_id), e.SQL]),
    );
    const changedGold = items.filter((it) => arcwise.get(it.questionId) !== it.goldSql);
    // The corrections README: 38 changed SQLs on these three databases.
    expect(changedGold).toHaveLength(38);
    expect(c.goldsChanged).toBe(38);
    expect(c.covered).toBe(140);
    const ex = (rs: readonly ItemResult[]) => (rs.reduce((a, r) => a + r.ex, 0) / rs.length) * 100;
    expect(c.official.byDifficulty.total.ex).toBeCloseTo(ex(official), 10);
    expect(c.corrected.byDifficulty.total.ex).toBeCloseTo(ex(c.correctedResults), 10);
    const differ = c.correctedResults.filter((r, at) => r.ex !== official[at]!.ex).map((r) => r.questionId);
    expect(c.changed.map((x) => x.questionId)).toEqual(differ);
    expect(c.changed.length).toBeGreaterThan(0);
    for (const x of c.changed) expect(x.correctedGoldSql).toBe(arcwise.get(x.questionId));
  });
  it("an overlay written for the test: the prediction's own SQL as gold turns a wrong item right; the same gold changes nothing", async () => {
    const wrong = items.find((_, at) => official[at]!.ex === 0 && official[at]!.status === 'ok')!;
    const right = items.find((_, at) => official[at]!.ex === 1)!;
    const text = [
      { question_id: wrong.questionId, SQL: wrong.predSql },
      { question_id: right.questionId, SQL: right.goldSql },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n');
    const c = await compareWithOverlay(items, official, parseGoldOverlay(text, 'mine.jsonl'), config, {
      executor: pool,
    });
    expect(c.covered).toBe(2);
    expect(c.goldsChanged).toBe(1);
    expect(c.changed.map((x) => [x.questionId, x.officialEx, x.correctedEx])).toEqual([[wrong.questionId, 0, 1]]);
    expect(c.corrected.byDifficulty.total.ex! - c.official.byDifficulty.total.ex!).toBeCloseTo(100 / 140, 10);
    expect(minidev.some((q) => q.question_id === wrong.questionId)).toBe(true);
  });
});

describe('gold overlay: unknown ids and object-shaped files', () => {
  it('refuses ids that are no question of the dataset, naming them; the real Arcwise-Plat file fits mini-dev', () => {
    const overlay = parseGoldOverlay(
      JSON.stringify([
        { question_id: 7, SQL: 'SELECT 2' },
        { question_id: 999_999, SQL: 'SELECT 3' },
        { question_id: 1_000_000, SQL: 'SELECT 4' },
      ]),
      'fix.json',
    );
    const ids = new Set(
      parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json').map(
        (q) => q.questionId,
      ),
    );
    expect(() => checkOverlayKnown(overlay, new Set([...ids, 7]), 'mini_dev_sqlite.json')).toThrow(
      /^fix\.json: 2 question id\(s\) of the overlay are no question of mini_dev_sqlite\.json: 999999, 1000000; keep only the corrections of this dataset/,
    );
    expect(() =>
      checkOverlayKnown(parseGoldOverlay(arcwiseText, arcwiseName), ids, 'mini_dev_sqlite.json'),
    ).not.toThrow();
  });
  it('an object-shaped overlay gets a message saying what is expected (was "got undefined")', () => {
    expect(() => parseGoldOverlay('{"7": "SELECT 2", "8": "SELECT 3"}', 'fix.json')).toThrow(
      /^fix\.json: is one JSON object \(keys "7", "8"\), not an overlay: give a JSON array \[\{"question_id"/,
    );
    expect(() =>
      parseGoldOverlay('{"qid": 7, "SQL": "SELECT 2"}\n{"qid": 8, "SQL": "SELECT 3"}\n', 'fix.jsonl'),
    ).toThrow(/^fix\.jsonl:1: the object has no question_id \(its keys: qid, SQL\)/);
  });
});
