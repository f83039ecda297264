/**
 * The reward view's figures: what a run's verifiable reward rewards, in one look. Every count is
 * the number of samples the explorer lists under the same outcome filter (matchesOutcome), so
 * a count and its link always agree.
 */
import { matchesOutcome, type Outcome } from './item-query.ts';
import type { SampleRecord } from '../run/types.ts';

export interface RewardLine {
  outcome: Outcome;
  label: string;
  /** In `unit`: questions for what is about a gold (one gold is shared by its question's samples), samples otherwise. */
  count: number;
  unit: 'question' | 'sample';
  /** Samples the explorer lists under the outcome (equal to `count` for sample lines). */
  samples: number;
  /** Why the line matters, one sentence for a student. */
  note: string;
}

interface RewardFigures {
  /** Scored samples (database present). */
  scored: number;
  /** EX and TS in percent of scored samples; TS null when no sample has a TS verdict. */
  ex: number | null;
  ts: number | null;
  lines: RewardLine[];
}

export function rewardFigures(samples: readonly SampleRecord[]): RewardFigures {
  const scored = samples.filter((s) => s.status !== 'missing-db');
  const n = scored.length;
  const withTs = scored.filter((s) => s.ts === 0 || s.ts === 1);
  const rowOrderChecked = scored.some((s) => s.goldOrderDependent !== undefined || s.passesByRowOrder !== undefined);
  const lines: RewardLine[] = [];
  /** `labels`: [one, several] ("1 gold problem", "2 gold problems"); gold lines count questions. */
  const add = (outcome: Outcome, labels: readonly [string, string], note: string) => {
    const matching = samples.filter((s) => matchesOutcome(s, outcome));
    const unit = outcome.startsWith('gold-') ? 'question' : 'sample';
    const c = unit === 'question' ? new Set(matching.map((s) => s.index)).size : matching.length;
    lines.push({ outcome, label: labels[c === 1 ? 0 : 1], count: c, unit, samples: matching.length, note });
  };
  if (withTs.length > 0)
    add(
      'ex-only',
      ['EX-only pass', 'EX-only passes'],
      'EX 1 but TS 0: right on this database, wrong on a test-suite database.',
    );
  if (rowOrderChecked) {
    add(
      'order-dependent-gold',
      ['order-dependent gold', 'order-dependent golds'],
      'The gold returns other rows when SQLite reverses unordered selects: the verdict is luck.',
    );
    add(
      'passes-by-row-order',
      ['pass by row order', 'passes by row order'],
      'The prediction passes in one row order only.',
    );
  }
  add(
    'version-sensitive',
    ['version-sensitive item', 'version-sensitive items'],
    'Pred or gold uses SQL whose result differs between SQLite versions.',
  );
  add(
    'gold-issue',
    ['gold problem', 'gold problems'],
    'The gold itself is suspect (no rows, count vs list, date, row order, fails).',
  );
  add('gold-no-rows', ['gold with no rows', 'golds with no rows'], 'Any prediction that returns nothing scores 1.');
  add(
    'gold-count-mismatch',
    ['gold: count vs list', 'golds: count vs list'],
    'The question asks for a count and the gold lists rows, or the reverse.',
  );
  add(
    'gold-date-dependent',
    ["gold that depends on today's date", "golds that depend on today's date"],
    "'now' or CURRENT_*: the right answer changes with the day.",
  );
  add(
    'modified',
    ['wrote to the database', 'wrote to the database'],
    'The prediction changed the database before its gold ran: a reward-hacking signal.',
  );
  return {
    scored: n,
    ex: n === 0 ? null : (scored.reduce((a, s) => a + s.ex, 0) / n) * 100,
    ts: withTs.length === 0 ? null : (withTs.reduce((a, s) => a + (s.ts as number), 0) / withTs.length) * 100,
    lines,
  };
}
