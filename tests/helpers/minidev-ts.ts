/**
 * Shared by tests/core/ts/minidev-ts-{1,2}.test.ts (the 13 files in two halves, each test file
 * under a minute). Metric ts on the 13 real BIRD mini-dev prediction files, on the items whose database is here
 * (student_club, superhero, toxicology: 140 of 500 per file, the whole set that can be scored).
 * One pool of worker threads for all files, as one process would: each database's suite is
 * built once. For every file, TS <= EX item by item and in every bucket, and each EX-only pass
 * (EX 1, TS 0) is checked independently: the suite is rebuilt here from its seed, and pred and
 * gold are run on the counterexample's suite database, where they must differ.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import initSqlJs, { type SqlJsStatic } from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import type { SqlPool } from '../../src/adapters/sql-pool.ts';
import { executionMatch } from '../../src/core/compare/ex.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { planReplay, runEvaluation } from '../../src/core/run/replay.ts';
import { DEFAULT_SUITE_SPEC, type BuiltSuite } from '../../src/core/ts/suite.ts';
import type { EvalItem } from '../../src/core/types.ts';
import { runPython } from '../../workers/sql-result.ts';
import { buildSuiteOn } from '../../workers/sql-suite.ts';
import { readSharedText, sharedData } from './shared-data.ts';

const PRESENT = ['student_club', 'superhero', 'toxicology'];
const predictionDirs = ['TA_output', 'sql_output_kg'].map((d) => sharedData('bird', 'predictions', d));
export const MINIDEV_FILES = predictionDirs
  .flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith('.json'))
      .map((f) => path.join(d, f)),
  )
  .sort();
const gold = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'mini_dev_sqlite_gold.sql');
const questions = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json');

let SQL: SqlJsStatic;
let pool: SqlPool;
/** The suites rebuilt here, by database, from the golds the pool distilled them on. */
const rebuilt = new Map<string, BuiltSuite>();

function suiteOf(dbId: string, items: readonly EvalItem[]): BuiltSuite {
  let s = rebuilt.get(dbId);
  if (!s) {
    const original = new SQL.Database(
      new Uint8Array(readFileSync(sharedData('bird', 'databases', dbId, `${dbId}.sqlite`))),
    );
    s = buildSuiteOn(
      SQL,
      original,
      items.filter((it) => it.dbId === dbId).map((it) => it.goldSql),
      DEFAULT_SUITE_SPEC,
    );
    original.close();
    rebuilt.set(dbId, s);
  }
  return s;
}

/**
 * Items that run past this are timeouts in both metrics (TS not scored), so they cannot break
 * TS <= EX; the official 30 s would make a test file of six files last minutes.
 */
const TIMEOUT_MS = 5_000;

export function describeMinidevTs(files: readonly string[]): void {
  describe('metric ts on real mini-dev prediction files (items of the 3 databases here)', () => {
    beforeAll(async () => {
      SQL = await initSqlJs();
      pool = createNodeSqlPool({ dbRoot: sharedData('bird', 'databases'), workers: 2 });
    });

    afterAll(async () => {
      await pool?.dispose();
    });

    it('finds the 13 files', () => {
      expect(MINIDEV_FILES).toHaveLength(13);
    });

    it.each(files.map((f) => [path.basename(f), f]))(
      '%s: TS <= EX, and every EX-only pass differs on its suite database',
      async (_, file) => {
        const plan = planReplay({
          predictions: { name: path.basename(file), text: readFileSync(file, 'utf8') },
          gold,
          questions,
        });
        const items = plan.items.filter((it) => PRESENT.includes(it.dbId));
        expect(items).toHaveLength(140);
        const chosen = new Map<string, number[]>();
        const outcome = await runEvaluation(
          items,
          { ...DEFAULT_EVAL_OPTIONS, metrics: ['ex', 'ts'], timeoutMs: TIMEOUT_MS },
          {
            executor: pool,
            onEvent: (e) => void (e.type === 'suite-ready' && chosen.set(e.dbId, e.chosen)),
          },
        );
        const { results, summary } = outcome;
        for (const [dbId, c] of chosen) expect(c, `suite of ${dbId}`).toEqual(suiteOf(dbId, items).chosen);
        for (const b of [summary.byDifficulty.total, ...Object.values(summary.byDb)])
          expect(b.ts!).toBeLessThanOrEqual(b.ex!);
        for (const r of results) {
          expect(r.ts === 1 ? r.ex : 1, `item ${r.index}: TS 1 needs EX 1`).toBe(1);
          if (r.ex !== 1 || r.ts !== 0) continue;
          const where = `item ${r.index} (${r.dbId})`;
          const c = r.tsCounterexample;
          expect(c, `${where}: an EX-only pass names its suite database`).toBeDefined();
          const item = items.find((it) => it.index === r.index)!;
          const db = new SQL.Database(suiteOf(r.dbId, items).dbs[c!.suiteDb]!);
          try {
            let pred: ReturnType<typeof runPython> | null = null;
            try {
              pred = runPython(db, item.predSql);
            } catch {
              pred = null; // the prediction fails there: that is a difference too
            }
            const goldRows = runPython(db, item.goldSql).rows;
            expect(
              pred === null ? 0 : executionMatch(pred.rows, goldRows),
              `${where}: pred and gold differ on suite db ${c!.suiteDb}`,
            ).toBe(0);
            expect(goldRows.length).toBe(c!.goldRowCount);
          } finally {
            db.close();
          }
        }
        // An EX-only pass is EX 1 and TS 0 (src/core/eval/summary.ts); an item whose suite run
        // timed out (TS not scored, null: more likely the more loaded the machine) is none.
        expect(summary.byDifficulty.total.exOnly).toBe(results.filter((r) => r.ex === 1 && r.ts === 0).length);
      },
      // A bound the file cannot reach: it scores 140 items with their suites (seconds on a quiet machine).
      600_000,
    );
  });
}
