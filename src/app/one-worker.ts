/**
 * One SQL executor (a one-worker pool) kept for a key (a run, a dataset) while requests for that
 * key come, replaced (the old one disposed) when another key comes, and taking one request at a
 * time: a newer request waits its turn (`oneAtATime`). The explorer's preview and the playground.
 */
import type { SqlExecutor } from '../core/eval/executor.ts';
import { oneAtATime } from './one-at-a-time.ts';

interface OneWorker {
  /** Runs `job` on the executor of `key` (made by `make` when the key is new), after the requests before it. */
  run<T>(
    key: string,
    make: () => SqlExecutor,
    job: (executor: SqlExecutor) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T>;
  /** Disposes the executor (after the requests before it). */
  release(): Promise<void>;
}

export function oneWorker(): OneWorker {
  let kept: { key: string; executor: SqlExecutor } | null = null;
  const serial = oneAtATime();
  const release = async () => {
    const k = kept;
    kept = null;
    await k?.executor.dispose().catch(() => undefined);
  };
  return {
    run(key, make, job, signal) {
      return serial(async () => {
        signal?.throwIfAborted();
        if (kept?.key !== key) {
          await release();
          kept = { key, executor: make() };
        }
        return job(kept.executor);
      });
    },
    release: () => serial(release),
  };
}
