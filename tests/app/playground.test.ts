/**
 * The reward playground against the app's runs, over the app's ports in memory with Node's SQL
 * workers and real data: an attempt kept in a Spider dataset's scratch run is scored by Spider's
 * rule, as the playground scores it; and an attempt on a question a run's corrected-gold overlay
 * corrects (Arcwise-Plat on mini-dev) is scored against the corrected gold through the same
 * recipe, giving the verdict the run's stored overlay holds for the same SQL.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import { createRunService } from '../../src/app/run-service.ts';
import type { SqlPool } from '../../src/adapters/sql-pool.ts';
import { correctedGoldOf } from '../../src/core/playground/corrected-gold.ts';
import type { AttemptRequest, PlaygroundQuestion } from '../../src/core/playground/try-attempt.ts';
import type { DatasetRecord } from '../../src/app/records.ts';
import { DEFAULT_RUN_CONFIG } from '../../src/core/run/types.ts';
import { fileDataset, memoryAppPorts } from '../helpers/memory-app-ports.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS } from '../helpers/series-dumps.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { attemptOn, playgroundQuestion } from '../helpers/playground.ts';

const pools: SqlPool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.dispose()));
});

const questionOf = (ds: DatasetRecord, index: number) =>
  playgroundQuestion(ds.questions[index]!, index, ds.gold[index]!.sql, ds.gold[index]!.dbId);
const attempt = (pool: SqlPool, question: PlaygroundQuestion, sql: string, extra: Partial<AttemptRequest> = {}) =>
  attemptOn(pool, question, sql, { vesIterations: 0, ...extra });

describe("the playground's attempts and the app's runs", () => {
  it("an attempt kept from a Spider dataset is scored in its scratch run by Spider's rule, as the playground scores it", async () => {
    const files = {
      questions: sharedData('spider', 'dev.json'),
      gold: sharedData('spider', 'dev_gold.sql'),
      dbRoot: sharedData('spider'),
    };
    const dataset: DatasetRecord = { ...(await fileDataset(files)), kind: 'spider' };
    const app = memoryAppPorts(dataset, files.dbRoot, 1);
    const service = createRunService(app.ports);
    // Spider dev #2, `... ORDER BY age DESC`, asked in the other order: the same six rows.
    const question = questionOf(dataset, 2);
    const sql = question.goldSql.replace(/DESC\s*$/i, 'ASC');
    const saved = await service.saveAttempt({ datasetId: dataset.id, index: 2, sql });
    expect(saved.run.config.exRule).toBe('spider');
    const [sample] = app.samples(saved.run.id);
    expect(sample?.sql).toBe(sql);
    expect(sample?.ex).toBe(0);
    // Spider's hardness, as every run under Spider's rule gives it.
    expect(['easy', 'medium', 'hard', 'extra']).toContain(sample?.difficulty);

    const pool = createNodeSqlPool({ dbRoot: files.dbRoot, workers: 1 });
    pools.push(pool);
    const shown = await attempt(pool, question, sql, { exRule: saved.run.config.exRule });
    expect(shown.record.ex).toBe(sample?.ex);
  }, 180_000);

  it("on #1376 with the run's Arcwise-Plat overlay: the corrected gold, and the attempt's EX against it equal to the run's stored corrected verdict", async () => {
    const dataset = await fileDataset({ questions: MINIDEV_QUESTIONS, gold: MINIDEV_GOLD, dbRoot: DB_ROOT });
    const app = memoryAppPorts(dataset, DB_ROOT);
    const service = createRunService(app.ports);
    const file = 'predict_mini_dev_gpt-4-o_cot_SQLite.json';
    const run = await service.startReplay({
      name: file,
      datasetId: dataset.id,
      subset: { description: 'every question', indices: [] },
      predictions: { name: file, text: readFileSync(sharedData('bird', 'predictions', 'TA_output', file), 'utf8') },
      config: { ...DEFAULT_RUN_CONFIG },
    });
    const name = 'arcwise_plat_sql_only_with_diff.json';
    const text = readFileSync(sharedData('bird', 'corrections', name), 'utf8');
    const record = await service.attachGoldOverlay!(run.id, { name, text });
    const stored = (await service.goldOverlay!(run.id))!;

    const official = app.samples(run.id).find((s) => s.questionId === 1376)!;
    const question = questionOf(dataset, official.index);
    const corrected = correctedGoldOf(stored, question);
    const kept = record.items.find((it) => it.questionId === 1376)!;
    expect(corrected).toBe(kept.goldSql);
    expect(corrected).not.toBe(question.goldSql);

    const pool = createNodeSqlPool({ dbRoot: DB_ROOT, workers: 1 });
    pools.push(pool);
    const r = await attempt(pool, question, official.sql, { correctedGoldSql: corrected });
    // The official verdict as the run stored it, and the corrected one as the overlay stored it (they differ).
    expect([r.record.ex, r.corrected?.ex]).toEqual([official.ex, kept.ex]);
    expect([r.record.ex, r.corrected?.ex]).toEqual([1, 0]);
    expect(r.corrected?.softF1).toBe(kept.softF1);
    expect(r.corrected?.goldRowCount).toBe(kept.goldRowCount);
    expect(r.corrected?.goldSql).toBe(kept.goldSql);

    // A question the overlay does not change has no corrected gold, and the attempt no second verdict.
    const untouched = dataset.questions.findIndex(
      (q, i) => dataset.databases[q.dbId] && correctedGoldOf(stored, questionOf(dataset, i)) === null,
    );
    const plain = await attempt(pool, questionOf(dataset, untouched), questionOf(dataset, untouched).goldSql, {
      correctedGoldSql: correctedGoldOf(stored, questionOf(dataset, untouched)),
    });
    expect(plain.corrected).toBeNull();
  }, 300_000);
});
