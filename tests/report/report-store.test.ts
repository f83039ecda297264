/**
 * The report's read-only store (src/report/report-store.ts): the app's store ports over the runs a
 * report carries. What the screens read is what the IndexedDB store gives for the same run file;
 * what would change or run anything is refused with a message that says where it can be done.
 */
import { describe, expect, it } from 'vitest';
import { runFileJson, toRunFile } from '../../src/core/runfile/export.ts';
import { createReportServices } from '../../src/report/report-services.ts';
import { createReportStore } from '../../src/report/report-store.ts';
import { landingHash } from '../../src/report/report-routes.ts';
import { toSeriesFile } from '../../src/core/series/file.ts';
import { syntheticRunFile, syntheticSamples } from '../robustness/synthetic-run.ts';

const samples = syntheticSamples({ questions: 9, samples: 4, seed: 8 });
const a = toRunFile(
  { ...syntheticRunFile(samples, 'a').run, createdAt: '2026-01-02T00:00:00.000Z' },
  [...samples].reverse(),
  [{ index: 3, questionId: 3, dbId: 'db3', question: 'How many?', evidence: 'none' }],
);
const b = toRunFile(
  syntheticRunFile(syntheticSamples({ questions: 9, samples: 1, seed: 2 }), 'b').run,
  syntheticSamples({ questions: 9, samples: 1, seed: 2 }),
);

describe('the report store', () => {
  it('reads runs, pages of samples, one question and the question texts as the app store does', async () => {
    const store = createReportStore([a, b]);
    expect((await store.runs.list()).map((r) => r.id)).toEqual(['run-a', 'run-b']);
    expect(await store.runs.sampleCount('run-a')).toBe(36);
    expect(await store.runs.samples('run-a', { offset: 4, limit: 3 })).toEqual(a.samples.slice(4, 7));
    for (const index of [0, 3, 8, 9])
      expect(await store.runs.questionSamples('run-a', index)).toEqual(a.samples.filter((s) => s.index === index));
    // Exported as the IndexedDB store exports: header and samples, the texts left in the report.
    expect(runFileJson(await store.runs.export('run-a'))).toBe(runFileJson(toRunFile(a.run, a.samples)));
    const dataset = await store.datasets.get(a.run.dataset.id);
    expect(dataset?.questions[3]).toMatchObject({ question: 'How many?', evidence: 'none', goldSql: 'SELECT 1' });
    await expect(store.runs.samples('nope')).rejects.toThrow('run nope is not in this report');
  });

  it('refuses what a read-only file cannot do, saying where it can be done; the result tables say why there are no rows', async () => {
    const services = createReportServices({ runs: [a], series: null });
    await expect(services.store.runs.delete('run-a')).rejects.toThrow(
      /^Deleting a run is not part of this report \(a read-only file\): import the report into the workbench/,
    );
    await expect(services.store.service.startReplay({} as never)).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    expect(services.store.service.compareGoldOverlay).toBeUndefined();
    expect(services.reports).toBeUndefined();
    const s = a.samples.find((x) => x.status === 'ok')!;
    const { preview, result, note } = await services.previews.preview(a.run, s, 20);
    expect(preview).toBeNull();
    expect(result).toBe(s);
    expect(note).toMatch(
      /^The run stored this item's verdict and row counts \(1 predicted row, 1 gold row\), not the rows/,
    );
  });

  it('shows the rows the report kept for a wrong sample, and says which rows it keeps for the others', async () => {
    const w = a.samples.filter((x) => x.ex === 0 && x.status === 'ok');
    const rows = {
      rowsPerSide: 20,
      maxItems: 1,
      maxBytes: 1000,
      wrong: w.length,
      noRows: 0,
      leftOut: w.length - 1,
      bytes: 90,
      items: [
        {
          runId: 'run-a',
          index: w[0]!.index,
          sample: w[0]!.sample,
          predColumns: ['n'],
          goldColumns: ['n'],
          predRows: [[{ big: '9007199254740993' }]],
          goldRows: [[1], [2]],
        },
      ],
    };
    const services = createReportServices({ runs: [a], series: null, resultRows: rows });
    const kept = await services.previews.preview(a.run, w[0]!, 20);
    expect(kept.note).toBeUndefined();
    expect(kept.preview).toEqual({
      predColumns: ['n'],
      goldColumns: ['n'],
      predRows: [[9007199254740993n]],
      goldRows: [[1], [2]],
    });
    const other = await services.previews.preview(a.run, w[1]!, 20);
    expect(other.preview).toBeNull();
    expect(other.note).toContain(
      `this report's rows (first 20 rows of each side for 1 wrong sample of ${w.length}, 90 bytes (budget: 1 samples, 1000 bytes); ${w.length - 1} left out: the budget was reached) do not include this sample`,
    );
    const right = a.samples.find((x) => x.ex === 1)!;
    expect((await services.previews.preview(a.run, right, 20)).note).toContain(
      'this report keeps rows of wrong samples only',
    );
  });

  it("holds every step of the report's training run: its dashboards and items open in the report", async () => {
    const steps = [b, toRunFile({ ...a.run, id: 'run-c', name: 'c' }, a.samples)];
    const series = toSeriesFile({
      id: 's',
      name: 'run',
      createdAt: '2026-01-01T00:00:00.000Z',
      dataset: 'd',
      stepRule: '<N>',
      steps: steps.map((run, i) => ({
        step: i + 1,
        wallTime: null,
        wallTimeSource: null,
        source: `${i + 1}.jsonl`,
        run,
        trainerScores: run.samples.map(() => null),
      })),
    });
    const services = createReportServices({ runs: [a], series });
    expect((await services.store.runs.list()).map((r) => r.id).sort()).toEqual(['run-a', 'run-b', 'run-c']);
    expect(await services.store.runs.sampleCount('run-c')).toBe(a.samples.length);
    // The report's own run keeps its question texts (first), the steps add their runs.
    expect((await services.store.datasets.get(a.run.dataset.id))?.questions[3]?.question).toBe('How many?');
    expect(landingHash({ runs: [a], compare: false, series })).toBe('#/series/s');
    expect(landingHash({ runs: [a], compare: false, series: null })).toBe('#/run/run-a');
    expect(landingHash({ runs: [a, b], compare: true, series })).toBe('#/compare/run-a/run-b');
  });
});
