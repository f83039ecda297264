/**
 * The result rows of a report's wrong samples (docs/report.md, "Result rows"), one path for every
 * host: the app's "Export report" (a run's or a training run's) and the CLI's `report` given the
 * databases. Each wrong sample's prediction and gold are run again as the explorer's result
 * tables are (preview-service.ts, a one-worker SQL pool of its own, freed once done), and
 * `collectResultRows` keeps the first rows of each side within the budget.
 */
import type { ItemPreview } from '../core/eval/executor.ts';
import { RESULT_ROWS_BUDGET } from '../core/report/limits.ts';
import { collectResultRows, type ResultRows, type ResultRowsBudget } from '../core/report/result-rows.ts';
import type { RunFile, SampleRecord } from '../core/run/types.ts';
import { createPreviewService, type PreviewPorts } from './preview-service.ts';

/** Wrong samples' first rows of each side (`rows`, many samples of one run at once), and the pool freed (`release`). */
export interface ResultRowsPort {
  rows(file: RunFile, samples: readonly SampleRecord[], rows: number): Promise<(ItemPreview | null)[]>;
  release(): Promise<void>;
}

/** The port over the databases of `ports` (the explorer's preview path, in a pool of its own). */
export function resultRowsPort(ports: PreviewPorts): ResultRowsPort {
  const previews = createPreviewService(ports);
  return {
    rows: (file, samples, rows) => previews.previewMany(file.run, samples, rows),
    release: () => previews.release(),
  };
}

/**
 * The rows of the wrong samples of `runs` within the budget, the worker freed after; null when
 * they cannot be had (no port, or the databases could not be read): the report is made without
 * them and says so (`onError` is told why).
 */
export async function reportResultRows(
  runs: readonly RunFile[],
  port: ResultRowsPort | undefined,
  budget: ResultRowsBudget = RESULT_ROWS_BUDGET,
  onError?: (err: unknown) => void,
): Promise<ResultRows | null> {
  if (!port) return null;
  try {
    return await collectResultRows(runs, port.rows, budget);
  } catch (err) {
    onError?.(err);
    return null;
  } finally {
    await port.release();
  }
}
