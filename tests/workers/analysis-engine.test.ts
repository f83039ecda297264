/**
 * The analysis worker's computation (workers/analysis-engine.ts) against the main-thread core
 * functions on the same small runs: the RL statistics (pass@k, maj@k with its seeded tie-break,
 * best-of-n, GRPO) and the paired comparison with its bootstrap. The engine's store port is a
 * plain object here (the IndexedDB one runs in the browser test of the RL view at 100,000).
 */
import { describe, expect, it } from 'vitest';
import { createAnalysisEngine, type StoredRuns } from '../../workers/analysis-engine.ts';
import type { AnalysisProgress } from '../../src/app/records.ts';
import { compareRuns } from '../../src/core/rl/compare.ts';
import { mulberry32 } from '../../src/core/util/rng.ts';
import { computeRunStats } from '../../src/core/rl/run-stats.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { streamGzip } from '../../src/adapters/gzip-stream.ts';
import { openReportPayload, reportPayload, withQuestionTexts } from '../../src/core/report/payload.ts';
import { buildReportHtml, readReportFile, reportDataOf, unpackReportData } from '../../src/core/report/report-file.ts';
import { createReportSeriesServices } from '../../src/report/report-series.ts';
import { parseSeriesFile, seriesFileJson, toSeriesFile } from '../../src/core/series/file.ts';
import type { Question } from '../../src/core/types.ts';
import { REPORT_TEMPLATE } from '../helpers/report-template.ts';
import { collectResultRows } from '../../src/core/report/result-rows.ts';
import type { Series } from '../../src/core/series/model.ts';
import { questionAcrossSteps } from '../../src/core/series/question-steps.ts';
import { seriesReport } from '../../src/core/series/stats.ts';
import { seriesReportJson } from '../../src/core/series/tables.ts';
import { syntheticRunFile, syntheticSamples } from '../robustness/synthetic-run.ts';

function storeOf(
  files: RunFile[],
  series: Series[] = [],
  datasets: Record<string, Question[]> = {},
): () => Promise<StoredRuns> {
  const byId = new Map(files.map((f) => [f.run.id, f]));
  const get = (id: string) => {
    const f = byId.get(id);
    if (!f) throw new Error(`run ${id} is not stored`);
    return f;
  };
  return async () => ({
    header: async (id) => get(id).run,
    samples: async (id, onStep, keep) => {
      const s = get(id).samples;
      onStep(s.length, s.length);
      return s.map(keep);
    },
    overlay: async () => undefined,
    series: async (id) => {
      const s = series.find((x) => x.id === id)!;
      const steps = s.steps.map((x) => ({
        step: x.step,
        runId: x.run.run.id,
        wallTime: x.wallTime,
        source: x.source,
        owned: true,
      }));
      return {
        id: s.id,
        name: s.name,
        createdAt: s.createdAt,
        updatedAt: s.createdAt,
        datasetId: 'synthetic',
        dataset: s.dataset,
        stepRule: s.stepRule,
        origin: 'series-file',
        config: (s.steps[0] ?? series.find((x) => x.steps.length > 0)!.steps[0]!).run.run.config,
        steps,
        runIds: steps.map((x) => x.runId),
      };
    },
    scores: async (id, step) => series.find((x) => x.id === id)!.steps.find((x) => x.step === step)!.trainerScores,
    rewards: async (id, step) =>
      series.find((x) => x.id === id)!.steps.find((x) => x.step === step)!.trainerRewards ?? [],
    questionSamples: async (id, index) => get(id).samples.filter((x) => x.index === index),
    questions: async (id) => datasets[id],
    close: () => undefined,
  });
}

const a = syntheticRunFile(syntheticSamples({ questions: 40, samples: 8, seed: 3 }), 'a');
const b = syntheticRunFile(syntheticSamples({ questions: 40, samples: 8, seed: 4 }), 'b');
const engine = createAnalysisEngine(storeOf([a, b]));

describe('analysis worker computation', () => {
  it.each([0, 7])(
    'gives the RL statistics of computeRunStats on the page (seed %i), prompts without their sample records',
    async (seed) => {
      const progress: AnalysisProgress[] = [];
      const out = await engine.runStats({ dbName: 'x', runId: a.run.id, seed }, (p) => void progress.push(p));
      expect(out.ok).toBe(true);
      if (!out.ok) return;
      const ref = computeRunStats(a.samples, { rng: mulberry32(seed) });
      expect(out.value.ks).toEqual(ref.ks);
      expect(out.value.overall).toEqual(ref.overall);
      expect(out.value.byDifficulty).toEqual(ref.byDifficulty);
      expect(out.value.missingDb).toBe(ref.missingDb);
      expect(out.value.prompts.map(({ marks, ...numbers }) => ({ ...numbers, marks }))).toEqual(
        ref.prompts.map(({ samples, ...numbers }) => ({
          ...numbers,
          marks: samples.map((s) => String(s.ex)).join(''),
        })),
      );
      expect(out.value.prompts.some((p) => 'samples' in p)).toBe(false);
      expect(progress.filter((p) => p.phase === 'reading').at(-1)).toEqual({
        phase: 'reading',
        runId: a.run.id,
        done: 320,
        total: 320,
      });
      expect(progress.filter((p) => p.phase === 'computing').at(-1)).toEqual({
        phase: 'computing',
        runId: a.run.id,
        done: 40,
        total: 40,
      });
    },
  );

  it('gives the comparison of compareRuns on the page, bootstrap included', async () => {
    const progress: AnalysisProgress[] = [];
    const out = await engine.compare(
      { dbName: 'x', runIdA: a.run.id, runIdB: b.run.id, resamples: 2000, seed: 0 },
      (p) => void progress.push(p),
    );
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.value).toEqual(compareRuns(a, b, { resamples: 2000, makeRng: () => mulberry32(0) }));
    const buckets = 1 + Object.keys(out.value.byDifficulty).length + Object.keys(out.value.byDb).length;
    expect(progress.filter((p) => p.phase === 'computing').map((p) => p.done)).toEqual(
      Array.from({ length: buckets }, (_, i) => i + 1),
    );
  });

  it('answers an unknown run and an empty one with error data naming the problem, not a thrown object', async () => {
    const missing = await engine.runStats({ dbName: 'x', runId: 'nope', seed: 0 });
    expect(missing).toEqual({ ok: false, error: { name: 'Error', message: 'run nope is not stored' } });
    const empty = createAnalysisEngine(storeOf([syntheticRunFile([], 'empty')]));
    const out = await empty.runStats({ dbName: 'x', runId: 'run-empty', seed: 0 });
    expect(out.ok).toBe(false);
    if (!out.ok)
      expect(out.error).toMatchObject({
        name: 'WorkbenchError',
        code: 'BAD_FORMAT',
        message: expect.stringContaining('no sample can be scored'),
      });
  });
});

describe('the series computations of the worker equal the core functions the CLI calls', () => {
  // Each run on the dataset's 30 questions, as the app's runs name them (the report adds their texts).
  const steps = [11, 12, 13].map((seed, i) => {
    const file = syntheticRunFile(syntheticSamples({ questions: 30, samples: 4, seed }), `step-${i}`);
    return { ...file, run: { ...file.run, subset: { description: 'all', indices: [...Array(30).keys()] } } };
  });
  const series: Series = {
    id: 'series-1',
    name: 'synthetic run',
    createdAt: '2026-01-01T00:00:00.000Z',
    dataset: 'synthetic.json',
    stepRule: '<N>.jsonl',
    steps: steps.map((run, i) => ({
      step: (i + 1) * 50,
      wallTime: null,
      wallTimeSource: null,
      source: `${(i + 1) * 50}.jsonl`,
      run,
      trainerScores: run.samples.map((x, k) => (k % 5 === 0 ? null : x.ex * 0.5 + (k % 3) * 0.1)),
      // The middle step's dump has reward columns (TRL-like); the others have none.
      ...(i === 1
        ? {
            trainerRewards: run.samples.map((x, k) =>
              k % 7 === 0
                ? null
                : { accuracy_reward: x.ex, format_reward: k % 3 === 0 ? null : 0.5, advantage: k / 100 },
            ),
          }
        : {}),
    })),
  };
  /** The stored dataset's questions (the report adds their texts to its run). */
  const questions: Question[] = Array.from({ length: 30 }, (_, i) => ({
    questionId: 500 + i,
    dbId: `db${i % 7}`,
    question: `How many rows does table ${i} hold?`,
    evidence: i % 2 ? '' : `table ${i} is the ${i}th`,
    goldSql: `SELECT COUNT(*) FROM t${i}`,
    difficulty: 'simple',
  }));
  const seriesEngine = createAnalysisEngine(storeOf(steps, [series], { synthetic: questions }));

  it('view: the report of seriesReport, read one step at a time', async () => {
    const out = await seriesEngine.seriesView({ dbName: 'x', seriesId: series.id });
    if (!out.ok) throw new Error(out.error.message);
    expect(out.value.report).toEqual(seriesReport(series));
    expect(out.value.runs.map((r) => [r.step, r.runId, r.samples])).toEqual(
      steps.map((r, i) => [(i + 1) * 50, r.run.id, 120]),
    );
  });

  it('exports: the report JSON of `series --out` and the series file of `--series-out`, byte for byte', async () => {
    const json = await seriesEngine.seriesExport({ dbName: 'x', seriesId: series.id, kind: 'report' });
    if (!json.ok) throw new Error(json.error.message);
    expect(await json.value.text()).toBe(
      JSON.stringify(
        seriesReportJson(seriesReport(series), { stepRule: '<N>.jsonl', dataset: 'synthetic.json' }),
        null,
        1,
      ) + '\n',
    );
    const file = await seriesEngine.seriesExport({ dbName: 'x', seriesId: series.id, kind: 'series-file' });
    if (!file.ok) throw new Error(file.error.message);
    // (compared as a boolean: a difference would print two long JSON texts)
    expect((await file.value.text()) === seriesFileJson(series)).toBe(true);
  });

  it('report: the HTML the page built from the series file export, byte for byte, with the dataset’s question texts', async () => {
    const input = {
      template: REPORT_TEMPLATE,
      product: 'rlvr-workbench 0.1.0 (app)',
      createdAt: '2026-02-03T04:05:06.000Z',
    };
    const progress: AnalysisProgress[] = [];
    const out = await seriesEngine.seriesReport(
      { dbName: 'x', seriesId: series.id, ...input },
      (p) => void progress.push(p),
    );
    if (!out.ok) throw new Error(out.error.message);
    expect(out.value.name).toBe('synthetic run');
    // The page's path before the worker built it: the series file export read back, its last step's run with the texts.
    const file = toSeriesFile(parseSeriesFile(seriesFileJson(series), `training run ${series.id}`));
    const previous = await buildReportHtml(
      REPORT_TEMPLATE,
      reportPayload({
        runs: [withQuestionTexts(file.steps.at(-1)!.run, questions)],
        compare: false,
        series: file,
        ...input,
      }),
      streamGzip,
    );
    const html = await out.value.html.text();
    expect(out.value.html.type).toBe('text/html');
    // (compared as a boolean: a difference would print two long texts)
    expect(html === previous).toBe(true);
    const back = await readReportFile(html, 'x.report.html', streamGzip);
    expect(back.runs.map((r) => r.run.id)).toEqual([steps[2]!.run.id]);
    expect(back.runs[0]!.questions?.map((q) => q.question)).toEqual(questions.map((q) => q.question));
    expect(back.series!.steps.map((s) => s.trainerScores)).toEqual(series.steps.map((s) => s.trainerScores));
    expect(progress.filter((p) => p.phase === 'reading').map((p) => p.runId)).toEqual(steps.map((r) => r.run.id));
  });

  it('report: a series with no step, or steps the series file’s reader refuses (out of order), is the error naming it', async () => {
    const empty: Series = { ...series, id: 'series-empty', steps: [] };
    const input = { template: REPORT_TEMPLATE, product: 'p', createdAt: '2026-02-03T04:05:06.000Z' };
    const none = await createAnalysisEngine(storeOf(steps, [empty, series])).seriesReport({
      dbName: 'x',
      seriesId: empty.id,
      ...input,
    });
    expect(none).toEqual({
      ok: false,
      error: expect.objectContaining({
        name: 'WorkbenchError',
        code: 'NOT_FOUND',
        message: 'the training run has no step yet',
      }),
    });
    // Steps stored out of order: the series file's reader refuses them, as it refused the exported file.
    const swapped: Series = { ...series, id: 'series-swapped', steps: [series.steps[1]!, series.steps[0]!] };
    const bad = await createAnalysisEngine(storeOf(steps, [swapped])).seriesReport({
      dbName: 'x',
      seriesId: swapped.id,
      ...input,
    });
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.error.message).toBe(
        'training run series-swapped: steps[1].step must be greater than the previous step (100): steps are in increasing order, each once, found number 50',
      );
    expect(() => parseSeriesFile(seriesFileJson(swapped), 'training run series-swapped')).toThrow(
      bad.ok ? 'x' : bad.error.message,
    );
  });

  it("one question across steps, read where its samples are in the run's order: each sample's trainer score and reward columns", async () => {
    const byRun = new Map(steps.map((f) => [f.run.id, f]));
    const base = await storeOf(steps, [series], { synthetic: questions })();
    const located = createAnalysisEngine(async () => ({
      ...base,
      // The stored order is (index, sample) as the synthetic runs are; where the question's first sample is in it.
      questionSamplesAt: async (runId, index) => {
        const all = byRun.get(runId)!.samples;
        return { offset: all.findIndex((x) => x.index === index), samples: all.filter((x) => x.index === index) };
      },
    }));
    const out = await located.seriesQuestion({ dbName: 'x', seriesId: series.id, index: 4 });
    if (!out.ok) throw new Error(out.error.message);
    expect(out.value).toEqual(
      questionAcrossSteps(
        series.steps.map((s) => {
          const at = s.run.samples.map((x, k) => [x, k] as const).filter(([x]) => x.index === 4);
          return {
            step: s.step,
            runId: s.run.run.id,
            samples: at.map(([x]) => x),
            trainerScores: at.map(([, k]) => s.trainerScores[k] ?? null),
            ...(s.trainerRewards ? { trainerRewards: at.map(([, k]) => s.trainerRewards![k] ?? null) } : {}),
          };
        }),
      ),
    );
    // Only the middle step has reward columns, one entry per sample of the question, its own sample's.
    expect(out.value.map((s) => s.trainerRewards?.length)).toEqual([undefined, 4, undefined]);
    const middle = series.steps[1]!;
    const first = middle.run.samples.findIndex((x) => x.index === 4);
    expect(out.value[1]!.trainerRewards![0]).toEqual(middle.trainerRewards![first]);
  });

  it("the report's training run gives the worker's series view and each question across steps (samples in any order)", async () => {
    const byRun = new Map(steps.map((f) => [f.run.id, f]));
    const base = await storeOf(steps, [series], { synthetic: questions })();
    const located = createAnalysisEngine(async () => ({
      ...base,
      questionSamplesAt: async (runId, index) => {
        const all = byRun.get(runId)!.samples;
        return { offset: all.findIndex((x) => x.index === index), samples: all.filter((x) => x.index === index) };
      },
    }));
    // The report's series file with each step's samples (and their scores and rewards) reversed.
    const file = toSeriesFile({
      ...series,
      steps: series.steps.map((s) => ({
        ...s,
        run: { ...s.run, samples: [...s.run.samples].reverse() },
        trainerScores: [...s.trainerScores].reverse(),
        ...(s.trainerRewards ? { trainerRewards: [...s.trainerRewards].reverse() } : {}),
      })),
    });
    const report = createReportSeriesServices(file, [{ step: 100, notes: ['496 of 500 rows paired'] }]);
    const view = await located.seriesView({ dbName: 'x', seriesId: series.id });
    if (!view.ok) throw new Error(view.error.message);
    const mine = await report.analysis.seriesView(series.id);
    expect(mine.report).toEqual(view.value.report);
    expect(mine.runs).toEqual(view.value.runs);
    for (const index of [0, 4, 29, 30]) {
      const want = await located.seriesQuestion({ dbName: 'x', seriesId: series.id, index });
      if (!want.ok) throw new Error(want.error.message);
      expect(await report.analysis.seriesQuestion(series.id, index)).toEqual(want.value);
    }
    // The step pages read the trainer's scores and the import notes as the app stores them.
    const middle = await report.service.trainerScores(steps[1]!.run.id);
    expect(middle?.step).toBe(100);
    expect(middle?.scores).toEqual(series.steps[1]!.trainerScores);
    expect(middle?.rewards).toEqual(series.steps[1]!.trainerRewards);
    const [of] = await report.service.ofRun(steps[1]!.run.id);
    expect(of!.steps.map((s) => s.notes ?? null)).toEqual([null, ['496 of 500 rows paired'], null]);
    expect(await report.service.ofRun('elsewhere')).toEqual([]);
    await expect(report.analysis.seriesView('other')).rejects.toThrow('training run other is not in this report');
    await expect(report.service.rename(series.id, 'x')).rejects.toMatchObject({ code: 'UNSUPPORTED' });
  });

  it("report: the steps' import notes and verdict counts the store kept go with the series", async () => {
    const base = await storeOf(steps, [series], { synthetic: questions })();
    const kept = createAnalysisEngine(async () => ({
      ...base,
      series: async (id) => {
        const rec = await base.series(id);
        return {
          ...rec,
          steps: rec.steps.map((s, i) =>
            i === 0
              ? s
              : { ...s, notes: [`note of step ${s.step}`], executions: { executed: 9, reused: 3, fromCache: i } },
          ),
        };
      },
    }));
    const out = await kept.seriesReport({
      dbName: 'x',
      seriesId: series.id,
      template: REPORT_TEMPLATE,
      product: 'p',
      createdAt: '2026-02-03T04:05:06.000Z',
    });
    if (!out.ok) throw new Error(out.error.message);
    const data = openReportPayload(
      await unpackReportData(reportDataOf(await out.value.html.text())!, streamGzip, 'r'),
      'r',
    );
    expect(data.seriesSteps).toEqual([
      { step: 100, notes: ['note of step 100'], executions: { executed: 9, reused: 3, fromCache: 1 } },
      { step: 150, notes: ['note of step 150'], executions: { executed: 9, reused: 3, fromCache: 2 } },
    ]);
  });

  it("report: the page's rows of every step's wrong samples go into the report, and only those samples cross", async () => {
    const asked: RunFile[][] = [];
    // The page's answer: collectResultRows over a stand-in re-execution (the SQL pool is the page's).
    const rowsOf = (runs: RunFile[]) => {
      asked.push(runs);
      return collectResultRows(
        runs,
        async (_f, samples) =>
          samples.map((sample) => ({
            predColumns: ['n'],
            goldColumns: ['n'],
            predRows: [[sample.index]],
            goldRows: [[sample.sample]],
          })),
        { rowsPerSide: 5, maxItems: 7, maxBytes: 1 << 20 },
      );
    };
    const out = await seriesEngine.seriesReport(
      {
        dbName: 'x',
        seriesId: series.id,
        template: REPORT_TEMPLATE,
        product: 'p',
        createdAt: '2026-02-03T04:05:06.000Z',
      },
      undefined,
      rowsOf,
    );
    if (!out.ok) throw new Error(out.error.message);
    // Every step, in order, with exactly its wrong samples.
    expect(asked).toHaveLength(1);
    expect(asked[0]!.map((f) => f.run.id)).toEqual(steps.map((f) => f.run.id));
    for (const [i, f] of asked[0]!.entries())
      expect(f.samples).toEqual(steps[i]!.samples.filter((x) => x.ex !== 1 && x.status !== 'missing-db'));
    const data = openReportPayload(
      await unpackReportData(reportDataOf(await out.value.html.text())!, streamGzip, 'r'),
      'r',
    );
    const wrong = steps.flatMap((f) => f.samples.filter((x) => x.ex !== 1 && x.status !== 'missing-db'));
    expect(wrong.length).toBeGreaterThan(7);
    expect(data.resultRows!.wrong).toBe(wrong.length);
    expect(data.resultRows!.leftOut).toBe(wrong.length - 7);
    expect(data.resultRows!.items.map((r) => [r.runId, r.index, r.sample, r.predRows, r.goldRows])).toEqual(
      wrong
        .slice(0, 7)
        .map((x) => [steps.find((f) => f.samples.includes(x))!.run.id, x.index, x.sample, [[x.index]], [[x.sample]]]),
    );
    // Without the page's rows (no SQL pool), the report has none, as before.
    const none = await seriesEngine.seriesReport({
      dbName: 'x',
      seriesId: series.id,
      template: REPORT_TEMPLATE,
      product: 'p',
      createdAt: '2026-02-03T04:05:06.000Z',
    });
    if (!none.ok) throw new Error(none.error.message);
    const bare = openReportPayload(
      await unpackReportData(reportDataOf(await none.value.html.text())!, streamGzip, 'r'),
      'r',
    );
    expect(bare.resultRows).toBeUndefined();
  });

  it('one question across steps: questionAcrossSteps of its samples', async () => {
    const out = await seriesEngine.seriesQuestion({ dbName: 'x', seriesId: series.id, index: 4 });
    if (!out.ok) throw new Error(out.error.message);
    expect(out.value).toEqual(
      questionAcrossSteps(
        series.steps.map((s) => ({
          step: s.step,
          runId: s.run.run.id,
          samples: s.run.samples.filter((x) => x.index === 4),
        })),
      ),
    );
    expect(out.value.filter((s) => s.diff !== null).length).toBeGreaterThan(0);
  });
});

describe('analysis worker: excluded questions', () => {
  const ids = [...new Set(a.samples.map((s) => s.questionId))];
  const ofA = [ids[0]!, ids[5]!].map((questionId) => ({ questionId, reason: 'r', author: 't', date: '2026-12-07' }));
  const ofSeries = [{ questionId: ids[9]!, reason: 's', author: 't', date: '2026-12-07' }];
  // The store's port with the exclusions of run a and of a training run a is a step of.
  const withExclusions = createAnalysisEngine(async () => ({
    ...(await storeOf([a, b])()),
    exclusions: async (id) => (id === a.run.id ? ofA : id === 'grpo' ? ofSeries : []),
    seriesOfRun: async (id) => (id === a.run.id ? [{ id: 'grpo' } as never] : []),
  }));
  const out = new Set([...ofA, ...ofSeries].map((e) => e.questionId));
  const kept = (r: typeof a) => ({ ...r, samples: r.samples.filter((s) => !out.has(s.questionId)) });

  it("gives the RL statistics of the samples left: the run's own exclusions and its training run's", async () => {
    const res = await withExclusions.runStats({ dbName: 'x', runId: a.run.id, seed: 0 });
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    const ref = computeRunStats(kept(a).samples, { rng: mulberry32(0) });
    expect(res.value.overall).toEqual(ref.overall);
    expect(res.value.prompts).toHaveLength(ids.length - 3);
    expect(res.value.excluded).toBe(3);
    expect(res.value.overall).not.toEqual(computeRunStats(a.samples, { rng: mulberry32(0) }).overall);
  });

  it('compares only questions excluded from neither run (the pairs stay pairs)', async () => {
    const res = await withExclusions.compare({
      dbName: 'x',
      runIdA: a.run.id,
      runIdB: b.run.id,
      resamples: 500,
      seed: 0,
    });
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    // The comparison of the kept questions, and how many it left out (for the page's line).
    expect(res.value).toEqual({
      ...compareRuns(kept(a), kept(b), { resamples: 500, makeRng: () => mulberry32(0) }),
      excluded: 3,
    });
    expect(res.value.overall.questions).toBe(ids.length - 3);
  });
});
