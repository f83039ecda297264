/**
 * What every kind of run shares while it writes samples: the run's Web Lock, a writer that
 * appends sample blocks, a stop signal that both the user's signal and a storage failure
 * trigger, and the finish that sorts the blocks, stores the final status and turns a full disk
 * into a message that names the run. Replay runs, resumes, self-tests and generation runs
 * (src/app/run-service.ts, generation-run.ts) all go through it, as the app's run session port.
 */
import type { RunSession } from '../../app/ports.ts';
import type { RunHeader } from '../../core/run/types.ts';
import { holdLock } from './database-bytes.ts';
import { StoreError, isQuotaError } from '../../app/store-errors.ts';
import { markUnsorted, nextBlock, sortBlocks } from './sample-blocks.ts';
import { SampleWriter } from './sample-writer.ts';
import type { WorkbenchIdb } from './schema.ts';

/** What a session writes to. */
interface StoreContext {
  idb: WorkbenchIdb;
  /** Test double: a QuotaExceededError after this many samples. */
  simulateQuotaAfterSamples?: number;
}

/** The stop reason a storage failure gives the run's signal. */
const STORAGE_FAILED = 'storage-failed';

const runLock = (runId: string) => `run:${runId}`;

/** Runs `body` holding the run's Web Lock; throws LOCKED with `lockedMessage` when another tab holds it. */
export async function withRunLock<T>(runId: string, lockedMessage: string, body: () => Promise<T>): Promise<T> {
  const release = await holdLock(runLock(runId), true);
  if (!release) throw new StoreError('LOCKED', lockedMessage);
  try {
    return await body();
  } finally {
    release();
  }
}

/** Ids of runs whose lock is held in any tab right now. */
export async function lockedRunIds(): Promise<string[]> {
  const held = (await navigator.locks?.query())?.held ?? [];
  return held
    .map((l) => l.name ?? '')
    .filter((n) => n.startsWith('run:'))
    .map((n) => n.slice(4));
}

/** Opens a writing session on `run` (the caller holds its lock). */
export async function openRunSession(ctx: StoreContext, run: RunHeader, signal?: AbortSignal): Promise<RunSession> {
  const { idb } = ctx;
  const stop = new AbortController();
  const forward = () => stop.abort(signal?.reason);
  signal?.addEventListener('abort', forward, { once: true });
  if (signal?.aborted) forward();
  await markUnsorted(idb, run.id);
  let writeFailure: unknown = null;
  const writer = new SampleWriter(idb, run.id, await nextBlock(idb, run.id), {
    simulateQuotaAfterSamples: ctx.simulateQuotaAfterSamples,
    onError: (err) => {
      writeFailure ??= err;
      stop.abort(STORAGE_FAILED);
    },
  });
  return {
    signal: stop.signal,
    push: (sample) => writer.push(sample),
    async finish(failure, status, { doneBefore, total }, patch = {}) {
      signal?.removeEventListener('abort', forward);
      try {
        await writer.close();
      } catch (err) {
        failure ??= err;
      }
      failure ??= writeFailure;
      // Sorted blocks make paging cheap; if this fails (storage full) the run stays readable unsorted.
      await sortBlocks(idb, run.id).catch(() => undefined);
      const final: RunHeader = {
        ...run,
        ...patch,
        status: failure ? 'failed' : status,
        updatedAt: new Date().toISOString(),
      };
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
    },
  };
}
