/**
 * Version effects measured: every item the static scan flags version-sensitive
 * (src/core/sql/version-features.ts) is executed again on a second engine of an older SQLite
 * generation (sql.js 1.8.0, SQLite 3.39.3: the generation of Debian 12's Python 3.40.1), and
 * keeps that engine's verdict beside its own (`ItemResult.versionCheck`). What is counted and
 * shown is the items whose EX or Soft-F1 differs; the flag stays as the reason why an item was
 * re-run. An item that timed out is re-timed there too, before it is called a timeout: when its
 * verdict there differs, it is a planner difference (`VersionCheck.planner`: SQLite 3.54 runs
 * some FROM-clause subqueries and CTEs as a co-routine re-run for every row of the enclosing
 * join, where 3.39/3.40 materialise them once), counted apart from the result differences.
 * Nothing else changes: the run's scores are the main engine's. The re-run goes through
 * the run recipe (score-run.ts) with the run's configuration (its EX rule too), EX and Soft-F1
 * only, without findings (the items keep their own).
 */
import { formatFixed2 } from '../eval/report.ts';
import { summarize } from '../eval/summary.ts';
import { WorkbenchError } from '../errors.ts';
import type { EvalItem, ItemResult, VersionCheck } from '../types.ts';
import { scoreRun, type ScoreRunPorts } from './score-run.ts';
import type { RunConfig } from './types.ts';

export interface VersionEffects {
  /** `sqlite_version()` of the main engine (the run's verdicts) and of the older one. */
  mainVersion: string | null;
  otherVersion: string;
  /**
   * Items re-run (flagged or timed out, database present), and those whose verdict differs, in
   * item order (planner differences included).
   */
  checked: number;
  differing: ItemResult[];
  /** Of `checked`, the timeouts that were not flagged (re-run to be re-timed only). */
  retimed: number;
  /** The results of the run with `versionCheck` set on every re-run item, in the order given. */
  results: ItemResult[];
  /** Total EX and Soft-F1 (percent) with the older engine's verdicts in place of the re-run items'. */
  otherTotal: { ex: number | null; softF1: number | null };
  cancelled: boolean;
}

const flagged = (r: Pick<ItemResult, 'versionFeatures'>) => (r.versionFeatures?.length ?? 0) > 0;

/**
 * Positions of the items worth re-running: flagged by the scan, or timed out (re-timed on the
 * older SQLite, whose planner may finish them), database present.
 */
export function versionSensitive(results: readonly Pick<ItemResult, 'status' | 'versionFeatures'>[]): number[] {
  const at: number[] = [];
  results.forEach((r, i) => {
    if (r.status !== 'missing-db' && (flagged(r) || r.status === 'timeout')) at.push(i);
  });
  return at;
}

/** The re-run items' counts: how many differ in result, how many are planner differences. */
function versionCounts(checks: readonly (VersionCheck | undefined)[]): { results: number; planner: number } {
  let results = 0;
  let planner = 0;
  for (const c of checks) {
    if (c?.planner) planner++;
    else if (c?.differs) results++;
  }
  return { results, planner };
}

/** A Soft-F1 difference that is a verdict, not the last bit of a division. */
function sameF1(a: number | null, b: number | null): boolean {
  if (a === null || b === null) return a === b;
  return Math.abs(a - b) < 1e-12;
}

/**
 * `results` are the run's results in the order of `items`. `ports.executor` is the older
 * engine; `versions.other` its `sqlite_version()`. Only EX and Soft-F1 are compared (R-VES and
 * TS are not re-measured).
 */
export async function measureVersionEffects(
  items: readonly EvalItem[],
  results: readonly ItemResult[],
  config: RunConfig,
  ports: ScoreRunPorts,
  versions: { main: string | null; other: string },
): Promise<VersionEffects> {
  if (items.length !== results.length)
    throw new WorkbenchError(
      'INTERNAL',
      `version check needs one result per item (${results.length} results, ${items.length} items)`,
    );
  const at = versionSensitive(results);
  const withF1 = config.metrics.includes('soft-f1');
  const metrics: RunConfig['metrics'] = withF1 ? ['ex', 'soft-f1'] : ['ex'];
  // The check's records are not kept: the formula is plain EX (the run's may need R-VES or TS).
  const outcome = await scoreRun(
    at.map((i) => items[i]!),
    { ...config, metrics, rewardFormula: 'ex' },
    { ...ports, findings: false, previewRows: 0 },
  );
  const out = [...results];
  const differing: ItemResult[] = [];
  outcome.results.forEach((b, k) => {
    const a = results[at[k]!]!;
    const differs = a.ex !== b.ex || !sameF1(withF1 ? a.softF1 : null, withF1 ? b.softF1 : null);
    const check: VersionCheck = {
      sqliteVersion: versions.other,
      ex: b.ex,
      softF1: withF1 ? b.softF1 : null,
      status: b.status,
      error: b.error,
      differs,
      ...(differs && a.status === 'timeout' ? { planner: true } : {}),
    };
    const r = { ...a, versionCheck: check };
    out[at[k]!] = r;
    if (check.differs) differing.push(r);
  });
  const swapped = out.map((r) => (r.versionCheck ? { ...r, ex: r.versionCheck.ex, softF1: r.versionCheck.softF1 } : r));
  const total = summarize(swapped, config.metrics).byDifficulty.total;
  return {
    mainVersion: versions.main,
    otherVersion: versions.other,
    checked: outcome.results.length,
    differing,
    retimed: at.filter((i) => !flagged(results[i]!)).length,
    results: out,
    otherTotal: { ex: total.ex, softF1: total.softF1 },
    cancelled: outcome.cancelled,
  };
}

/**
 * The version effects of results that carry their checks (`versionCheck`): a part of a run (one
 * predictions file of several), or shards joined by `merge`. Null when no result was re-run.
 */
export function versionEffectsOf(
  results: readonly ItemResult[],
  metrics: RunConfig['metrics'],
  mainVersion: string | null,
): VersionEffects | null {
  const checked = results.filter((r) => r.versionCheck);
  if (checked.length === 0) return null;
  const swapped = results.map((r) =>
    r.versionCheck ? { ...r, ex: r.versionCheck.ex, softF1: r.versionCheck.softF1 } : r,
  );
  const total = summarize(swapped, metrics).byDifficulty.total;
  return {
    mainVersion,
    otherVersion: checked[0]!.versionCheck!.sqliteVersion,
    checked: checked.length,
    differing: checked.filter((r) => r.versionCheck!.differs),
    retimed: checked.filter((r) => r.status === 'timeout' && !flagged(r)).length,
    results: [...results],
    otherTotal: { ex: total.ex, softF1: total.softF1 },
    cancelled: false,
  };
}

/** The run header's `versionCheck`: the re-run samples counted. */
export function versionCheckHeader(
  sqliteVersion: string,
  checks: readonly VersionCheck[],
): { sqliteVersion: string; checked: number; differing: number; planner: number } {
  const counts = versionCounts(checks);
  return { sqliteVersion, checked: checks.length, differing: counts.results, planner: counts.planner };
}

/** `version_effects` of an `eval --out` summary. */
export function versionEffectsJson(e: VersionEffects) {
  const counts = versionCounts(e.differing.map((r) => r.versionCheck));
  return {
    sqlite_version: e.otherVersion,
    checked: e.checked,
    // Result differences; the planner differences (a timeout here that finishes there) apart.
    differing: counts.results,
    planner_differences: counts.planner,
    timeouts_retimed: e.retimed,
    total_on_older: { ex: e.otherTotal.ex, soft_f1: e.otherTotal.softF1 },
    items: e.differing.map((r) => ({
      index: r.index,
      sample: r.sample ?? 0,
      question_id: r.questionId,
      db_id: r.dbId,
      verdicts: versionVerdictText(r, e.mainVersion),
      planner: r.versionCheck?.planner === true,
    })),
  };
}

/** "EX 1 on 3.54.1, EX 0 on 3.39.3" (with Soft-F1 when it is the part that differs). */
export function versionVerdictText(r: ItemResult, mainVersion: string | null): string | null {
  const c = r.versionCheck;
  if (!c) return null;
  const main = mainVersion ?? 'this engine';
  const f1 = (x: number | null) => (x === null ? '' : ` · Soft-F1 ${x.toFixed(2)}`);
  const showF1 = r.ex === c.ex && !sameF1(r.softF1, c.softF1);
  const side = (ex: number, softF1: number | null, status: string, v: string) =>
    `EX ${ex}${showF1 ? f1(softF1) : ''}${status === 'error' ? ' (error)' : status === 'timeout' ? ' (timeout)' : ''} on ${v}`;
  return `${side(r.ex, r.softF1, r.status, main)}, ${side(c.ex, c.softF1, c.status, c.sqliteVersion)}`;
}

/**
 * The run-level line: how many flagged items (and timeouts) were re-run, how many verdicts
 * differ in result, and how many are planner differences.
 */
export function versionEffectsLine(
  e: Pick<VersionEffects, 'checked' | 'differing' | 'otherVersion' | 'mainVersion' | 'retimed'> & {
    otherTotal?: VersionEffects['otherTotal'];
  },
): string {
  const total = e.otherTotal?.ex != null ? ` (total EX on ${e.otherVersion}: ${formatFixed2(e.otherTotal.ex)})` : '';
  const counts = versionCounts(e.differing.map((r) => r.versionCheck));
  const main = e.mainVersion ?? '(the main engine)';
  const retimed = e.retimed > 0 ? ` and ${e.retimed} timeout(s)` : '';
  const planner =
    counts.planner > 0 || e.retimed > 0
      ? `; ${counts.planner} planner difference(s) (timed out on SQLite ${main}, another verdict on ${e.otherVersion})`
      : '';
  return (
    `version effects measured: ${e.checked - e.retimed} item(s) flagged version-sensitive${retimed} re-run on SQLite ${e.otherVersion}; ` +
    `${counts.results} verdict(s) differ (EX or Soft-F1) from SQLite ${main}${planner}${total}`
  );
}

/** The measurement as stored with a run in the app (`versionChecks`, IndexedDB schema version 5). */
export interface VersionCheckRecord {
  runId: string;
  mainVersion: string | null;
  otherVersion: string;
  measuredAt: string;
  checked: number;
  /** Every re-run sample (flagged, database present), with that engine's verdict. */
  items: (VersionCheck & { index: number; sample: number; questionId: number })[];
}

export function versionCheckRecordOf(runId: string, e: VersionEffects, now: string): VersionCheckRecord {
  const items = e.results.flatMap((r) =>
    r.versionCheck ? [{ ...r.versionCheck, index: r.index, sample: r.sample ?? 0, questionId: r.questionId }] : [],
  );
  return {
    runId,
    mainVersion: e.mainVersion,
    otherVersion: e.otherVersion,
    measuredAt: now,
    checked: e.checked,
    items,
  };
}

/** Samples with their stored version check put back (`versionCheck`), for the item view and exports. */
export function withVersionChecks<T extends { index: number; sample: number }>(
  samples: readonly T[],
  record: VersionCheckRecord | null | undefined,
): (T & { versionCheck?: VersionCheck })[] {
  if (!record || record.items.length === 0) return [...samples];
  const by = new Map(record.items.map(({ index, sample, questionId: _q, ...check }) => [`${index}.${sample}`, check]));
  return samples.map((s) => {
    const c = by.get(`${s.index}.${s.sample}`);
    return c ? { ...s, versionCheck: c } : s;
  });
}
