/**
 * Result tables for the item explorer: a stored sample is run again (prediction, then gold, as
 * evaluated) in a one-worker sql.js pool over the run's stored databases, asking for the first
 * rows of each side. Samples do not keep rows (a run of 1,534 items would store megabytes of
 * them); re-running one item takes milliseconds and never blocks the page.
 */
import { createBrowserSqlPool } from '../adapters/browser/sql-worker-host.ts';
import { openWorkbenchDb, type WorkbenchIdb } from '../adapters/store/schema.ts';
import { storeDbSource } from '../adapters/store/store-db-source.ts';
import type { ItemPreview, SqlExecutor } from '../core/eval/executor.ts';
import type { EvalItem } from '../core/types.ts';
import { evalOptionsOf } from '../core/eval/constants.ts';
import { runEvaluation } from '../core/run/replay.ts';
import type { PreviewService } from './workbench/services.ts';

export function createPreviewService(dbName?: string): PreviewService {
  let idb: Promise<WorkbenchIdb> | null = null;
  let pool: { runId: string; executor: SqlExecutor } | null = null;
  /** One preview at a time: the pool has one worker, and a newer request waits its turn. */
  let queue: Promise<unknown> = Promise.resolve();

  const release = async () => {
    const p = pool;
    pool = null;
    await p?.executor.dispose().catch(() => undefined);
  };

  return {
    preview(run, sample, rows) {
      const job = queue.then(async () => {
        idb ??= openWorkbenchDb(dbName);
        if (pool?.runId !== run.id) {
          await release();
          pool = { runId: run.id, executor: createBrowserSqlPool(storeDbSource(await idb, run.dataset.databases, run.dataset.name), 1) };
        }
        const item: EvalItem = {
          index: sample.index,
          questionId: sample.questionId,
          dbId: sample.dbId,
          difficulty: sample.difficulty,
          predSql: sample.sql,
          goldSql: sample.goldSql,
          extraction: sample.extraction,
          sample: sample.sample,
        };
        let preview: ItemPreview | null = null;
        const { results: [result] } = await runEvaluation(
          [item],
          evalOptionsOf({ metrics: ['ex'], timeoutMs: run.config.timeoutMs, readOnly: run.config.readOnly, vesIterations: 0 }, rows),
          { executor: pool.executor, sink: (_r, _it, p) => void (preview = p) },
        );
        if (!result) throw new Error('the SQL worker returned no result');
        return { preview, result };
      });
      queue = job.catch(() => undefined);
      return job;
    },
    release() {
      const job = queue.then(release);
      queue = job.catch(() => undefined);
      return job;
    },
  };
}
