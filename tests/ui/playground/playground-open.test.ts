/**
 * Where the playground opens a dataset and where its tour may start, on real BIRD mini-dev
 * questions over a real sql.js pool in Node: a dataset record of four mini-dev questions, the
 * first of them 1471 (debit_card_specializing, whose database is not here), then 717, 719 and
 * 1338 (superhero, student_club, which are). The tour's constant-answer step is scanned as the
 * screen scans it: `SELECT 'true'` first, then the gold's own one distinct row as literals.
 */
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SqlPool } from '../../../src/adapters/sql-pool.ts';
import { folderDbSource, spawnNodeSqlWorker } from '../../../src/adapters/node/sql-worker-host.ts';
import type { DatasetRecord } from '../../../src/app/store-ports.ts';
import { memorySuiteCache } from '../../../src/core/ts/suite.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { createPlaygroundService } from '../../../src/app/playground-service.ts';
import { firstWithDatabase, PlaygroundState } from '../../../src/ui/playground/playground-state.svelte.ts';
import { readSharedText, sharedData } from '../../helpers/shared-data.ts';

const all = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json');
const picked = [1471, 717, 719, 1338].map((id) => all.find((q) => q.questionId === id)!);
const present = new Set(readdirSync(sharedData('bird', 'databases')));
const dataset = {
  id: 'minidev-4',
  name: 'mini-dev, four questions',
  kind: 'bird',
  gold: picked.map((q) => ({ sql: q.goldSql, dbId: q.dbId })),
  questions: picked,
  databases: Object.fromEntries(picked.filter((q) => present.has(q.dbId)).map((q) => [q.dbId, 'sha'])),
} as unknown as DatasetRecord;

const service = createPlaygroundService({
  dbSource: () => folderDbSource(sharedData('bird', 'databases')),
  suiteCache: () => memorySuiteCache(),
  createExecutor: (source, suiteCache) =>
    new SqlPool({ spawn: () => spawnNodeSqlWorker(), dbSource: source, size: 1, suiteCache }),
});
const state = new PlaygroundState({
  datasets: { list: async () => [dataset], get: async (id) => (id === dataset.id ? dataset : undefined) },
  runs: { get: async () => undefined },
  service: { saveAttempt: () => Promise.reject(new Error('not kept in this test')) },
  playground: service,
  writeAddress: () => undefined,
});
afterAll(() => state.close());

describe('the playground opens on a question with a database, and its tour starts only there', () => {
  it('a dataset opens on its first question whose database is stored (717), not on 1471; none stored: null', () => {
    expect(present.has('debit_card_specializing')).toBe(false);
    expect(firstWithDatabase(dataset)).toBe(1);
    expect(picked[1]!.questionId).toBe(717);
    expect(firstWithDatabase({ ...dataset, databases: {} })).toBeNull();
  });

  it('on 1471 (no database) the tour does not start: no step is scored "not scored"', async () => {
    await state.open(dataset.id, 0, undefined);
    expect(state.question?.questionId).toBe(1471);
    expect(state.hasDatabase).toBe(false);
    await state.runTour();
    expect(state.tour).toBeNull();
    expect(state.state.touring).toBe(false);
  });

  it('on 717 the constant answer loses (several distinct rows) and wins on 719 with the count as a literal, read-only too', async () => {
    await state.open(dataset.id, 1, undefined);
    await expect.poll(() => state.report !== null && !state.state.running, { timeout: 60_000 }).toBe(true);
    expect(state.hasDatabase).toBe(true);
    await state.runTour();
    const outcome = state.tour!.find((o) => o.step.id === 'constant-answer')!;
    expect(outcome.question.questionId).toBe(719);
    expect(outcome.step.sql).toMatch(/^SELECT \d+$/);
    expect(outcome.official?.record.ex).toBe(1);
    expect(outcome.official?.readOnly).toBeNull();
    expect(outcome.official?.flags.classes.map((c) => c.id)).toContain('constant-answer');
    // The gold itself is scored on the open question, never "not scored".
    const gold = state.tour!.find((o) => o.step.id === 'gold')!;
    expect([gold.question.questionId, gold.official?.record.status, gold.official?.record.ex]).toEqual([717, 'ok', 1]);
  }, 240_000);
});
