/**
 * Agreement of a judge with human labels (pure), and of two labellers with each other.
 *
 * For n pairs (rater r, reference h) of binary answers:
 * - raw agreement p_o = #{r = h} / n;
 * - Cohen's κ = (p_o − p_e) / (1 − p_e), p_e = p_r1·p_h1 + p_r0·p_h0 (p_r1: share of the
 *   rater's 1s, p_h1: the reference's, ...); null when n = 0 or p_e = 1 (both constant and equal);
 * - the constant-answer baseline: the raw agreement of always answering the reference's majority
 *   label, max(#h=1, #h=0) / n (its κ is 0);
 * - false passes: r = 1 where h = 0; false fails: r = 0 where h = 1.
 */
import type { AggregationValue } from './aggregations.ts';
import type { HumanLabel } from './labels.ts';
import { itemKey } from './labels.ts';
import type { RubricItem } from './model.ts';
import type { CriterionVerdict } from './scores.ts';

export interface Pair {
  rater: boolean;
  reference: boolean;
}

export interface BinaryAgreement {
  n: number;
  agree: number;
  raw: number | null;
  kappa: number | null;
  /** Agreement of always answering `majority`. */
  baseline: number | null;
  /** The reference's majority label (true on a tie), null when n = 0. */
  majority: boolean | null;
  falsePasses: number;
  falseFails: number;
}

export function binaryAgreement(pairs: readonly Pair[]): BinaryAgreement {
  const n = pairs.length;
  let agree = 0;
  let r1 = 0;
  let h1 = 0;
  let falsePasses = 0;
  let falseFails = 0;
  for (const p of pairs) {
    if (p.rater === p.reference) agree += 1;
    else if (p.rater) falsePasses += 1;
    else falseFails += 1;
    if (p.rater) r1 += 1;
    if (p.reference) h1 += 1;
  }
  if (n === 0) return { n, agree, raw: null, kappa: null, baseline: null, majority: null, falsePasses, falseFails };
  const po = agree / n;
  const pe = (r1 / n) * (h1 / n) + ((n - r1) / n) * ((n - h1) / n);
  return {
    n,
    agree,
    raw: po,
    kappa: pe === 1 ? null : (po - pe) / (1 - pe),
    baseline: Math.max(h1, n - h1) / n,
    majority: h1 >= n - h1,
    falsePasses,
    falseFails,
  };
}

/** A judged response of a run, as agreement reads it. */
export interface JudgedResponse {
  /** Dataset file sha256, question row id, completion sha256: how labels name it. */
  dataset: string;
  question: string;
  response: string;
  /** Where it is in the run (for links). */
  index: number;
  sample: number;
  items: readonly RubricItem[];
  criteria: readonly CriterionVerdict[];
  /** The registry's aggregations of the response (ids with a score). */
  aggregations: readonly AggregationValue[];
}

export interface Disagreement {
  kind: 'false-pass' | 'false-fail';
  labeller: string;
  index: number;
  sample: number;
  question: string;
  /** The criterion, or null for a whole response. */
  criterion: string | null;
}

interface CriterionRow {
  question: string;
  criterion: string;
  title: string;
  agreement: BinaryAgreement;
}

interface AggregationRow {
  id: string;
  agreement: BinaryAgreement;
  errors: Disagreement[];
}

interface LabellerPairRow {
  a: string;
  b: string;
  /** Over every item both labelled (criteria and whole responses); b is the rater, a the reference. */
  overall: BinaryAgreement;
  /** Per criterion ("" = whole response). */
  perCriterion: CriterionRow[];
}

export interface AgreementReport {
  /** Judge verdicts vs criterion labels: one pair per (labeller, labelled criterion with a verdict). */
  judge: { overall: BinaryAgreement; perCriterion: CriterionRow[]; errors: Disagreement[] };
  /** Each aggregation thresholded (score ≥ threshold passes) vs whole-response labels. */
  aggregations: AggregationRow[];
  threshold: number;
  /** Every two labellers, names in sorted order. */
  labellers: LabellerPairRow[];
  /** Labels that name no response of the run (another run's, another dataset's). */
  unmatched: number;
  /** Criterion labels whose verdict is missing (unparseable, error, no judge): left out. */
  withoutVerdict: number;
}

const byQuestionCriterion = (a: CriterionRow, b: CriterionRow) =>
  a.question.localeCompare(b.question) || a.criterion.localeCompare(b.criterion);

/**
 * The agreement report of a run's judged responses with human labels. Every label of a
 * response of the run counts once per labeller: two labellers of one item give two pairs.
 */
export function agreementReport(
  responses: readonly JudgedResponse[],
  labels: readonly HumanLabel[],
  threshold: number,
): AgreementReport {
  const byResponse = new Map(responses.map((r) => [itemKey({ ...r, criterion: null }), r]));
  const judgePairs = new Map<string, { question: string; criterion: string; title: string; pairs: Pair[] }>();
  const all: Pair[] = [];
  const errors: Disagreement[] = [];
  const aggPairs = new Map<string, { pairs: Pair[]; errors: Disagreement[] }>();
  let unmatched = 0;
  let withoutVerdict = 0;
  const mine: HumanLabel[] = [];
  for (const l of labels) {
    const r = byResponse.get(itemKey({ ...l, criterion: null }));
    if (!r) {
      unmatched += 1;
      continue;
    }
    const where = { labeller: l.labeller, index: r.index, sample: r.sample, question: r.question };
    if (l.criterion === null) {
      mine.push(l);
      for (const v of r.aggregations) {
        if (v.score === null) continue;
        const pair = { rater: v.score >= threshold, reference: l.value };
        const entry = aggPairs.get(v.id) ?? { pairs: [], errors: [] };
        entry.pairs.push(pair);
        if (pair.rater !== pair.reference)
          entry.errors.push({ kind: pair.rater ? 'false-pass' : 'false-fail', ...where, criterion: null });
        aggPairs.set(v.id, entry);
      }
      continue;
    }
    const item = r.items.find((it) => it.id === l.criterion);
    const verdict = r.criteria.find((c) => c.id === l.criterion);
    if (!item || !verdict) {
      unmatched += 1;
      continue;
    }
    mine.push(l);
    if (verdict.met === null) {
      withoutVerdict += 1;
      continue;
    }
    const pair = { rater: verdict.met, reference: l.value };
    all.push(pair);
    const k = JSON.stringify([r.question, item.id]);
    const entry = judgePairs.get(k) ?? { question: r.question, criterion: item.id, title: item.title, pairs: [] };
    entry.pairs.push(pair);
    judgePairs.set(k, entry);
    if (pair.rater !== pair.reference)
      errors.push({ kind: pair.rater ? 'false-pass' : 'false-fail', ...where, criterion: item.id });
  }
  return {
    judge: {
      overall: binaryAgreement(all),
      perCriterion: [...judgePairs.values()]
        .map((e) => ({
          question: e.question,
          criterion: e.criterion,
          title: e.title,
          agreement: binaryAgreement(e.pairs),
        }))
        .sort(byQuestionCriterion),
      errors,
    },
    aggregations: [...aggPairs.entries()].map(([id, e]) => ({
      id,
      agreement: binaryAgreement(e.pairs),
      errors: e.errors,
    })),
    threshold,
    labellers: labellerPairs(mine, responses),
    unmatched,
    withoutVerdict,
  };
}

function labellerPairs(labels: readonly HumanLabel[], responses: readonly JudgedResponse[]): LabellerPairRow[] {
  const names = [...new Set(labels.map((l) => l.labeller))].sort();
  const titles = new Map<string, string>();
  for (const r of responses) for (const it of r.items) titles.set(JSON.stringify([r.question, it.id]), it.title);
  const byName = new Map(names.map((n) => [n, new Map<string, HumanLabel>()]));
  for (const l of labels) byName.get(l.labeller)!.set(itemKey(l), l);
  const out: LabellerPairRow[] = [];
  for (const [i, a] of names.entries()) {
    for (const b of names.slice(i + 1)) {
      const la = byName.get(a)!;
      const lb = byName.get(b)!;
      const all: Pair[] = [];
      const per = new Map<string, { question: string; criterion: string; pairs: Pair[] }>();
      for (const [k, x] of la) {
        const y = lb.get(k);
        if (!y) continue;
        const pair = { rater: y.value, reference: x.value };
        all.push(pair);
        const ck = JSON.stringify([x.question, x.criterion ?? '']);
        const e = per.get(ck) ?? { question: x.question, criterion: x.criterion ?? '', pairs: [] };
        e.pairs.push(pair);
        per.set(ck, e);
      }
      out.push({
        a,
        b,
        overall: binaryAgreement(all),
        perCriterion: [...per.values()]
          .map((e) => ({
            question: e.question,
            criterion: e.criterion,
            title: e.criterion
              ? (titles.get(JSON.stringify([e.question, e.criterion])) ?? e.criterion)
              : 'whole response',
            agreement: binaryAgreement(e.pairs),
          }))
          .sort(byQuestionCriterion),
      });
    }
  }
  return out;
}
