/**
 * The corrected-gold overlay on a stored run: the run's own samples are the official verdicts
 * and the items (SQL, gold, identity); the items whose gold the overlay changes are executed
 * again in the SQL workers against the run's databases. `attachRunOverlay` stores the result
 * with the run (`overlays`, schema version 4: core/run/overlay-record.ts), so it survives a
 * reload; attaching another overlay replaces it.
 */
import { evalOptionsOf, type EvalEvent } from '../../core/eval/executor.ts';
import { OVERLAY_PREVIEW_ROWS, overlayKey, overlayRecordOf, type GoldOverlayRecord } from '../../core/run/overlay-record.ts';
import { overlayItems, parseGoldOverlay } from '../../core/formats/gold-overlay.ts';
import { compareWithOverlay, type OverlayComparison } from '../../core/run/gold-overlay-run.ts';
import type { EvalItem, SqlValue } from '../../core/types.ts';
import { runOrThrow } from './run-repository.ts';
import type { StoreContext } from './run-session.ts';
import { allSamples } from './sample-blocks.ts';
import { storeDbSource } from './store-db-source.ts';

export async function compareRunWithOverlay(
  ctx: StoreContext, runId: string, file: { name: string; text: string }, signal?: AbortSignal,
  onPreview?: (index: number, sample: number, preview: { columns: string[]; rows: SqlValue[][] }) => void,
): Promise<OverlayComparison> {
  const run = await runOrThrow(ctx.idb, runId);
  const overlay = parseGoldOverlay(file.text, file.name);
  const samples = await allSamples(ctx.idb, runId);
  const items: EvalItem[] = samples.map((s) => ({
    index: s.index, questionId: s.questionId, dbId: s.dbId, difficulty: s.difficulty, predSql: s.sql, goldSql: s.goldSql,
    extraction: s.extraction, sample: s.sample,
  }));
  const executor = ctx.createExecutor(storeDbSource(ctx.idb, run.dataset.databases, run.dataset.name));
  try {
    const options = evalOptionsOf(run.config, onPreview ? OVERLAY_PREVIEW_ROWS : 0);
    const onEvent = onPreview ? (e: EvalEvent) => {
      if (e.type === 'item' && e.preview) onPreview(e.result.index, e.result.sample ?? 0, { columns: e.preview.goldColumns, rows: e.preview.goldRows as SqlValue[][] });
    } : undefined;
    return await compareWithOverlay(items, samples, overlay, options, { executor, signal, ...(onEvent ? { onEvent } : {}) });
  } finally {
    await executor.dispose().catch(() => undefined);
  }
}

/** Scores the overlay and stores it with the run (replacing an earlier one); a cancelled scoring stores nothing. */
export async function attachRunOverlay(ctx: StoreContext, runId: string, file: { name: string; text: string }, signal?: AbortSignal): Promise<GoldOverlayRecord> {
  const previews = new Map<string, { columns: string[]; rows: SqlValue[][] }>();
  const c = await compareRunWithOverlay(ctx, runId, file, signal, (index, sample, p) => previews.set(overlayKey(index, sample), p));
  if (c.cancelled) throw new DOMException('the overlay scoring was cancelled', 'AbortError');
  const overlay = parseGoldOverlay(file.text, file.name);
  const samples = await allSamples(ctx.idb, runId);
  const changed = new Map<string, string>();
  const applied = overlayItems(samples.map((s) => ({ ...s, predSql: s.sql })), overlay);
  for (const at of applied.changedGold) changed.set(overlayKey(samples[at]!.index, samples[at]!.sample), applied.items[at]!.goldSql);
  const record = overlayRecordOf(runId, file, c, (index, sample) => changed.get(overlayKey(index, sample)), previews, new Date().toISOString());
  // Only the samples whose gold changed and that were scored again (a missing database stays missing).
  record.items = record.items.filter((it) => c.correctedResults.some((r) => r.index === it.index && (r.sample ?? 0) === it.sample && r.status !== 'missing-db'));
  await ctx.idb.put('overlays', record);
  return record;
}
