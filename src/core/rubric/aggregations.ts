/**
 * The registry of rubric aggregations: each a named, versioned choice with its formula, computed
 * from a response's stored verdicts (and weights, categories), its judge scores, a rule reward
 * given with the item, or the other samples of its question. An id never changes meaning: a new
 * formula is a new version. Everything here is pure; the stored `RubricScores` stay the source.
 *
 * Unresolved criteria (unparseable, error, no judge) follow the explicit options' `unresolved`:
 * `null` (default) gives a null reward unless the resolved verdicts already decide it (a failed
 * Essential under `veto`, a failed criterion under `minimum`), `skip` leaves them out. A
 * `not-applicable` criterion is always left out.
 */
import { aggregateExplicit } from './aggregate.ts';
import type { Category, RubricItem } from './model.ts';
import type { Aggregation } from './score.ts';
import {
  DEFAULT_EXPLICIT_OPTIONS,
  type CriterionVerdict,
  type ExplicitOptions,
  type ExplicitScore,
  type RubricScores,
  type ScaleJudgement,
} from './scores.ts';
import { WorkbenchError } from '../errors.ts';

export const AGGREGATION_IDS = [
  'explicit',
  'explicit-abs',
  'explicit-unclipped',
  'implicit',
  'likert',
  'veto',
  'minimum',
  'all-must-pass',
  'rule-x-judge',
  'group-rank',
] as const;
export type AggregationId = (typeof AGGREGATION_IDS)[number];

/**
 * - `ok`: a reward;
 * - `not-judged`: what it reads was not asked for (no criteria, implicit or Likert judged);
 * - `incomplete`: a criterion it needs has no verdict and the others do not decide it;
 * - `no-positive-weight`: Σw·c/D with D ≤ 0;
 * - `no-criteria`: no criterion it counts applies;
 * - `no-judgement`: the implicit / Likert judgement is unparseable, failed or skipped;
 * - `no-rule`: rule × judge without a rule reward for the item;
 * - `no-score`: group-rank of a sample without an explicit score;
 * - `group-of-one`: group-rank of the only scored sample of its question (nothing to rank against).
 */
export type AggregationStatus =
  | 'ok'
  | 'not-judged'
  | 'incomplete'
  | 'no-positive-weight'
  | 'no-criteria'
  | 'no-judgement'
  | 'no-rule'
  | 'no-score'
  | 'group-of-one';

export interface AggregationValue {
  id: AggregationId;
  version: number;
  /** The reward, or null (never a silent 0; `status` says why). */
  score: number | null;
  status: AggregationStatus;
}

interface AggregationDef {
  id: AggregationId;
  version: number;
  label: string;
  formula: string;
  /** What the judge must be asked for it (score.ts's judgings). */
  needs: readonly Aggregation[];
}

const CRITERIA: readonly Aggregation[] = ['explicit'];

export const AGGREGATION_REGISTRY: readonly AggregationDef[] = [
  {
    id: 'explicit',
    version: 1,
    label: 'explicit',
    formula:
      'Σ w·c / D over criteria c ∈ {0,1}; D and clipping as the run chooses (default D = Σ of positive weights, clipped to [0,1])',
    needs: CRITERIA,
  },
  {
    id: 'explicit-abs',
    version: 1,
    label: 'explicit Σ|w|',
    formula: 'Σ w·c / Σ |w|, clipped to [0,1]',
    needs: CRITERIA,
  },
  {
    id: 'explicit-unclipped',
    version: 1,
    label: 'explicit unclipped',
    formula: 'Σ w·c / Σ of positive weights, not clipped (below 0 when triggered pitfalls outweigh)',
    needs: CRITERIA,
  },
  {
    id: 'implicit',
    version: 1,
    label: 'implicit',
    formula: '(s − 1) / 9 for the judge’s one 1..10 score of the response against the whole rubric',
    needs: ['implicit'],
  },
  {
    id: 'likert',
    version: 1,
    label: 'Likert',
    formula: '(s − 1) / 9 for the judge’s direct 1..10 score, no rubric, no reference',
    needs: ['likert'],
  },
  {
    id: 'veto',
    version: 1,
    label: 'veto',
    formula: '0 if any Essential failed or any Pitfall triggered, else explicit',
    needs: CRITERIA,
  },
  {
    id: 'minimum',
    version: 1,
    label: 'minimum',
    formula: 'min over criteria of its score in [0,1]: c for Essential/Important/Optional, 1 − triggered for a Pitfall',
    needs: CRITERIA,
  },
  {
    id: 'all-must-pass',
    version: 1,
    label: 'all must pass',
    formula: '1 if every Essential and Important passes and no Pitfall triggers, else 0; Optional ignored',
    needs: CRITERIA,
  },
  {
    id: 'rule-x-judge',
    version: 1,
    label: 'rule × judge',
    formula:
      'rule × explicit: the rule reward in [0,1] (EX for a SQL sample, or rule_score given with it) times explicit',
    needs: CRITERIA,
  },
  {
    id: 'group-rank',
    version: 1,
    label: 'group rank',
    formula:
      '(#{j: s_j < s_i} + ½·#{j ≠ i: s_j = s_i}) / (k − 1) over the k samples of the question with an explicit score s',
    needs: CRITERIA,
  },
];

const BY_ID = new Map(AGGREGATION_REGISTRY.map((d) => [d.id, d]));

export function aggregationDef(id: AggregationId): AggregationDef {
  return BY_ID.get(id)!;
}

/** The aggregations the product showed before the registry (and still shows by default). */
export const DEFAULT_AGGREGATION_IDS: readonly AggregationId[] = ['explicit', 'implicit', 'likert'];

/**
 * Aggregation ids from a list (`all` = every one), deduplicated in registry order; an unknown id
 * is a BAD_OPTION error naming `where` and the known ids.
 */
export function parseAggregationIds(list: readonly string[], where: string): AggregationId[] {
  const wanted = new Set<string>();
  for (const raw of list) {
    const id = raw.trim();
    if (id === '') continue;
    if (id === 'all') AGGREGATION_IDS.forEach((a) => wanted.add(a));
    else if ((AGGREGATION_IDS as readonly string[]).includes(id)) wanted.add(id);
    else
      throw new WorkbenchError(
        'BAD_OPTION',
        `unknown aggregation ${JSON.stringify(id)}; use all or any of ${AGGREGATION_IDS.join(', ')}`,
        where,
      );
  }
  if (wanted.size === 0)
    throw new WorkbenchError('BAD_OPTION', `name at least one of all, ${AGGREGATION_IDS.join(', ')}`, where);
  return AGGREGATION_IDS.filter((a) => wanted.has(a));
}

/** The judge calls (score.ts's judgings) the aggregations need, in the order explicit, implicit, Likert. */
export function judgingsFor(ids: readonly AggregationId[]): Aggregation[] {
  const needed = new Set(ids.flatMap((id) => aggregationDef(id).needs));
  return (['explicit', 'implicit', 'likert'] as const).filter((a) => needed.has(a));
}

/** One response to aggregate. */
export interface AggregationSample {
  /** The rubric's criteria as scored (weights and categories). */
  items: readonly Pick<RubricItem, 'id' | 'weight' | 'category'>[];
  scores: Pick<RubricScores, 'criteria' | 'explicit' | 'implicit' | 'likert'>;
  /** The rule reward in [0, 1] (EX for a SQL sample, `rule_score` given with the item), or null. */
  rule?: number | null;
}

/**
 * Whether a criterion's verdict counts against the response: a failed non-pitfall, or a
 * triggered pitfall. A pitfall with a negative weight describes the fault (met = committed =
 * triggered); one with weight ≥ 0 is phrased as avoidance (met = avoided, not met = triggered).
 */
function criterionFails(item: Pick<RubricItem, 'weight' | 'category'>, met: boolean): boolean {
  if (item.category === 'pitfall') return item.weight < 0 ? met : !met;
  return !met;
}

interface Resolved {
  failed: Category[];
  passed: number;
  unresolved: number;
}

/** The applicable criteria of `categories`: how many fail (their categories), pass, or have no verdict. */
function resolve(s: AggregationSample, categories: readonly Category[], options: ExplicitOptions): Resolved {
  const byId = new Map<string, CriterionVerdict>(s.scores.criteria.map((v) => [v.id, v]));
  const out: Resolved = { failed: [], passed: 0, unresolved: 0 };
  for (const item of s.items) {
    if (!categories.includes(item.category)) continue;
    const v = byId.get(item.id);
    if (v?.status === 'not-applicable') continue;
    if (!v || v.met === null) {
      if (options.unresolved === 'null') out.unresolved += 1;
      continue;
    }
    if (criterionFails(item, v.met)) out.failed.push(item.category);
    else out.passed += 1;
  }
  return out;
}

const ALL: readonly Category[] = ['essential', 'important', 'optional', 'pitfall'];
const REQUIRED: readonly Category[] = ['essential', 'important', 'pitfall'];

const value = (id: AggregationId, score: number | null, status: AggregationStatus): AggregationValue => ({
  id,
  version: aggregationDef(id).version,
  score,
  status,
});

function fromExplicit(id: AggregationId, e: ExplicitScore): AggregationValue {
  return value(id, e.score, e.status);
}

function fromScale(id: AggregationId, j: ScaleJudgement | null): AggregationValue {
  if (!j) return value(id, null, 'not-judged');
  return j.status === 'ok' && j.score !== null ? value(id, j.score, 'ok') : value(id, null, 'no-judgement');
}

/** 1 when every counted criterion passes, 0 when a resolved one fails, else null. */
function allPass(id: AggregationId, r: Resolved): AggregationValue {
  if (r.failed.length > 0) return value(id, 0, 'ok');
  if (r.unresolved > 0) return value(id, null, 'incomplete');
  if (r.passed === 0) return value(id, null, 'no-criteria');
  return value(id, 1, 'ok');
}

/** One response's reward under a per-sample aggregation (group-rank alone: `group-of-one`). */
export function aggregateOne(
  id: AggregationId,
  s: AggregationSample,
  options: ExplicitOptions = DEFAULT_EXPLICIT_OPTIONS,
): AggregationValue {
  if (id === 'implicit') return fromScale(id, s.scores.implicit);
  if (id === 'likert') return fromScale(id, s.scores.likert);
  if (s.scores.explicit === null) return value(id, null, 'not-judged');
  const explicit = () => aggregateExplicit(s.items, s.scores.criteria, options);
  switch (id) {
    case 'explicit':
      return fromExplicit(id, explicit());
    case 'explicit-abs':
      return fromExplicit(
        id,
        aggregateExplicit(s.items, s.scores.criteria, { ...options, normalization: 'absolute', clip: true }),
      );
    case 'explicit-unclipped':
      return fromExplicit(
        id,
        aggregateExplicit(s.items, s.scores.criteria, { ...options, normalization: 'positive', clip: false }),
      );
    case 'veto': {
      const r = resolve(s, ['essential', 'pitfall'], options);
      return r.failed.length > 0 ? value(id, 0, 'ok') : fromExplicit(id, explicit());
    }
    case 'minimum':
      return allPass(id, resolve(s, ALL, options));
    case 'all-must-pass':
      return allPass(id, resolve(s, REQUIRED, options));
    case 'rule-x-judge': {
      const rule = s.rule ?? null;
      if (rule === null) return value(id, null, 'no-rule');
      if (!Number.isFinite(rule) || rule < 0 || rule > 1)
        throw new WorkbenchError('BAD_FORMAT', `a rule reward must be a number in [0, 1], got ${rule}`);
      if (rule === 0) return value(id, 0, 'ok');
      const e = explicit();
      return e.score === null ? fromExplicit(id, e) : value(id, rule * e.score, 'ok');
    }
    case 'group-rank':
      return groupRank([s], options)[0]!;
  }
}

/**
 * Group-relative ranking (RULER-style, ranked by the explicit score): over the k samples of a
 * question that have an explicit score, r_i = (#{j: s_j < s_i} + ½·#{j ≠ i: s_j = s_i}) / (k − 1),
 * i.e. the sample's ascending rank with ties averaged, scaled to [0, 1]. A sample without an
 * explicit score gets null (`no-score`) and is not ranked; when k = 1 the one scored sample gets
 * null (`group-of-one`).
 */
function groupRank(group: readonly AggregationSample[], options = DEFAULT_EXPLICIT_OPTIONS): AggregationValue[] {
  const explicit = group.map((s) => aggregateOne('explicit', s, options));
  const scored = explicit.map((e) => e.score).filter((x): x is number => x !== null);
  const k = scored.length;
  return explicit.map((e) => {
    if (e.status === 'not-judged') return value('group-rank', null, 'not-judged');
    if (e.score === null) return value('group-rank', null, 'no-score');
    if (k < 2) return value('group-rank', null, 'group-of-one');
    const below = scored.filter((x) => x < e.score!).length;
    const tied = scored.filter((x) => x === e.score).length - 1;
    return value('group-rank', (below + tied / 2) / (k - 1), 'ok');
  });
}

/**
 * The chosen aggregations of every sample of one group (a question's samples), in `ids` order
 * per sample: group-rank ranks within `group`, the others are per sample.
 */
export function aggregateGroup(
  group: readonly AggregationSample[],
  ids: readonly AggregationId[],
  options: ExplicitOptions = DEFAULT_EXPLICIT_OPTIONS,
): AggregationValue[][] {
  const ranks = ids.includes('group-rank') ? groupRank(group, options) : null;
  return group.map((s, i) => ids.map((id) => (id === 'group-rank' ? ranks![i]! : aggregateOne(id, s, options))));
}

/**
 * Splits `samples` into groups by `key` (a question's index), aggregates each group, and returns
 * the values in the samples' own order.
 */
export function aggregateByGroup<T>(
  samples: readonly T[],
  key: (s: T) => string | number,
  sample: (s: T) => AggregationSample,
  ids: readonly AggregationId[],
  options: ExplicitOptions = DEFAULT_EXPLICIT_OPTIONS,
): AggregationValue[][] {
  const groups = new Map<string | number, number[]>();
  samples.forEach((s, i) => {
    const k = key(s);
    const list = groups.get(k);
    if (list) list.push(i);
    else groups.set(k, [i]);
  });
  const out = new Array<AggregationValue[]>(samples.length);
  for (const idx of groups.values()) {
    const values = aggregateGroup(
      idx.map((i) => sample(samples[i]!)),
      ids,
      options,
    );
    idx.forEach((i, j) => (out[i] = values[j]!));
  }
  return out;
}

export interface AggregationSummary {
  id: AggregationId;
  version: number;
  /** Samples with a reward. */
  n: number;
  /** Samples without one (counted apart, never as 0). */
  missing: number;
  mean: number | null;
}

/** Means per aggregation over samples' stored values (`ids` order; a sample lacking one counts as missing). */
export function summarizeAggregations(
  perSample: readonly (readonly AggregationValue[] | undefined)[],
  ids: readonly AggregationId[],
): AggregationSummary[] {
  return ids.map((id) => {
    const scores = perSample.map((vs) => vs?.find((v) => v.id === id)?.score ?? null);
    const ok = scores.filter((x): x is number => x !== null);
    return {
      id,
      version: aggregationDef(id).version,
      n: ok.length,
      missing: scores.length - ok.length,
      mean: ok.length ? ok.reduce((a, b) => a + b, 0) / ok.length : null,
    };
  });
}

/** A sample's stored value of one aggregation, or null. */
export function aggregationScore(values: readonly AggregationValue[] | undefined, id: AggregationId): number | null {
  return values?.find((v) => v.id === id)?.score ?? null;
}

/** The aggregations whose judgings some of these samples have (explicit criteria, implicit, Likert). */
export function judgedAggregationIds(
  all: readonly Pick<RubricScores, 'explicit' | 'implicit' | 'likert'>[],
): AggregationId[] {
  return AGGREGATION_IDS.filter((id) => aggregationDef(id).needs.every((n) => all.some((s) => s[n] !== null)));
}
