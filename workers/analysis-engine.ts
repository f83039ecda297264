/**
 * The analysis worker's body (see analysis.api.ts), over a port that reads a stored run: in the
 * worker that port is IndexedDB (analysis.worker.ts), in the node tests a plain object. The
 * numbers are the core's own (`computeRunStats`, `compareRuns`) with the CLI's generators, so
 * they equal `npm run cli -- stats` and `compare` on the exported run files.
 */
import { toErrorData } from '../src/core/errors.ts';
import { compareRuns } from '../src/core/rl/compare.ts';
import { mulberry32 } from '../src/core/rl/rng.ts';
import { computeRunStats } from '../src/core/rl/run-stats.ts';
import { toStatsView } from '../src/core/rl/stats-view.ts';
import { toRunFile } from '../src/core/run/export.ts';
import type { RunFile, RunHeader, SampleRecord } from '../src/core/run/types.ts';
import type { AnalysisProgress } from '../src/adapters/store/records.ts';
import { PROMPTS_PER_MESSAGE, type AnalysisOutcome, type AnalysisWorkerApi } from './analysis.api.ts';

/** One store's runs as the engine reads them. */
export interface StoredRuns {
  header(runId: string): Promise<RunHeader>;
  /** The run's samples in (index, sample) order; `onStep(done, total)` as they are read. */
  samples(runId: string, onStep: (done: number, total: number) => void): Promise<SampleRecord[]>;
  close(): void;
}

async function outcome<T>(fn: () => Promise<T>): Promise<AnalysisOutcome<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    return { ok: false, error: toErrorData(err) };
  }
}

async function readRun(runs: StoredRuns, runId: string, report: (p: AnalysisProgress) => void): Promise<RunFile> {
  const header = await runs.header(runId);
  const samples = await runs.samples(runId, (done, total) => report({ phase: 'reading', runId, done, total }));
  return toRunFile(header, samples);
}

export function createAnalysisEngine(open: (dbName: string) => Promise<StoredRuns>): AnalysisWorkerApi {
  return {
    runStats(job, onProgress, onPrompts) {
      const report = (p: AnalysisProgress) => void onProgress?.(p);
      return outcome(async () => {
        const runs = await open(job.dbName);
        let file: RunFile;
        try {
          file = await readRun(runs, job.runId, report);
        } finally {
          runs.close();
        }
        const stats = computeRunStats(file.samples, {
          rng: mulberry32(job.seed),
          onProgress: (done, total) => report({ phase: 'computing', runId: job.runId, done, total }),
        });
        const view = toStatsView(stats);
        if (!onPrompts) return view;
        for (let i = 0; i < view.prompts.length; i += PROMPTS_PER_MESSAGE) await onPrompts(view.prompts.slice(i, i + PROMPTS_PER_MESSAGE));
        return { ...view, prompts: [] };
      });
    },
    compare(job, onProgress) {
      const report = (p: AnalysisProgress) => void onProgress?.(p);
      return outcome(async () => {
        const runs = await open(job.dbName);
        let a: RunFile;
        let b: RunFile;
        try {
          a = await readRun(runs, job.runIdA, report);
          b = await readRun(runs, job.runIdB, report);
        } finally {
          runs.close();
        }
        return compareRuns(a, b, {
          resamples: job.resamples,
          makeRng: () => mulberry32(job.seed),
          onProgress: (done, total) => report({ phase: 'computing', runId: job.runIdB, done, total }),
        });
      });
    },
  };
}
