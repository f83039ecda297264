import type { MetricName } from './executor.ts';
import { NEAR_STEP_PERCENT, type BucketScores, type Summary } from './summary.ts';
import { tableLevels } from '../types.ts';

/**
 * Python's `'{:.2f}'.format(x)`: the exact binary value rounded half to even. JavaScript's
 * toFixed rounds exact ties up; ties only exist for multiples of 1/8 (x.125, x.375, ...).
 */
export function formatFixed2(x: number): string {
  const scaled = x * 100;
  if (Number.isInteger(x * 8) && Math.abs(scaled % 1) === 0.5) {
    const floor = Math.floor(scaled);
    const even = floor % 2 === 0 ? floor : floor + 1;
    return (even / 100).toFixed(2);
  }
  return x.toFixed(2);
}

const LABEL: Record<MetricName, string> = { ex: 'EX', 'soft-f1': 'Soft-F1', 'r-ves': 'R-VES', ts: 'TS' };
const FIELD: Record<MetricName, keyof BucketScores> = { ex: 'ex', 'soft-f1': 'softF1', 'r-ves': 'rves', ts: 'ts' };

const pad = (s: string, w = 20) => (s.length >= w ? s : s + ' '.repeat(w - s.length));

/** The official `print_data` layout: one block per metric, 20-character columns. */
export function officialTable(summary: Summary): string {
  const lines: string[] = [];
  // BIRD's three levels, or Spider's four when the run has them (docs/spider-rules.md).
  const levels = [...tableLevels(summary.byDifficulty), 'total'] as const;
  const cols = levels.map((l) => summary.byDifficulty[l]);
  lines.push([pad(''), ...levels.map((l) => pad(l))].join(' ').trimEnd());
  lines.push([pad('count'), ...cols.map((c) => pad(String(c?.count ?? 0)))].join(' ').trimEnd());
  for (const m of summary.metrics) {
    const label = LABEL[m];
    lines.push(`======================================    ${label}    =====================================`);
    const vals = cols.map((c) => {
      const v = c?.[FIELD[m]];
      return typeof v === 'number' ? formatFixed2(v) : '-';
    });
    lines.push([pad(label), ...vals.map((v) => pad(v))].join(' ').trimEnd());
  }
  lines.push('===========================================================================================');
  return lines.join('\n');
}

/**
 * What the scores mean when questions have several samples (null with one per question): the
 * same sentence under the CLI's table and on the dashboard.
 */
export function samplesNote(summary: Summary): string | null {
  const n = summary.samplesPerQuestion;
  if (n.max <= 1) return null;
  const nText = n.min === n.max ? `n = ${n.max}` : `n = ${n.min} to ${n.max}`;
  const samples = Object.values(summary.statusCounts).reduce((a, c) => a + c, 0);
  return (
    `${nText} samples per question (${samples} samples): each score is the mean over a question's samples ` +
    `(mean EX = expected single-sample EX), averaged over the ${n.questions} questions; count = questions.`
  );
}

/** Per database, then the notes a reader needs: missing databases, failures, writes. */
export function detailReport(summary: Summary): string {
  const lines: string[] = [];
  const dbs = Object.entries(summary.byDb);
  if (dbs.length > 0) {
    const w = Math.max(8, ...dbs.map(([id]) => id.length)) + 2;
    const metricCols = summary.metrics.map((m) => LABEL[m]);
    lines.push(
      [pad('database', w), pad('count', 7), ...metricCols.map((c) => pad(c, 9)), 'errors  timeouts  writes'].join(''),
    );
    for (const [id, b] of dbs) {
      const vals = summary.metrics.map((m) => {
        const v = b[FIELD[m]];
        return pad(typeof v === 'number' ? formatFixed2(v) : '-', 9);
      });
      lines.push(
        [
          pad(id, w),
          pad(String(b.count), 7),
          ...vals,
          pad(String(b.errors), 8),
          pad(String(b.timeouts), 10),
          String(b.mutated),
        ].join(''),
      );
    }
  }
  const missing = Object.entries(summary.missingDbs);
  if (missing.length > 0) {
    const n = missing.reduce((a, [, c]) => a + c, 0);
    lines.push(
      `warning: ${n} item(s) left out of the scores because their database is missing: ` +
        missing.map(([id, c]) => `${id} (${c})`).join(', '),
    );
  }
  const t = summary.byDifficulty.total;
  if (t.mutated > 0) {
    lines.push(
      `warning: ${t.mutated} prediction(s) wrote to the database before their gold query ran (mutated_db); ` +
        'the official evaluator scores them the same way: check them for reward hacking, or run with --read-only',
    );
  }
  if (summary.metrics.includes('ts')) {
    lines.push(
      `test suite: ${t.exOnly ?? 0} EX-only pass(es) (EX 1, TS 0: a suite database tells pred and gold apart), ` +
        `${t.goldOrderDependent ?? 0} order-dependent gold(s) (rows change with PRAGMA reverse_unordered_selects), ` +
        `${t.passesByRowOrder ?? 0} pass(es) by row order (EX 1 only in SQLite's usual row order)`,
    );
  }
  if (summary.metrics.includes('r-ves') && (t.rvesNotTimed ?? 0) > 0) {
    lines.push(
      `warning: ${t.rvesNotTimed} correct item(s) could not be timed; R-VES leaves them out (docs/r-ves-timing.md; each item's r_ves_not_timed says why)`,
    );
  }
  if (summary.metrics.includes('r-ves') && t.rvesSd !== undefined) lines.push(rvesSpreadLine(summary));
  if (summary.metrics.includes('r-ves')) {
    lines.push(
      'note: R-VES depends on the machine and the SQL engine (here sql.js, WebAssembly): it is not reproducible across machines',
    );
  }
  return lines.join('\n');
}

/**
 * How far a rerun moves R-VES, in the words the dashboard uses: the total's two standard
 * deviations and the widest database's, from the items timed near a reward step.
 */
function rvesSpreadLine(summary: Summary): string {
  const t = summary.byDifficulty.total;
  const widest = Object.entries(summary.byDb).reduce<[string, number] | null>(
    (w, [db, b]) => ((b.rvesSd ?? 0) > (w?.[1] ?? 0) ? [db, b.rvesSd ?? 0] : w),
    null,
  );
  const unit = summary.samplesPerQuestion.max > 1 ? 'sample' : 'item';
  return (
    `note: R-VES moves between runs of the same predictions: ${t.rvesNearStep ?? 0} of ${t.rvesTimed ?? 0} timed correct ${unit}(s) ` +
    `sit within ${NEAR_STEP_PERCENT} % of a reward step and land on either side by chance; a rerun's total is expected within ` +
    `±${(2 * (t.rvesSd ?? 0)).toFixed(2)} (2 sd)` +
    (widest ? `, ${widest[0]}'s within ±${(2 * widest[1]).toFixed(2)}` : '') +
    " (each bucket's r_ves_sd in --out; docs/r-ves-timing.md)"
  );
}
