/**
 * The training run of a report, behind the app's series ports (ui/context/services.ts):
 * the app's own series screens (curves, checkpoint, warnings, grid, each question across the
 * steps) read it as they read a stored series. The numbers are computed on the page from the
 * series file the report carries, with the core functions the analysis worker uses
 * (`seriesReport`, `questionAcrossSteps`): the same numbers as the app and `series --out`.
 * Everything that would change or make a series refuses, naming where it can be done.
 */
import { WorkbenchError } from '../core/errors.ts';
import { keptPositions } from '../core/eval/exclusions.ts';
import type { RunFile, SampleRecord } from '../core/run/types.ts';
import type { SeriesFile } from '../core/series/file.ts';
import type { TrainerRewards } from '../core/series/model.ts';
import { questionAcrossSteps } from '../core/series/question-steps.ts';
import { seriesReportOf, seriesSample, stepCells, stepStats } from '../core/series/stats.ts';
import type { SeriesStepExtras } from '../core/report/payload.ts';
import type { SeriesRecord, SeriesView } from '../app/records.ts';
import type { SeriesServices } from '../ui/context/services.ts';
import { notInReport } from './report-store.ts';

/** (index, sample) order, as the stored runs (and the report's store) keep samples. */
const bySampleOrder = (a: SampleRecord, b: SampleRecord) => a.index - b.index || a.sample - b.sample;

/** One step with its samples in (index, sample) order and the trainer's scores and rewards beside them. */
interface OrderedStep {
  step: number;
  runId: string;
  file: SeriesFile['steps'][number];
  samples: SampleRecord[];
  scores: Array<number | null>;
  rewards: Array<TrainerRewards | null> | undefined;
}

function ordered(file: SeriesFile): OrderedStep[] {
  return file.steps.map((s) => {
    const order = s.run.samples.map((_, i) => i).sort((a, b) => bySampleOrder(s.run.samples[a]!, s.run.samples[b]!));
    return {
      step: s.step,
      runId: s.run.run.id,
      file: s,
      samples: order.map((i) => s.run.samples[i]!),
      scores: order.map((i) => s.trainerScores[i] ?? null),
      rewards: s.trainerRewards ? order.map((i) => s.trainerRewards![i] ?? null) : undefined,
    };
  });
}

/** The series as the app's store records it, from its file (and what the app kept with each step, when given). */
function seriesRecordOf(file: SeriesFile, extras: readonly SeriesStepExtras[] = []): SeriesRecord {
  const last = file.steps.at(-1)?.run.run;
  const extra = new Map(extras.map((e) => [e.step, e]));
  return {
    id: file.series.id,
    name: file.series.name,
    createdAt: file.series.createdAt,
    updatedAt: file.series.createdAt,
    datasetId: last?.dataset.id ?? '',
    dataset: file.series.dataset,
    stepRule: file.series.stepRule,
    origin: 'series-file',
    config: last?.config ?? ({} as SeriesRecord['config']),
    steps: file.steps.map((s) => {
      const e = extra.get(s.step);
      return {
        step: s.step,
        runId: s.run.run.id,
        wallTime: s.wallTime,
        wallTimeSource: s.wallTimeSource,
        source: s.source,
        owned: true,
        ...(e?.executions ? { executions: e.executions } : {}),
        ...(e?.notes ? { notes: e.notes } : {}),
      };
    }),
    runIds: file.steps.map((s) => s.run.run.id),
  };
}

/** Every step's run of the series, each once (the report's store shows their dashboards and items). */
export function stepRunFiles(file: SeriesFile | null): RunFile[] {
  return file ? file.steps.map((s) => s.run) : [];
}

export function createReportSeriesServices(
  file: SeriesFile | null,
  extras: readonly SeriesStepExtras[] = [],
): SeriesServices {
  const what = 'Changing a training run';
  const refuse = (w: string) => async (): Promise<never> => {
    throw notInReport(w);
  };
  const record = file ? seriesRecordOf(file, extras) : null;
  const steps = file ? ordered(file) : [];
  let view: SeriesView | null = null;
  const get = (seriesId: string): SeriesRecord => {
    if (!record || record.id !== seriesId)
      throw new WorkbenchError('NOT_FOUND', `training run ${seriesId} is not in this report`);
    return record;
  };
  return {
    service: {
      list: async () => (record ? [record] : []),
      get: async (id) => get(id),
      ofRun: async (runId) => (record && record.runIds.includes(runId) ? [record] : []),
      trainerScores: async (runId) => {
        const s = record ? steps.find((x) => x.runId === runId) : undefined;
        if (!record || !s || s.scores.every((x) => x === null)) return null;
        return { seriesId: record.id, step: s.step, scores: s.scores, ...(s.rewards ? { rewards: s.rewards } : {}) };
      },
      rename: refuse('Renaming a training run'),
      delete: refuse('Deleting a training run'),
      stepRule: () => '',
      importDumps: refuse(what),
      addDumps: refuse(what),
      importSeriesFile: refuse(what),
      groupRuns: refuse(what),
      folder: async () => undefined,
      createFollowed: refuse(what),
      follow: refuse(what),
    },
    analysis: {
      async seriesView(seriesId) {
        const series = get(seriesId);
        // As the worker computes it (workers/analysis-engine.ts): each step's samples in the stored
        // (index, sample) order, so that even the sums' rounding is the app's.
        // Without the questions the series excludes, as the worker leaves them out (keptPositions).
        const exclusions = file!.series.exclusions ?? [];
        const kept = steps.map((s) => {
          const at = keptPositions(s.samples, exclusions);
          return at
            ? { samples: at.map((i) => s.samples[i]!), scores: at.map((i) => s.scores[i] ?? null) }
            : { samples: s.samples, scores: s.scores };
        });
        const lean = kept.map((k) => k.samples.map(seriesSample));
        view ??= {
          series,
          report: seriesReportOf(
            steps.map((s, i) =>
              stepStats({
                step: s.step,
                samples: lean[i]!,
                trainerScores: kept[i]!.scores,
                metrics: s.file.run.run.config.metrics,
                wallTime: s.file.wallTime,
                wallTimeSource: s.file.wallTimeSource ?? null,
              }),
            ),
            steps.map((s, i) => ({ step: s.step, cells: stepCells(lean[i]!) })),
          ),
          runs: file!.steps.map((s, i) => ({
            step: s.step,
            runId: s.run.run.id,
            name: s.run.run.name,
            samples: kept[i]!.samples.length,
          })),
          ...(exclusions.length ? { exclusions: [...exclusions] } : {}),
        };
        return view;
      },
      async seriesQuestion(seriesId, index) {
        get(seriesId);
        return questionAcrossSteps(
          steps.map((s) => {
            const at = s.samples.findIndex((x) => x.index === index);
            let end = at;
            while (end >= 0 && end < s.samples.length && s.samples[end]!.index === index) end++;
            const from = at < 0 ? 0 : at;
            const to = at < 0 ? 0 : end;
            return {
              step: s.step,
              runId: s.runId,
              samples: s.samples.slice(from, to),
              trainerScores: s.scores.slice(from, to),
              // As the worker: no reward columns where the question has no sample in the step.
              ...(s.rewards && at >= 0 ? { trainerRewards: s.rewards.slice(from, to) } : {}),
            };
          }),
        );
      },
      seriesExport: refuse('Exporting a training run'),
      seriesReport: refuse('Making a report'),
    },
    folders: {
      canPick: () => false,
      pick: async () => null,
      permission: async () => 'denied' as const,
      ask: async () => 'denied' as const,
      open: () => {
        throw notInReport(what);
      },
    },
  };
}
