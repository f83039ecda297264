/**
 * The report's read-only store (src/report/report-store.ts): the app's store ports over the runs a
 * report carries. What the screens read is what the IndexedDB store gives for the same run file;
 * what would change or run anything is refused with a message that says where it can be done.
 */
import { describe, expect, it } from 'vitest';
import { runFileJson, toRunFile } from '../../src/core/runfile/export.ts';
import { createReportServices } from '../../src/report/report-services.ts';
import { createReportStore } from '../../src/report/report-store.ts';
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
});
