/**
 * The reward playground's executor: one sql.js worker over a stored dataset's databases, kept
 * while the playground is open (a database is loaded once, not per keystroke), with the test
 * suites of metric ts cached in IndexedDB as runs cache them. Each attempt goes through the
 * core's `tryAttempt` (src/core/playground/try-attempt.ts): the same loop and annotations as a
 * run. An attempt that is cancelled (the next keystroke) terminates the worker; the next one
 * starts a fresh worker.
 */
import type { DbSource } from './ports.ts';
import type { DatasetRecord } from './store-ports.ts';
import type { EvalEvent, SqlExecutor } from '../core/eval/executor.ts';
import { tryAttempt, type AttemptReport, type AttemptRequest } from '../core/playground/try-attempt.ts';
import { readDbFacts, type DbFacts } from '../core/eval/db-facts.ts';
import type { SuiteCache } from '../core/ts/suite.ts';
import { oneWorker } from './one-worker.ts';

interface PlaygroundPorts {
  dbSource: (dataset: DatasetRecord) => DbSource;
  suiteCache: (dataset: DatasetRecord) => SuiteCache;
  /** A one-worker SQL pool over them. */
  createExecutor: (source: DbSource, suiteCache: SuiteCache) => SqlExecutor;
}

export interface PlaygroundService {
  attempt(
    dataset: DatasetRecord,
    req: AttemptRequest,
    hooks?: { signal?: AbortSignal; onEvent?: (e: EvalEvent) => void },
  ): Promise<AttemptReport>;
  /** Frees the worker (leaving the playground). */
  release(): Promise<void>;
}

export function createPlaygroundService(ports: PlaygroundPorts): PlaygroundService {
  const worker = oneWorker();
  /** Database facts (SQLite version, column types) by dataset and db_id: read once. */
  const facts = new Map<string, DbFacts>();

  return {
    attempt(dataset, req, hooks = {}) {
      return worker.run(
        dataset.id,
        () => ports.createExecutor(ports.dbSource(dataset), ports.suiteCache(dataset)),
        async (executor) => {
          const key = `${dataset.id}/${req.question.dbId}`;
          let known = facts.get(key);
          if (!known) {
            known = await readDbFacts(executor, [req.question.dbId], hooks.signal);
            if (known.sqliteVersion !== null) facts.set(key, known);
          }
          return tryAttempt(executor, req, { signal: hooks.signal, onEvent: hooks.onEvent, facts: known });
        },
        hooks.signal,
      );
    },
    release: () => worker.release(),
  };
}
