/**
 * Result tables for the item explorer: a stored sample is run again (prediction, then gold, as
 * evaluated) in a one-worker sql.js pool over the run's stored databases, asking for the first
 * rows of each side. Samples do not keep rows (a run of 1,534 items would store megabytes of
 * them); re-running one item takes milliseconds and never blocks the page.
 */
import type { DbSource } from './ports.ts';
import type { ItemPreview, SqlExecutor } from '../core/eval/executor.ts';
import { DEFAULT_RUN_CONFIG, type RunHeader, type SampleRecord } from '../core/run/types.ts';
import type { EvalItem, ItemResult } from '../core/types.ts';
import { scoreRun } from '../core/run/score-run.ts';
import { WorkbenchError } from '../core/errors.ts';
import { oneWorker } from './one-worker.ts';

/** Re-runs one stored sample in the SQL worker pool to show both result tables. */
export interface PreviewService {
  preview(
    run: RunHeader,
    sample: SampleRecord,
    rows: number,
  ): Promise<{
    preview: ItemPreview | null;
    result: ItemResult;
    /** Why there are no rows to show when that is not the prediction's failure (the offline report holds no databases). */
    note?: string;
  }>;
  /** Frees the workers (leaving the explorer). */
  release(): Promise<void>;
}

/** The preview over the stored databases, which also re-runs many samples at once (a report's rows). */
interface StoredPreviewService extends PreviewService {
  /**
   * The first `rows` rows of each side of many samples of one run (a report's wrong samples), in
   * their order, in one pass over the pool: null where the prediction gave no rows.
   */
  previewMany(run: RunHeader, samples: readonly SampleRecord[], rows: number): Promise<(ItemPreview | null)[]>;
}

export interface PreviewPorts {
  /** The run's stored databases. */
  dbSource: (run: RunHeader) => DbSource;
  /** A one-worker SQL pool over them. */
  createExecutor: (source: DbSource) => SqlExecutor;
}

export function createPreviewService(ports: PreviewPorts): StoredPreviewService {
  /** One preview at a time: the pool has one worker, and a newer request waits its turn. */
  const worker = oneWorker();

  /** Verdicts and rows only (the stored samples keep their findings), each sample's preview handed to `sink`. */
  const rerun = (run: RunHeader, samples: readonly SampleRecord[], rows: number, sink: PreviewSink) =>
    worker.run(
      run.id,
      () => ports.createExecutor(ports.dbSource(run)),
      (executor) =>
        scoreRun(
          samples.map(itemOf),
          {
            ...DEFAULT_RUN_CONFIG,
            metrics: ['ex'],
            timeoutMs: run.config.timeoutMs,
            readOnly: run.config.readOnly,
            vesIterations: 0,
          },
          { executor, previewRows: rows, findings: false, sink },
        ),
    );

  return {
    async preview(run, sample, rows) {
      let preview: ItemPreview | null = null;
      const {
        results: [result],
      } = await rerun(run, [sample], rows, (_r, p) => void (preview = p));
      if (!result) throw new WorkbenchError('INTERNAL', 'the SQL worker returned no result for the previewed item');
      return { preview, result };
    },
    async previewMany(run, samples, rows) {
      const key = (index: number, sample: number) => `${index}:${sample}`;
      const previews = new Map<string, ItemPreview | null>();
      await rerun(run, samples, rows, (r, p) => void previews.set(key(r.index, r.sample), p));
      return samples.map((s) => previews.get(key(s.index, s.sample)) ?? null);
    },
    release: () => worker.release(),
  };
}

type PreviewSink = (record: SampleRecord, preview: ItemPreview | null) => void;

function itemOf(sample: SampleRecord): EvalItem {
  return {
    index: sample.index,
    questionId: sample.questionId,
    dbId: sample.dbId,
    difficulty: sample.difficulty,
    predSql: sample.sql,
    goldSql: sample.goldSql,
    extraction: sample.extraction,
    sample: sample.sample,
  };
}
