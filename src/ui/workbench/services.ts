/** What the workbench screens get from the composition root (main.ts). */
import type { WorkbenchStore } from '../../adapters/store/workbench-store.ts';
import type { ItemPreview } from '../../core/eval/executor.ts';
import type { RunHeader, SampleRecord } from '../../core/run/types.ts';
import type { ItemResult } from '../../core/types.ts';
import type { ProbeService } from '../probe/probe-service.ts';

/** Re-runs one stored sample in the SQL worker pool to show both result tables. */
export interface PreviewService {
  preview(run: RunHeader, sample: SampleRecord, rows: number): Promise<{ preview: ItemPreview | null; result: ItemResult }>;
  /** Frees the workers (leaving the explorer). */
  release(): Promise<void>;
}

export interface WorkbenchServices {
  store: WorkbenchStore;
  previews: PreviewService;
  /** The reward-hacking probe over stored databases (the probe screen makes its own when absent). */
  probe?: ProbeService;
  /** A file of the embedded demo (public/demo), by its path under `demo/`, e.g. `gold.sql`. */
  fetchDemoFile(path: string): Promise<Blob>;
}
