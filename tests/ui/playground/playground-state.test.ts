/**
 * The playground screen's state on a real Spider question (dev #2 on concert_singer, `... ORDER
 * BY age DESC`) over a real sql.js pool in Node: which EX rule its attempts get (the dataset's
 * default without a run, the run's own when a run opened it, the dataset's again when the run is
 * not stored) and the corrected gold of the run's overlay, scored through the same attempt.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SqlPool } from '../../../src/adapters/sql-pool.ts';
import { folderDbSource, spawnNodeSqlWorker } from '../../../src/adapters/node/sql-worker-host.ts';
import type { DatasetRecord } from '../../../src/app/store-ports.ts';
import { memorySuiteCache } from '../../../src/core/ts/suite.ts';
import type { GoldOverlayRecord } from '../../../src/core/run/overlay-record.ts';
import type { RunHeader } from '../../../src/core/run/types.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { createPlaygroundService } from '../../../src/app/playground-service.ts';
import { PlaygroundState } from '../../../src/ui/playground/playground-state.svelte.ts';
import { readSharedText, sharedData } from '../../helpers/shared-data.ts';

const q = parseQuestions(readSharedText('spider', 'dev.json'), 'dev.json')[2]!;
const dataset = {
  id: 'spider-cs',
  name: 'Spider dev (concert_singer)',
  kind: 'spider',
  gold: [{ sql: q.goldSql, dbId: q.dbId }],
  questions: [{ ...q, questionId: 0 }],
  databases: { [q.dbId]: 'sha' },
} as unknown as DatasetRecord;
const REVERSED = q.goldSql.replace(/DESC\s*$/i, 'ASC');

const run = (id: string, exRule?: 'bird' | 'spider') =>
  ({
    id,
    name: `run ${id}`,
    dataset: { id: dataset.id, name: dataset.name },
    config: { metrics: ['ex'], timeoutMs: 30_000, readOnly: false, vesIterations: 0, ...(exRule ? { exRule } : {}) },
  }) as unknown as RunHeader;
const runs: Record<string, RunHeader> = { bird: run('bird'), spider: run('spider', 'spider') };
/** An overlay (written for this test) whose gold for the question asks for the other order. */
const overlay: GoldOverlayRecord = {
  runId: 'spider',
  name: 'reversed.json',
  text: JSON.stringify([{ question_id: 0, SQL: REVERSED }]),
} as GoldOverlayRecord;

const service = createPlaygroundService({
  dbSource: () => folderDbSource(sharedData('spider')),
  suiteCache: () => memorySuiteCache(),
  createExecutor: (source, suiteCache) =>
    new SqlPool({ spawn: () => spawnNodeSqlWorker(), dbSource: source, size: 1, suiteCache }),
});
/** The addresses the state wrote (its `writeAddress` port): the SQL of each. */
const written: string[] = [];
const state = new PlaygroundState({
  datasets: { list: async () => [dataset], get: async (id) => (id === dataset.id ? dataset : undefined) },
  runs: { get: async (id) => runs[id] },
  service: {
    saveAttempt: () => Promise.reject(new Error('not kept in this test')),
    goldOverlay: async (id) => (id === 'spider' ? overlay : undefined),
  },
  playground: service,
  writeAddress: (_ds, _i, params) => void written.push(params.sql),
});
afterAll(() => state.close());

/** Opens the question with `sql` (from `runId`) and waits for its verdict. */
async function attemptFrom(runId: string | null, sql: string) {
  await state.open(dataset.id, 0, { sql, formula: 'ex', ts: false }, runId);
  await expect
    .poll(() => state.report !== null && !state.state.running && !state.stale, { timeout: 60_000 })
    .toBe(true);
  return state.report!;
}

describe('the playground state: the EX rule and the corrected gold of its attempts', () => {
  it("without a run, a Spider dataset's rule: the gold's rows in another order are EX 0, and why", async () => {
    const r = await attemptFrom(null, REVERSED);
    expect(state.exRule).toBe('spider');
    expect([r.exRule, r.record.ex]).toEqual(['spider', 0]);
    expect(r.explanation.reasons[0]?.kind).toBe('order');
    expect(state.correctedGold.sql).toBeNull();
  }, 120_000);

  it("opened from a run, the run's rule (BIRD's when its config names none, as its dashboard says)", async () => {
    const r = await attemptFrom('bird', REVERSED);
    expect(state.run?.id).toBe('bird');
    expect([r.exRule, r.record.ex]).toEqual(['bird', 1]);
  }, 120_000);

  it("a run that is not stored is named, and the dataset's rule applies", async () => {
    const r = await attemptFrom('gone', REVERSED);
    expect(state.run).toBeNull();
    expect(state.state.runError).toContain('run gone is not stored');
    expect(r.exRule).toBe('spider');
  }, 120_000);

  it("with the run's overlay correcting the question: the corrected gold, and the attempt scored against it", async () => {
    const r = await attemptFrom('spider', REVERSED);
    expect(state.correctedGold).toEqual({ sql: REVERSED, error: null });
    expect(r.record.ex).toBe(0);
    expect(r.corrected).toMatchObject({ goldSql: REVERSED, ex: 1, status: 'ok' });
  }, 120_000);

  it('a report is stale from the moment TS is ticked until the attempt with TS is scored, the SQL unchanged', async () => {
    const before = await attemptFrom(null, q.goldSql);
    expect(before.record.ts ?? null).toBeNull();
    state.setTs(true);
    // Before the attempt has even started: the shown report was made without TS.
    expect(state.stale).toBe(true);
    await expect.poll(() => !state.state.running && !state.stale, { timeout: 60_000 }).toBe(true);
    expect(state.report!.record.ts).toBe(1);
    state.setTs(false);
    expect(state.stale).toBe(true);
    await expect.poll(() => !state.state.running && !state.stale, { timeout: 60_000 }).toBe(true);
  }, 180_000);

  it('writes the address once per attempt, not once per keystroke', async () => {
    await attemptFrom(null, q.goldSql);
    written.length = 0;
    for (let n = 1; n <= REVERSED.length; n++) state.setSql(REVERSED.slice(0, n));
    await expect
      .poll(() => state.report?.record.sql === REVERSED && !state.state.running && !state.stale, { timeout: 60_000 })
      .toBe(true);
    expect(written).toEqual([REVERSED]);
  }, 120_000);
});
