/**
 * Per-criterion pass rates over a run: for each criterion, the share of the samples judged on it
 * that pass it. A criterion that every such sample passes, or every one fails, tells the samples
 * apart in nothing: it is flagged "not discriminating" (it adds the same to every reward).
 *
 * *Pass* means the criterion earns its credit: met, except for a pitfall phrased as the fault
 * (negative weight, as in the released RaR data), which passes when it is not met (not
 * triggered). A pitfall phrased as avoidance (weight ≥ 0) passes when met. Verdicts that are not
 * `ok` (unparseable, error, skipped) are counted apart as `unresolved`, `not-applicable` ones
 * as `notApplicable`; neither counts in the rate.
 */
import { csvCell } from '../util/csv-cell.ts';
import type { Category, RubricItem } from './model.ts';
import type { CriterionVerdict, RubricScores } from './scores.ts';

/** One scored sample: its group (the rubric it was judged with: a question for RaR data, the run for one rubric), the rubric's items and its verdicts. */
export interface PassRateSample {
  group: string;
  items: readonly Pick<RubricItem, 'id' | 'title' | 'category' | 'weight'>[];
  criteria: readonly Pick<CriterionVerdict, 'id' | 'met' | 'status'>[];
}

export interface CriterionPassRate {
  group: string;
  criterion: string;
  title: string;
  category: Category;
  passed: number;
  failed: number;
  unresolved: number;
  notApplicable: number;
  /** passed + failed: the samples with a verdict. */
  n: number;
  /** passed / n, null when n = 0. */
  rate: number | null;
  /** `all-pass` / `all-fail` when n ≥ 2 and every sample passes / fails; null otherwise. */
  notDiscriminating: 'all-pass' | 'all-fail' | null;
}

/** A scored sample of `group` judged with `items`, each with the weight its scoring used (`scores.weights`). */
export function passRateSample(
  group: string,
  items: readonly Pick<RubricItem, 'id' | 'title' | 'category' | 'weight'>[],
  scores: Pick<RubricScores, 'criteria' | 'weights'>,
): PassRateSample {
  return {
    group,
    items: items.map((i) => ({ ...i, weight: scores.weights[i.id] ?? i.weight })),
    criteria: scores.criteria,
  };
}

/** Whether a resolved verdict earns the criterion's credit (see the module comment). */
function passes(item: Pick<RubricItem, 'category' | 'weight'>, met: boolean): boolean {
  return item.category === 'pitfall' && item.weight < 0 ? !met : met;
}

/**
 * Each criterion's pass rate over the samples of its group, in order of first appearance
 * (groups) and rubric order (criteria). A group needs two samples with a verdict before a
 * criterion can be flagged: one sample passes or fails everything.
 */
export function criterionPassRates(samples: readonly PassRateSample[]): CriterionPassRate[] {
  const out = new Map<string, CriterionPassRate>();
  for (const s of samples) {
    const verdicts = new Map(s.criteria.map((v) => [v.id, v]));
    for (const item of s.items) {
      const key = JSON.stringify([s.group, item.id]);
      let r = out.get(key);
      if (!r) {
        r = {
          group: s.group,
          criterion: item.id,
          title: item.title,
          category: item.category,
          passed: 0,
          failed: 0,
          unresolved: 0,
          notApplicable: 0,
          n: 0,
          rate: null,
          notDiscriminating: null,
        };
        out.set(key, r);
      }
      const v = verdicts.get(item.id);
      if (v?.status === 'not-applicable') r.notApplicable += 1;
      else if (!v || v.status !== 'ok' || v.met === null) r.unresolved += 1;
      else if (passes(item, v.met)) r.passed += 1;
      else r.failed += 1;
    }
  }
  return [...out.values()].map((r) => {
    const n = r.passed + r.failed;
    return {
      ...r,
      n,
      rate: n > 0 ? r.passed / n : null,
      notDiscriminating: n < 2 ? null : r.passed === n ? 'all-pass' : r.failed === n ? 'all-fail' : null,
    };
  });
}

const PASS_RATE_COLUMNS = [
  'group',
  'criterion',
  'title',
  'category',
  'passed',
  'failed',
  'unresolved',
  'not_applicable',
  'n',
  'pass_rate',
  'not_discriminating',
] as const;

/** The pass rates as CSV (header, one row per criterion; an empty cell for no rate or no flag). */
export function passRatesCsv(rates: readonly CriterionPassRate[]): string {
  const rows = rates.map((r) =>
    [
      r.group,
      r.criterion,
      r.title,
      r.category,
      r.passed,
      r.failed,
      r.unresolved,
      r.notApplicable,
      r.n,
      r.rate,
      r.notDiscriminating,
    ]
      .map(csvCell)
      .join(','),
  );
  return [PASS_RATE_COLUMNS.join(','), ...rows].join('\n') + '\n';
}

/** One criterion's pass rate as exported (snake_case keys, as the CSV's columns). */
export function passRateRecord(r: CriterionPassRate): Record<string, string | number | null> {
  return {
    group: r.group,
    criterion: r.criterion,
    title: r.title,
    category: r.category,
    passed: r.passed,
    failed: r.failed,
    unresolved: r.unresolved,
    not_applicable: r.notApplicable,
    n: r.n,
    pass_rate: r.rate,
    not_discriminating: r.notDiscriminating,
  };
}

/** The pass rates as JSON Lines, one `passRateRecord` per criterion. */
export function passRatesJsonl(rates: readonly CriterionPassRate[]): string {
  return rates.map((r) => JSON.stringify(passRateRecord(r)) + '\n').join('');
}
