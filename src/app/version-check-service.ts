/**
 * Version effects measured on a stored run (docs/version-effects.md): the samples the static
 * scan flagged version-sensitive are executed again on the older SQLite generation (sql.js
 * 1.8.0, SQLite 3.39.3, loaded on demand: the executor factory's `createOlderExecutor`), and
 * the result is stored with the run (the extras port: `versionChecks`, IndexedDB schema
 * version 5) for the dashboard, the item view and the exports.
 */
import { cancelledError, WorkbenchError } from '../core/errors.ts';
import { readDbFacts } from '../core/eval/db-facts.ts';
import {
  measureVersionEffects,
  versionCheckRecordOf,
  versionSensitive,
  type VersionCheckRecord,
} from '../core/run/version-effects.ts';
import { itemsOfSamples } from './overlay-service.ts';
import type { AppPorts } from './ports.ts';

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
  const flagged = versionSensitive(samples);
  const executor = await createOlder(ports.datasets.source(run.dataset.databases, run.dataset.name));
  try {
    const other =
      flagged.length > 0 ? (await readDbFacts(executor, [samples[flagged[0]!]!.dbId], signal)).sqliteVersion : null;
    const effects = await measureVersionEffects(
      itemsOfSamples(samples),
      samples,
      run.config,
      { executor, signal },
      { main: run.sqliteVersion ?? null, other: other ?? '3.39.3' },
    );
    if (effects.cancelled) throw cancelledError('the version check');
    const record = versionCheckRecordOf(runId, effects, new Date().toISOString());
    await ports.extras.putVersionCheck(record);
    return record;
  } finally {
    await executor.dispose().catch(() => undefined);
  }
}
