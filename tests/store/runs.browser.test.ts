import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EvalEvent } from '../../src/core/eval/executor.ts';
import { DEFAULT_RUN_CONFIG, type SampleRecord } from '../../src/core/run/types.ts';
import type { DatasetRecord, RunRequest } from '../../src/app/store-ports.ts';
import { birdMiniDevFiles, sharedBlob, sharedText } from './browser-data.ts';
import { testStore, type TestStore } from './store-helpers.ts';
import { EX_ONLY_RUBRIC } from '../../src/core/rubric/bird-rubric.ts';
import { scoreSample } from '../../src/core/rubric/score.ts';
import { runFileJson, toCsv } from '../../src/core/runfile/export.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { sampleToScore } from '../../src/app/rubric-scoring-service.ts';

const PRED = 'predictions/sql_output_kg/predict_mini_dev_gpt-4_sqlite.json';
let files: { path: string; file: Blob }[];
let predText: string;
let expected: { items: Array<{ index: number; ex: 0 | 1 }> };
let t: TestStore;
let ds: DatasetRecord;

beforeAll(async () => {
  files = await birdMiniDevFiles();
  predText = await sharedText(`bird/${PRED}`);
  expected = JSON.parse(await sharedText('bird/expected/predict_mini_dev_gpt-4_sqlite.json'));
});
afterEach(() => t?.dispose());

async function importMiniDev(options: Parameters<typeof testStore>[0] = {}) {
  t = testStore(options);
  ds = await t.store.datasets.import({ kind: 'bird', name: 'BIRD mini-dev', files });
}

/** The 140 questions whose databases are here, as a subset. */
function request(name = 'gpt-4', config: Partial<RunRequest['config']> = {}): RunRequest {
  const indices = ds.questions.flatMap((q, i) => (ds.databases[q.dbId] ? [i] : []));
  return {
    name,
    datasetId: ds.id,
    subset: { description: 'questions with a database', indices },
    predictions: { name: 'predict_mini_dev_gpt-4_sqlite.json', text: predText },
    config: { ...DEFAULT_RUN_CONFIG, metrics: ['ex', 'soft-f1'], ...config },
  };
}

/** What must be equal between two runs of the same items (timings differ). */
const comparable = (s: SampleRecord[]) => s.map(({ elapsedMs: _e, ...rest }) => rest);

describe('runs: evaluated in the sql.js worker pool, stored as each sample finishes', () => {
  it('finds the official per-item EX of real predictions, and the run survives a reload', async () => {
    await importMiniDev();
    const events: EvalEvent[] = [];
    const run = await t.store.service.startReplay(request(), { onEvent: (e) => events.push(e) });
    expect(run.status).toBe('done');
    expect(run.source).toMatchObject({
      kind: 'replay',
      predictions: { name: 'predict_mini_dev_gpt-4_sqlite.json', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    expect(run.dataset).toMatchObject({
      id: ds.id,
      questions: ds.questionsFile,
      gold: ds.goldFile,
      databases: ds.databases,
    });
    const items = events.filter((e) => e.type === 'item');
    expect(items.at(-1)).toMatchObject({ done: 140, total: 140 });

    const reloaded = t.reopen();
    expect((await reloaded.runs.list()).map((r) => [r.id, r.status])).toEqual([[run.id, 'done']]);
    const samples = await reloaded.runs.samples(run.id);
    expect(samples.map((s) => [s.index, s.ex])).toEqual(expected.items.map((e) => [e.index, e.ex]));
    expect(samples.every((s) => s.sample === 0 && s.format === 1 && s.reward === s.ex && s.goldSql.length > 0)).toBe(
      true,
    );
    expect((await reloaded.runs.samples(run.id, { offset: 130, limit: 20 })).map((s) => s.index)).toEqual(
      samples.slice(130).map((s) => s.index),
    );
    expect(await reloaded.runs.sampleCount(run.id)).toBe(140);
  });

  it('a run interrupted after some samples, resumed after a reload, ends with exactly the samples of an uninterrupted run', async () => {
    await importMiniDev();
    const whole = await t.store.service.startReplay(request('whole'));
    const ctl = new AbortController();
    // Without the verdict cache: with it, every verdict of the second run comes from the first
    // run's at once, and the run ends before it can be interrupted (tests/browser/verdict-cache.test.ts).
    const cut = await t.store.service.startReplay(request('cut', { verdictCache: false }), {
      signal: ctl.signal,
      onEvent: (e) => e.type === 'item' && e.done >= 40 && ctl.abort(),
    });
    expect(cut.status).toBe('cancelled');
    const stored = await t.store.runs.sampleCount(cut.id);
    expect(stored).toBeGreaterThanOrEqual(40);
    expect(stored).toBeLessThan(140);

    const reloaded = t.reopen();
    const events: EvalEvent[] = [];
    const resumed = await reloaded.service.resume(cut.id, { onEvent: (e) => events.push(e) });
    expect(resumed.status).toBe('done');
    const firstItem = events.find((e) => e.type === 'item');
    expect(firstItem).toMatchObject({ done: stored + 1, total: 140 });
    expect(comparable(await reloaded.runs.samples(cut.id))).toEqual(comparable(await reloaded.runs.samples(whole.id)));
    // The run lists' score: from all stored samples after a resume, equal to the uninterrupted run's.
    expect(cut.score).toBeUndefined();
    expect(whole.score).toMatchObject({ questions: 140, samples: 140 });
    expect(resumed.score).toEqual(whole.score);
    expect((await reloaded.runs.get(cut.id))!.score).toEqual(whole.score);
  });

  it('refuses to evaluate a run another tab is evaluating (Web Locks)', async () => {
    await importMiniDev();
    let resumeError: unknown = null;
    let runId = '';
    let attempt: Promise<void> | null = null;
    const first = t.store.service.startReplay(request(), {
      onEvent: (e) => {
        if (e.type === 'item' && e.done === 1) {
          attempt = t.store.runs.list().then(async ([r]) => {
            runId = r!.id;
            expect(await t.store.runs.activeIds()).toContain(runId);
            await t
              .reopen()
              .service.resume(runId)
              .catch((err) => (resumeError = err));
          });
        }
      },
    });
    await first;
    await attempt;
    expect(resumeError).toMatchObject({
      name: 'StoreError',
      code: 'LOCKED',
      message: expect.stringMatching(/is being evaluated in another tab/),
    });
    expect(await t.store.runs.activeIds()).not.toContain(runId);
  });

  it('refuses predictions made for another dataset at run start, storing nothing', async () => {
    t = testStore();
    const devFiles = [
      { path: 'dev/dev.json', file: await sharedBlob('bird/dev/dev.json') },
      { path: 'dev/dev_gold.sql', file: await sharedBlob('bird/dev/dev_gold.sql') },
      ...(await birdMiniDevFiles()).filter((f) => f.path.endsWith('.sqlite')),
    ];
    const dev = await t.store.datasets.import({ kind: 'bird', name: 'BIRD dev', files: devFiles });
    await expect(
      t.store.service.startReplay({ ...request(), datasetId: dev.id, subset: { description: 'all', indices: [] } }),
    ).rejects.toMatchObject({
      code: 'MISMATCH',
      message: expect.stringMatching(/predict_mini_dev_gpt-4_sqlite\.json: these predictions are for another dataset/),
    });
    expect(await t.counts()).toMatchObject({ runs: 0, samples: 0 });
  });

  it('storage full while writing samples (test double: a real QuotaExceededError after N samples): a message naming the run, stored samples kept, resumable', async () => {
    await importMiniDev({ testing: { simulateQuotaAfterSamples: 30 } });
    const err = await t.store.service.startReplay(request('big run')).catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'StoreError',
      code: 'QUOTA_EXCEEDED',
      message: expect.stringMatching(/run "big run" stopped after \d+ of 140 samples were stored/),
    });
    const [run] = await t.store.runs.list();
    const kept = await t.store.runs.sampleCount(run!.id);
    expect(kept).toBeLessThanOrEqual(30);
    expect(run!.status).toBe('failed');
    const done = await t.reopen().service.resume(run!.id);
    expect(done.status).toBe('done');
    expect(await t.store.runs.sampleCount(run!.id)).toBe(140);
  });

  it('exports a run and imports the file back after the run was deleted', async () => {
    await importMiniDev();
    const run = await t.store.service.startReplay(request());
    const file = await t.store.runs.export(run.id);
    const text = JSON.stringify(file);
    await expect(t.store.runs.importFile(text, 'run.json')).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    await t.store.runs.delete(run.id);
    expect(await t.counts()).toMatchObject({ runs: 0, samples: 0, databases: 3 });
    const [back] = await t.store.runs.importFile(text, 'run.json');
    expect(back).toEqual(run);
    expect(await t.store.runs.samples(run.id)).toEqual(file.samples);
    await t.store.runs.rename(run.id, 'renamed');
    expect((await t.store.runs.get(run.id))!.name).toBe('renamed');
    // A run file without a score (the CLI's --run-out, an older export) gets it from its samples.
    await t.store.runs.delete(run.id);
    const { score, ...unscored } = file.run;
    expect(score).toMatchObject({ questions: 140 });
    const [again] = await t.store.runs.importFile(JSON.stringify({ ...file, run: unscored }), 'cli.run.json');
    expect(again!.score).toEqual(score);
  });

  it('gold self-test: every gold of the stored databases passes as its own prediction, stored as a run', async () => {
    await importMiniDev();
    const { run, failures } = await t.store.service.goldSelfTest(ds.id);
    expect(run.status).toBe('done');
    expect(run.subset.indices).toHaveLength(140);
    expect(failures).toEqual([]);
    expect(await t.store.runs.sampleCount(run.id)).toBe(140);
  });

  it('rubric scores are written into the stored samples in one step: EX-only rubric reward = EX on all 140, exports carry them', async () => {
    await importMiniDev();
    const run = await t.store.service.startReplay(request());
    const before = await t.store.runs.samples(run.id);
    const scored = await Promise.all(
      before.map(async (s) => {
        const rubric = await scoreSample(EX_ONLY_RUBRIC, sampleToScore(s, ds.questions[s.index] ?? null), {
          aggregations: ['explicit'],
        });
        return { index: s.index, sample: s.sample, rubric, rubricScore: rubric.explicit?.score ?? null };
      }),
    );
    // All but the first sample: the first keeps what it had.
    expect(await t.store.runs.setSampleRubrics(run.id, scored.slice(1))).toBe(139);
    const after = await t.reopen().runs.samples(run.id);
    expect(after[0]).toEqual(before[0]);
    for (const [i, s] of after.entries()) {
      if (i === 0) continue;
      expect(s.rubricScore, `item ${s.index}`).toBe(s.ex);
      expect(s.rubric?.criteria.map((c) => [c.id, c.met])).toEqual([['matches-gold', s.ex === 1]]);
      const { rubric: _r, rubricScore: _s, ...rest } = s;
      expect(rest).toEqual(before[i]);
    }
    const file = await t.store.runs.export(run.id);
    expect(parseRunFile(runFileJson(file), 'run.json').samples[1]!.rubric).toEqual(after[1]!.rubric);
    const csv = toCsv(file.samples).split('\r\n');
    expect(csv[0]).toContain(',rubric_id,rubric_score,rubric_explicit,rubric_implicit,rubric_likert');
    // Only the explicit aggregation was asked for, and a replay run has no device, no overlay and
    // no version check: implicit, Likert, the 7 other aggregations, the gen_device, corrected and
    // version_check columns at the end are empty (20 cells).
    expect(csv[2]).toMatch(new RegExp(`,ex-only,${after[1]!.ex},${after[1]!.ex}${','.repeat(20)}$`));
    // A run being evaluated (its Web Lock held, as by another tab) is not written to, and stays as it was.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    void navigator.locks.request(`run:${run.id}`, () => (locked(), held));
    await lockTaken;
    await expect(t.store.runs.setSampleRubrics(run.id, scored)).rejects.toThrow(/is being evaluated/);
    release();
    expect((await t.store.runs.samples(run.id))[0]).toEqual(before[0]);
  });
});
