/**
 * A corrected-gold overlay as stored with a run: the overlay's name and text, both
 * totals, and for every scored sample whose gold SQL the overlay changes, the corrected gold,
 * its verdict and the first rows of its result. Stored in IndexedDB beside the run
 * (`overlays`, IndexedDB schema version 5), so it survives a reload; exported with the run file; read by
 * the dashboard (second headline), the item view (corrected SQL, result, both verdicts), the
 * exports (corrected columns) and the RL and Compare views when "corrected gold" is chosen.
 */
import type { RewardFormula } from '../eval/reward.ts';
import type { ItemResult, SqlValue } from '../types.ts';
import type { OverlayComparison } from './gold-overlay-run.ts';
import type { RunHeader, SampleRecord } from './types.ts';
import { versionCheckHeader, withVersionChecks, type VersionCheckRecord } from './version-effects.ts';

export interface OverlayItemRecord {
  index: number;
  sample: number;
  questionId: number;
  /** The corrected gold SQL and the sample's verdict against it. */
  goldSql: string;
  ex: 0 | 1;
  softF1: number | null;
  status: ItemResult['status'];
  error: string | null;
  goldRowCount: number | null;
  /** The corrected gold's result: its columns and first rows (for display). */
  goldColumns: string[];
  goldRows: SqlValue[][];
}

export interface GoldOverlayRecord {
  runId: string;
  /** The overlay's file name and text (kept, so it can be applied again or exported). */
  name: string;
  text: string;
  attachedAt: string;
  covered: number;
  goldsChanged: number;
  official: { count: number; ex: number | null; softF1: number | null };
  corrected: { count: number; ex: number | null; softF1: number | null };
  /** Every scored sample whose gold the overlay changes, in (index, sample) order. */
  items: OverlayItemRecord[];
}

/** Which gold a view scores against. */
export type GoldChoice = 'official' | 'corrected';

/** Rows kept of each corrected gold's result. */
export const OVERLAY_PREVIEW_ROWS = 20;

export const overlayKey = (index: number, sample: number) => `${index}.${sample}`;

/**
 * The record of a comparison; `previews` holds the corrected golds' results by overlayKey (from
 * the evaluation's item events), missing ones stored as no rows.
 */
export function overlayRecordOf(
  runId: string,
  file: { name: string; text: string },
  c: OverlayComparison,
  goldSqlOf: (index: number, sample: number) => string | undefined,
  previews: ReadonlyMap<string, { columns: string[]; rows: SqlValue[][] }>,
  now: string,
): GoldOverlayRecord {
  const t = (s: OverlayComparison['official']) => ({
    count: s.byDifficulty.total.count,
    ex: s.byDifficulty.total.ex,
    softF1: s.byDifficulty.total.softF1,
  });
  const items: OverlayItemRecord[] = [];
  for (const r of c.correctedResults) {
    const sample = r.sample ?? 0;
    const goldSql = goldSqlOf(r.index, sample);
    if (goldSql === undefined) continue;
    const p = previews.get(overlayKey(r.index, sample));
    items.push({
      index: r.index,
      sample,
      questionId: r.questionId,
      goldSql,
      ex: r.ex,
      softF1: r.softF1,
      status: r.status,
      error: r.error,
      goldRowCount: r.goldRowCount,
      goldColumns: p?.columns ?? [],
      goldRows: (p?.rows ?? []).slice(0, OVERLAY_PREVIEW_ROWS),
    });
  }
  items.sort((a, b) => a.index - b.index || a.sample - b.sample);
  return {
    runId,
    name: file.name,
    text: file.text,
    attachedAt: now,
    covered: c.covered,
    goldsChanged: c.goldsChanged,
    official: t(c.official),
    corrected: t(c.corrected),
    items,
  };
}

/** The corrected verdict of each changed sample, by overlayKey. */
export function overlayByKey(record: GoldOverlayRecord | null | undefined): Map<string, OverlayItemRecord> {
  return new Map((record?.items ?? []).map((it) => [overlayKey(it.index, it.sample), it]));
}

/**
 * The samples as scored against the corrected gold: a sample whose gold the overlay changes
 * takes the corrected verdict (EX, Soft-F1, status, error, gold SQL) and its reward again from
 * the run's formula; every other sample is unchanged. The identity of each sample stays.
 */
export function withCorrectedGold<
  T extends Pick<
    SampleRecord,
    'index' | 'sample' | 'ex' | 'softF1' | 'status' | 'error' | 'goldSql' | 'reward' | 'format' | 'ts'
  >,
>(samples: readonly T[], record: GoldOverlayRecord | null | undefined, formula: RewardFormula | null): T[] {
  const by = overlayByKey(record);
  if (by.size === 0) return [...samples];
  return samples.map((s) => {
    const c = by.get(overlayKey(s.index, s.sample));
    if (!c) return s;
    const next = { ...s, ex: c.ex, softF1: c.softF1, status: c.status, error: c.error, goldSql: c.goldSql };
    // TS was measured against the official gold: not known for the corrected one.
    if (s.ts !== undefined) next.ts = null;
    if (formula) next.reward = formula.evaluate({ ex: c.ex, format: s.format, softF1: c.softF1, ts: next.ts ?? null });
    return next;
  });
}

/**
 * The run file of an export with the overlay and the version check put in: every scored sample
 * gets `corrected` (its verdict against the corrected gold, the official one where the overlay
 * leaves its gold alone), re-run samples get `versionCheck`, and the header both summaries.
 */
export function withStoredExtras(
  run: RunHeader,
  samples: readonly SampleRecord[],
  overlay: GoldOverlayRecord | null | undefined,
  check: VersionCheckRecord | null | undefined,
): { run: RunHeader; samples: SampleRecord[] } {
  let out: SampleRecord[] = withVersionChecks(samples, check);
  const header: RunHeader = { ...run };
  if (check) header.versionCheck = { ...versionCheckHeader(check.otherVersion, check.items), checked: check.checked };
  if (overlay) {
    const by = overlayByKey(overlay);
    out = out.map((s) => {
      if (s.status === 'missing-db') return s;
      const c = by.get(overlayKey(s.index, s.sample));
      return {
        ...s,
        corrected: c
          ? { ex: c.ex, softF1: c.softF1, status: c.status, goldSql: c.goldSql, changed: true }
          : { ex: s.ex, softF1: s.softF1, status: s.status, goldSql: s.goldSql, changed: false },
      };
    });
    header.goldOverlay = {
      name: overlay.name,
      covered: overlay.covered,
      goldsChanged: overlay.goldsChanged,
      officialEx: overlay.official.ex,
      correctedEx: overlay.corrected.ex,
    };
  }
  return { run: header, samples: out };
}
