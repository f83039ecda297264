/**
 * Reading a stored RubricScores record (run files, IndexedDB) at the boundary, with the field
 * path in every message. Use as `r.optional(o, 'rubric', path, readRubricScores)`.
 */
import type { JsonReader, Obj } from '../formats/validate.ts';
import { AGGREGATION_IDS, type AggregationStatus, type AggregationValue } from './aggregations.ts';
import {
  RUBRIC_SCORES_VERSION,
  type CriterionVerdict,
  type ExplicitScore,
  type JudgeInfo,
  type RubricScores,
  type ScaleJudgement,
} from './scores.ts';

const VERDICT_STATUS = ['ok', 'unparseable', 'error', 'skipped', 'not-applicable'] as const;
const JUDGEMENT_STATUS = ['ok', 'unparseable', 'error', 'skipped'] as const;

function nullableBool(r: JsonReader, o: Obj, key: string, path: string): boolean | null {
  return r.nullable(o, key, path, r.bool);
}

function readVerdict(r: JsonReader, v: unknown, path: string): CriterionVerdict {
  const o = r.obj(v, path);
  return {
    id: r.str(o, 'id', path),
    met: nullableBool(r, o, 'met', path),
    explanation: r.str(o, 'explanation', path),
    raw: r.nullable(o, 'raw', path, r.str),
    status: r.oneOf(o, 'status', path, VERDICT_STATUS),
    source: r.oneOf(o, 'source', path, ['judge', 'sql', 'regex'] as const),
    attempts: r.int(o, 'attempts', path),
    cached: r.bool(o, 'cached', path),
  };
}

function readScale(r: JsonReader, v: unknown, path: string): ScaleJudgement {
  const o = r.obj(v, path);
  const s: ScaleJudgement = {
    status: r.oneOf(o, 'status', path, JUDGEMENT_STATUS),
    rawScore: r.nullable(o, 'rawScore', path, r.int),
    score: r.nullable(o, 'score', path, r.num),
    explanation: r.str(o, 'explanation', path),
    raw: r.nullable(o, 'raw', path, r.str),
    attempts: r.int(o, 'attempts', path),
    cached: r.bool(o, 'cached', path),
  };
  const error = r.optional(o, 'error', path, r.str);
  if (error !== undefined) s.error = error;
  return s;
}

function readExplicit(r: JsonReader, v: unknown, path: string): ExplicitScore {
  const o = r.obj(v, path);
  const opts = r.obj(o.options, `${path}.options`);
  const ids = (key: string) =>
    r
      .arr(o[key], `${path}.${key}`)
      .map((x, i) => (typeof x === 'string' ? x : r.fail(`${path}.${key}[${i}]`, 'a string', x)));
  return {
    score: r.nullable(o, 'score', path, r.num),
    unclipped: r.nullable(o, 'unclipped', path, r.num),
    numerator: r.num(o, 'numerator', path),
    denominator: r.num(o, 'denominator', path),
    status: r.oneOf(o, 'status', path, ['ok', 'incomplete', 'no-positive-weight'] as const),
    unresolved: ids('unresolved'),
    notApplicable: ids('notApplicable'),
    options: {
      normalization: r.oneOf(opts, 'normalization', `${path}.options`, ['positive', 'absolute'] as const),
      clip: r.bool(opts, 'clip', `${path}.options`),
      unresolved: r.oneOf(opts, 'unresolved', `${path}.options`, ['null', 'skip'] as const),
    },
  };
}

function readJudge(r: JsonReader, v: unknown, path: string): JudgeInfo {
  const o = r.obj(v, path);
  const p = r.obj(o.prompts, `${path}.prompts`);
  return {
    engine: r.str(o, 'engine', path),
    model: r.str(o, 'model', path),
    prompts: {
      criterion: r.str(p, 'criterion', `${path}.prompts`),
      implicit: r.str(p, 'implicit', `${path}.prompts`),
      likert: r.str(p, 'likert', `${path}.prompts`),
    },
  };
}

const AGGREGATION_STATUS: readonly AggregationStatus[] = [
  'ok',
  'not-judged',
  'incomplete',
  'no-positive-weight',
  'no-criteria',
  'no-judgement',
  'no-rule',
  'no-score',
  'group-of-one',
];

function readAggregation(r: JsonReader, v: unknown, path: string): AggregationValue {
  const o = r.obj(v, path);
  return {
    id: r.oneOf(o, 'id', path, AGGREGATION_IDS),
    version: r.int(o, 'version', path),
    score: r.nullable(o, 'score', path, r.num),
    status: r.oneOf(o, 'status', path, AGGREGATION_STATUS),
  };
}

export function readRubricScores(this: JsonReader, parent: Obj, key: string, parentPath: string): RubricScores {
  // eslint-disable-next-line @typescript-eslint/no-this-alias -- a JsonReader method written as a function: `r` reads as in the other readers
  const r = this;
  const path = `${parentPath}.${key}`;
  const o = r.obj(parent[key], path);
  r.oneOf(o, 'version', path, [RUBRIC_SCORES_VERSION] as const);
  const w = r.obj(o.weights, `${path}.weights`);
  const weights: Record<string, number> = {};
  for (const id of Object.keys(w)) weights[id] = r.num(w, id, `${path}.weights`);
  const inj = r.obj(o.promptInjection, `${path}.promptInjection`);
  const opt = <T>(k: string, read: (r: JsonReader, v: unknown, p: string) => T): T | null =>
    o[k] === null || o[k] === undefined ? null : read(r, o[k], `${path}.${k}`);
  const out: RubricScores = {
    version: RUBRIC_SCORES_VERSION,
    rubricId: r.str(o, 'rubricId', path),
    weights,
    judge: opt('judge', readJudge),
    criteria: r.arr(o.criteria, `${path}.criteria`).map((v, i) => readVerdict(r, v, `${path}.criteria[${i}]`)),
    explicit: opt('explicit', readExplicit),
    implicit: opt('implicit', readScale),
    likert: opt('likert', readScale),
    promptInjection: {
      flagged: r.bool(inj, 'flagged', `${path}.promptInjection`),
      matches: r.arr(inj.matches, `${path}.promptInjection.matches`).map((m, i) => {
        const mo = r.obj(m, `${path}.promptInjection.matches[${i}]`);
        return {
          pattern: r.str(mo, 'pattern', `${path}.promptInjection.matches[${i}]`),
          text: r.str(mo, 'text', `${path}.promptInjection.matches[${i}]`),
        };
      }),
    },
  };
  if (o.aggregations !== undefined)
    out.aggregations = r
      .arr(o.aggregations, `${path}.aggregations`)
      .map((v, i) => readAggregation(r, v, `${path}.aggregations[${i}]`));
  return out;
}
