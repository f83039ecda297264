/**
 * Version effects measured on a stored run (issue 23): the samples the static scan flagged
 * version-sensitive are executed again on the older SQLite generation (sql.js 1.8.0, SQLite
 * 3.39.3, loaded on demand: the context's `createOlderExecutor`), and the result is stored with
 * the run (`versionChecks`, schema version 4) for the dashboard and the item view.
 */
import { evalOptionsOf } from '../../core/eval/executor.ts';
import { StoreError } from './errors.ts';
import { measureVersionEffects, versionCheckRecordOf, type VersionCheckRecord } from '../../core/run/version-effects.ts';
import { readDbFacts } from '../../core/sql/db-facts.ts';
import type { EvalItem } from '../../core/types.ts';
import { runOrThrow } from './run-repository.ts';
import type { StoreContext } from './run-session.ts';
import { allSamples } from './sample-blocks.ts';
import { storeDbSource } from './store-db-source.ts';

export async function measureRunVersionEffects(ctx: StoreContext, runId: string, signal?: AbortSignal): Promise<VersionCheckRecord> {
  if (!ctx.createOlderExecutor) throw new StoreError('UNSUPPORTED', 'this store has no second SQLite engine to measure version effects with');
  const run = await runOrThrow(ctx.idb, runId);
  const samples = await allSamples(ctx.idb, runId);
  const items: EvalItem[] = samples.map((s) => ({
    index: s.index, questionId: s.questionId, dbId: s.dbId, difficulty: s.difficulty, predSql: s.sql, goldSql: s.goldSql,
    extraction: s.extraction, sample: s.sample,
  }));
  const executor = await ctx.createOlderExecutor(storeDbSource(ctx.idb, run.dataset.databases, run.dataset.name));
  try {
    const flagged = samples.filter((s) => s.status !== 'missing-db' && (s.versionFeatures?.length ?? 0) > 0);
    const other = flagged.length > 0 ? (await readDbFacts(executor, [flagged[0]!.dbId], signal)).sqliteVersion : null;
    const effects = await measureVersionEffects(items, samples, evalOptionsOf(run.config), { executor, signal }, { main: run.sqliteVersion ?? null, other: other ?? '3.39.3' });
    if (effects.cancelled) throw new DOMException('the version check was cancelled', 'AbortError');
    const record = versionCheckRecordOf(runId, effects, new Date().toISOString());
    await ctx.idb.put('versionChecks', record);
    return record;
  } finally {
    await executor.dispose().catch(() => undefined);
  }
}
