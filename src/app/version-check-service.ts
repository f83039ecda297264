/**
 * Version effects measured (docs/version-effects.md): the samples the static scan flagged
 * version-sensitive are executed again on the older SQLite generation (sql.js 1.8.0, SQLite
 * 3.39.3). `checkOnOlderSqlite` is the use case both hosts call: the CLI's `eval` on the items it
 * has just scored (with its verdict cache under the older engine's name), the app's
 * `measureRunVersionEffects` on a stored run, read through the ports (the executor factory's
 * `createOlderExecutor`, loaded on demand), whose result is stored with the run (the extras
 * port: `versionChecks`, IndexedDB schema version 5) for the dashboard, the item view and the
 * exports.
 */
import { cancelledError, WorkbenchError } from '../core/errors.ts';
import type { AbortSignalLike, SqlExecutor } from '../core/eval/executor.ts';
import { factsFor } from '../core/run/score-run.ts';
import type { RunConfig } from '../core/run/types.ts';
import type { VerdictCachePort } from '../core/run/verdict-cache.ts';
import {
  measureVersionEffects,
  versionCheckRecordOf,
  versionSensitive,
  type VersionCheckRecord,
  type VersionEffects,
} from '../core/run/version-effects.ts';
import type { EvalItem, ItemResult } from '../core/types.ts';
import { itemsOfSamples } from './overlay-service.ts';
import type { AppPorts } from './ports.ts';

/** `sqlite_version()` of sql.js 1.8.0, named when no flagged database could be read to ask it. */
const OLDER_SQLITE_VERSION = '3.39.3';

/** The older engine of a version check and what the host gives it. */
interface OlderSqlitePorts {
  /** Opens sql.js 1.8.0 over the run's databases (the host's engine); disposed when the check ends. */
  open: () => SqlExecutor | Promise<SqlExecutor>;
  /**
   * The verdict cache, keyed under the older engine's own name (its verdicts and databases'
   * facts never answer for the main engine): a check seen before executes nothing.
   */
  verdictCache?: VerdictCachePort;
  /** Identical items take the verdict of the first (reuse.ts); default on. */
  reuse?: boolean;
  signal?: AbortSignalLike;
}

/**
 * The flagged items of `results` (parallel to `items`, scored under `config` on the main engine,
 * whose `sqlite_version()` is `mainVersion`) executed again on the older engine: the flagged
 * databases' facts first (the older SQLite's version, from the cache when it knows them), then
 * the run recipe over the flagged items (measureVersionEffects).
 */
export async function checkOnOlderSqlite(
  items: readonly EvalItem[],
  results: readonly ItemResult[],
  config: RunConfig,
  older: OlderSqlitePorts,
  mainVersion: string | null,
): Promise<VersionEffects> {
  const flagged = versionSensitive(results).map((i) => items[i]!.dbId);
  const executor = await older.open();
  try {
    const facts = await factsFor(executor, flagged, undefined, older.signal, older.verdictCache);
    return await measureVersionEffects(
      items,
      results,
      config,
      {
        executor,
        facts,
        ...(older.reuse !== undefined ? { reuse: older.reuse } : {}),
        ...(older.signal ? { signal: older.signal } : {}),
        ...(older.verdictCache ? { verdictCache: older.verdictCache } : {}),
      },
      { main: mainVersion, other: facts.sqliteVersion ?? OLDER_SQLITE_VERSION },
    );
  } finally {
    await executor.dispose().catch(() => undefined);
  }
}

/** The version check of a stored run, stored with it (replacing an earlier one). */
export async function measureRunVersionEffects(
  ports: AppPorts,
  runId: string,
  signal?: AbortSignal,
): Promise<VersionCheckRecord> {
  const createOlder = ports.executors.createOlderExecutor;
  if (!createOlder)
    throw new WorkbenchError(
      'UNSUPPORTED',
      'this workbench has no second SQLite engine to measure version effects with (sql.js 1.8.0 is not wired in)',
    );
  const run = await ports.runs.get(runId);
  const samples = await ports.runs.samples(runId);
  const effects = await checkOnOlderSqlite(
    itemsOfSamples(samples),
    samples,
    run.config,
    {
      open: () => createOlder(ports.datasets.source(run.dataset.databases, run.dataset.name)),
      ...(signal ? { signal } : {}),
    },
    run.sqliteVersion ?? null,
  );
  if (effects.cancelled) throw cancelledError('the version check');
  const record = versionCheckRecordOf(runId, effects, new Date().toISOString());
  await ports.extras.putVersionCheck(record);
  return record;
}
