/**
 * Evaluates a run's remaining items in the SQL pool and stores each sample as it finishes.
 * Shared by startRun, resumeRun and the gold self-test; the caller holds the run's lock.
 */
import type { EvalEvent, EvalOptions, SqlExecutor } from '../../core/eval/executor.ts';
import { toSampleRecord } from '../../core/run/run-file.ts';
import type { RunHeader, SampleRecord } from '../../core/run/types.ts';
import { compileRewardFormula, type RewardFormula } from '../../core/rl/reward.ts';
import type { EvalItem, ItemResult } from '../../core/types.ts';
import type { DbSource } from '../sql-pool.ts';
import { StoreError, isAbortError, isQuotaError } from './errors.ts';
import { markUnsorted, nextBlock, sortBlocks } from './sample-blocks.ts';
import { SampleWriter } from './sample-writer.ts';
import type { WorkbenchIdb } from './schema.ts';
import { storeDbSource } from './store-db-source.ts';

export interface ExecutionContext {
  idb: WorkbenchIdb;
  createExecutor: (source: DbSource) => SqlExecutor;
  simulateQuotaAfterSamples?: number;
}

/** `index/sample`: what identifies a sample within a run. */
export function itemKey(x: { index: number; sample?: number }): string {
  return `${x.index}/${x.sample ?? 0}`;
}

/** A finished item as stored: the core's sample record with the run's reward formula. */
export function toSample(result: ItemResult, item: EvalItem, formula: RewardFormula = compileRewardFormula('ex')): SampleRecord {
  return toSampleRecord(item, result, formula);
}

export function evalOptions(run: RunHeader): EvalOptions {
  const c = run.config;
  return { metrics: c.metrics, timeoutMs: c.timeoutMs, readOnly: c.readOnly, vesIterations: c.vesIterations, previewRows: 0 };
}

/**
 * Runs `items` (those not stored yet) of `run`; `doneBefore` samples are already stored. Returns
 * the header with its final status: done, cancelled (signal) or failed (storage); a storage
 * failure also throws a StoreError naming the run.
 */
export async function executeRun(
  ctx: ExecutionContext,
  run: RunHeader,
  items: readonly EvalItem[],
  doneBefore: number,
  hooks: { signal?: AbortSignal; onEvent?: (e: EvalEvent) => void } = {},
): Promise<RunHeader> {
  const { idb } = ctx;
  const total = doneBefore + items.length;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  hooks.signal?.addEventListener('abort', onAbort, { once: true });
  if (hooks.signal?.aborted) stop.abort();
  await markUnsorted(idb, run.id);
  const formula = compileRewardFormula(run.config.rewardFormula ?? 'ex');
  const writer = new SampleWriter(idb, run.id, await nextBlock(idb, run.id), {
    simulateQuotaAfterSamples: ctx.simulateQuotaAfterSamples,
    onError: () => stop.abort(),
  });
  const itemOf = new Map(items.map((it) => [itemKey(it), it]));
  const executor = ctx.createExecutor(storeDbSource(idb, run.dataset.databases, run.dataset.name));
  let status: RunHeader['status'] = 'done';
  let failure: unknown = null;
  try {
    if (items.length > 0) {
      await executor.evaluate(items, evalOptions(run), {
        signal: stop.signal,
        onEvent: (e) => {
          if (e.type !== 'item') return hooks.onEvent?.(e);
          writer.push(toSample(e.result, itemOf.get(itemKey(e.result))!, formula));
          hooks.onEvent?.({ ...e, done: doneBefore + e.done, total });
        },
      });
    }
  } catch (err) {
    if (!isAbortError(err)) failure = err;
  } finally {
    hooks.signal?.removeEventListener('abort', onAbort);
    await executor.dispose().catch(() => undefined);
  }
  try {
    await writer.close();
  } catch (err) {
    failure ??= err;
  }
  // Sorted blocks make paging cheap; if this fails (storage full) the run stays readable unsorted.
  await sortBlocks(idb, run.id).catch(() => undefined);
  if (failure) status = 'failed';
  else if (stop.signal.aborted) status = 'cancelled';
  const final: RunHeader = { ...run, status, updatedAt: new Date().toISOString() };
  await idb.put('runs', final).catch(() => undefined);
  if (failure && isQuotaError(failure)) {
    throw new StoreError(
      'QUOTA_EXCEEDED',
      `Browser storage is full: run "${run.name}" stopped after ${doneBefore + writer.written} of ${total} samples were stored. ` +
        'The stored samples are kept. Free space by deleting runs or datasets you no longer need, then resume the run.',
    );
  }
  if (failure) throw failure;
  return final;
}
