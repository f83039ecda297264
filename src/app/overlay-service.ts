/**
 * The corrected-gold overlay on a stored run: the run's own samples are the official verdicts
 * and the items (SQL, gold, identity); the items whose gold the overlay changes are executed
 * again in the SQL workers against the run's databases. `attachRunOverlay` stores the result
 * with the run (the extras port: `overlays`, IndexedDB schema version 5;
 * core/run/overlay-record.ts), so it survives a reload; attaching another overlay replaces it.
 */
import { cancelledError } from '../core/errors.ts';
import { overlayItems, parseGoldOverlay } from '../core/formats/gold-overlay.ts';
import { compareWithOverlay, type OverlayComparison } from '../core/run/gold-overlay-run.ts';
import {
  OVERLAY_PREVIEW_ROWS,
  overlayKey,
  overlayRecordOf,
  type GoldOverlayRecord,
} from '../core/run/overlay-record.ts';
import type { SampleRecord } from '../core/run/types.ts';
import type { EvalItem, SqlValue } from '../core/types.ts';
import type { AppPorts } from './ports.ts';

type GoldPreview = { columns: string[]; rows: SqlValue[][] };

/** The run's samples as the items they were scored from. */
export function itemsOfSamples(samples: readonly SampleRecord[]): EvalItem[] {
  return samples.map((s) => ({
    index: s.index,
    questionId: s.questionId,
    dbId: s.dbId,
    difficulty: s.difficulty,
    predSql: s.sql,
    goldSql: s.goldSql,
    extraction: s.extraction,
    sample: s.sample,
  }));
}

export async function compareRunWithOverlay(
  ports: AppPorts,
  runId: string,
  file: { name: string; text: string },
  signal?: AbortSignal,
  /** Receives the corrected gold's result (first rows) of each re-scored sample. */
  onPreview?: (index: number, sample: number, preview: GoldPreview) => void,
): Promise<OverlayComparison> {
  const run = await ports.runs.get(runId);
  const overlay = parseGoldOverlay(file.text, file.name);
  const samples = await ports.runs.samples(runId);
  const executor = ports.executors.createExecutor(ports.datasets.source(run.dataset.databases, run.dataset.name));
  try {
    // The run's samples carry their findings; the corrected verdicts are compared on EX only.
    return await compareWithOverlay(itemsOfSamples(samples), samples, overlay, run.config, {
      executor,
      signal,
      findings: false,
      ...(onPreview
        ? {
            previewRows: OVERLAY_PREVIEW_ROWS,
            sink: (record, preview) => {
              if (preview)
                onPreview(record.index, record.sample, {
                  columns: preview.goldColumns,
                  rows: preview.goldRows as SqlValue[][],
                });
            },
          }
        : {}),
    });
  } finally {
    await executor.dispose().catch(() => undefined);
  }
}

/** Scores the overlay and stores it with the run (replacing an earlier one); a cancelled scoring stores nothing. */
export async function attachRunOverlay(
  ports: AppPorts,
  runId: string,
  file: { name: string; text: string },
  signal?: AbortSignal,
): Promise<GoldOverlayRecord> {
  const previews = new Map<string, GoldPreview>();
  const c = await compareRunWithOverlay(ports, runId, file, signal, (index, sample, p) =>
    previews.set(overlayKey(index, sample), p),
  );
  if (c.cancelled) throw cancelledError('the overlay scoring');
  const overlay = parseGoldOverlay(file.text, file.name);
  const samples = await ports.runs.samples(runId);
  const applied = overlayItems(itemsOfSamples(samples), overlay);
  const changed = new Map<string, string>();
  for (const at of applied.changedGold)
    changed.set(overlayKey(samples[at]!.index, samples[at]!.sample), applied.items[at]!.goldSql);
  const record = overlayRecordOf(
    runId,
    file,
    c,
    (index, sample) => changed.get(overlayKey(index, sample)),
    previews,
    new Date().toISOString(),
  );
  // Only the samples whose gold changed and that were scored again (a missing database stays missing).
  const rescored = new Set(
    c.correctedResults.filter((r) => r.status !== 'missing-db').map((r) => overlayKey(r.index, r.sample ?? 0)),
  );
  record.items = record.items.filter((it) => rescored.has(overlayKey(it.index, it.sample)));
  await ports.extras.putOverlay(record);
  return record;
}
