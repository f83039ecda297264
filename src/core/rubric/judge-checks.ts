/**
 * Judge checks that need no people (pure over the Judge and the Engine port):
 *
 * - **repeat consistency**: the same judge judges the same (sample, criterion) k times; a
 *   criterion *flips* when its k verdicts are not all the same. Each repeat reads and writes
 *   the judge cache under a key of its own (`repeatCache`), so every repeat really asks the
 *   judge, and a rerun of the check with the same cache file replays them.
 * - **position bias**: each pair of responses is judged pairwise twice, X as A then Y as A; a
 *   judge without position bias names the same response both times.
 * - **preferred vs perturbed** (RaR): a reference answer and a perturbed, worse one are scored
 *   with the rubric under each aggregation; the share of pairs whose reference gets the higher
 *   reward, ties counted apart. The judge is never shown the reference answer here (it would
 *   give the answer away).
 */
import type { Engine, SamplingParams } from '../engine/engine.ts';
import { WorkbenchError } from '../errors.ts';
import { describeValue, isRecord } from '../formats/questions.ts';
import { jsonLineRecords } from '../formats/records.ts';
import { sha256Hex } from '../util/sha256.ts';
import {
  aggregateGroup,
  aggregationDef,
  judgingsFor,
  type AggregationId,
  type AggregationValue,
} from './aggregations.ts';
import type { Judge } from './judge.ts';
import { judgeCacheKey, type JudgeCache } from './judge-cache.ts';
import { RAR_PERTURB_V1, renderTemplate } from './judge-prompts.ts';
import type { Category, Rubric } from './model.ts';
import type { PairwiseWinner } from './parse-judge.ts';
import { rarFromRecords, type RarRow } from './rar-dataset.ts';
import { scoreSample } from './score.ts';
import type { ExplicitOptions, RubricScores } from './scores.ts';

/** Runs `fn` over `xs` with at most `limit` at once, results in order. */
async function mapLimit<T, R>(xs: readonly T[], limit: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  const worker = async () => {
    while (next < xs.length) {
      const i = next++;
      out[i] = await fn(xs[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, xs.length)) }, worker));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Repeat consistency

/**
 * The judge cache seen by repeat `repeat`: every key is hashed with the repeat number, so the
 * k repeats never read each other's answers (each one asks the judge), while a rerun of the
 * check replays each repeat's own answers from the same cache.
 */
export function repeatCache(base: JudgeCache, repeat: number): JudgeCache {
  const key = (k: string) => sha256Hex(`repeat-check:${repeat}:${k}`);
  return { get: (k) => base.get(key(k)), set: (k, a) => base.set(key(k), a) };
}

/** One response to judge: a sample of a dataset row. */
export interface CheckSample {
  /** The row's id and 0-based index. */
  row: string;
  index: number;
  sample: number;
  question: string;
  reference: string | null;
  rubric: Rubric;
  response: string;
}

interface RepeatFlip {
  row: string;
  index: number;
  sample: number;
  criterion: string;
  title: string;
  /** The verdict of each repeat (null: no verdict). */
  verdicts: Array<boolean | null>;
}

interface RepeatGroupStat {
  /** Judged (sample, criterion) pairs with a verdict in every repeat. */
  n: number;
  /** Of those, the ones whose verdicts are not all the same. */
  flipped: number;
  /** flipped / n, null when n = 0. */
  share: number | null;
  /** Pairs lacking a verdict in some repeat (unparseable, error): counted apart. */
  unresolved: number;
}

interface RepeatCriterionStat extends RepeatGroupStat {
  row: string;
  index: number;
  criterion: string;
  title: string;
  category: Category;
}

export interface RepeatReport {
  check: 'repeat';
  k: number;
  overall: RepeatGroupStat;
  /** Per criterion of each row's rubric, over the row's samples. */
  perCriterion: RepeatCriterionStat[];
  perCategory: Array<RepeatGroupStat & { category: Category }>;
  /** Every flipped (sample, criterion), in sample then rubric order. */
  flips: RepeatFlip[];
}

const stat = (n: number, flipped: number, unresolved: number): RepeatGroupStat => ({
  n,
  flipped,
  share: n > 0 ? flipped / n : null,
  unresolved,
});

/**
 * Judges every sample's judge criteria k times (`judgeFor(r)` is repeat r's judge; give each a
 * `repeatCache`) and reports the criteria whose verdict changes. Programmatic criteria (regex,
 * SQL) are deterministic and left out.
 */
export async function repeatConsistency(o: {
  samples: readonly CheckSample[];
  k: number;
  judgeFor: (repeat: number) => Judge;
  concurrency?: number;
}): Promise<RepeatReport> {
  if (!Number.isInteger(o.k) || o.k < 2)
    throw new WorkbenchError('BAD_OPTION', `a repeat check needs k ≥ 2 repeats, got ${o.k}`);
  const runs: RubricScores[][] = [];
  for (let r = 0; r < o.k; r++) {
    const judge = o.judgeFor(r);
    const scored: RubricScores[] = [];
    for (const s of o.samples) {
      scored.push(
        await scoreSample(
          s.rubric,
          { question: s.question, reference: s.reference, completion: s.response },
          { aggregations: ['explicit'], judge, concurrency: o.concurrency ?? 1 },
        ),
      );
    }
    runs.push(scored);
  }
  const flips: RepeatFlip[] = [];
  const byCriterion = new Map<string, RepeatCriterionStat>();
  o.samples.forEach((s, i) => {
    for (const item of s.rubric.items) {
      if (item.check.kind !== 'judge') continue;
      const verdicts = runs.map((run) => run[i]!.criteria.find((v) => v.id === item.id)?.met ?? null);
      const key = `${s.index}\u0000${item.id}`;
      let c = byCriterion.get(key);
      if (!c) {
        c = {
          row: s.row,
          index: s.index,
          criterion: item.id,
          title: item.title,
          category: item.category,
          ...stat(0, 0, 0),
        };
        byCriterion.set(key, c);
      }
      if (verdicts.some((v) => v === null)) {
        c.unresolved += 1;
        continue;
      }
      c.n += 1;
      if (verdicts.some((v) => v !== verdicts[0])) {
        c.flipped += 1;
        flips.push({ row: s.row, index: s.index, sample: s.sample, criterion: item.id, title: item.title, verdicts });
      }
    }
  });
  const perCriterion = [...byCriterion.values()].map((c) => ({ ...c, share: c.n > 0 ? c.flipped / c.n : null }));
  const sum = (cs: readonly RepeatCriterionStat[]) =>
    stat(
      cs.reduce((a, c) => a + c.n, 0),
      cs.reduce((a, c) => a + c.flipped, 0),
      cs.reduce((a, c) => a + c.unresolved, 0),
    );
  const categories: Category[] = ['essential', 'important', 'optional', 'pitfall'];
  return {
    check: 'repeat',
    k: o.k,
    overall: sum(perCriterion),
    perCriterion,
    perCategory: categories
      .map((category) => ({ category, ...sum(perCriterion.filter((c) => c.category === category)) }))
      .filter((c) => c.n + c.unresolved > 0),
    flips,
  };
}

// ---------------------------------------------------------------------------------------------
// Position bias

/** Two responses to one question, X and Y (which is better is not assumed). */
export interface ResponsePair {
  id: string;
  question: string;
  rubric: Rubric;
  x: string;
  y: string;
}

interface SwapPairResult {
  id: string;
  /** Winner by position with X shown first (A = X), then with Y shown first (A = Y). */
  xFirst: PairwiseWinner | null;
  yFirst: PairwiseWinner | null;
  /** Winner by content in each order ('x', 'y', 'tie'), null without a verdict. */
  content: [ContentWinner | null, ContentWinner | null];
  /** Both orders answered and their content winners differ. */
  flipped: boolean;
}

type ContentWinner = 'x' | 'y' | 'tie';

export interface SwapReport {
  check: 'swap';
  pairs: number;
  /** Pairs with a verdict in both orders. */
  resolved: number;
  /** Of those, pairs whose content winner changes with the order. */
  flipped: number;
  flipShare: number | null;
  /** Resolved pairs where A won in both orders / B won in both orders. */
  followsFirst: number;
  followsSecond: number;
  /** Verdicts naming A or B (ties and missing verdicts left out), and those naming A. */
  decisive: number;
  firstWins: number;
  /** firstWins / decisive: 0.5 for a judge without position bias. */
  firstPositionWinRate: number | null;
  /** Verdicts that were tie / missing. */
  ties: number;
  unresolved: number;
  results: SwapPairResult[];
}

function contentWinner(w: PairwiseWinner | null, first: 'x' | 'y'): ContentWinner | null {
  if (w === null) return null;
  if (w === 'tie') return 'tie';
  const second = first === 'x' ? 'y' : 'x';
  return w === 'A' ? first : second;
}

/** Judges each pair in both orders and reports how often the verdict follows the position. */
export async function positionBias(o: {
  pairs: readonly ResponsePair[];
  judge: Judge;
  concurrency?: number;
}): Promise<SwapReport> {
  const results = await mapLimit(o.pairs, o.concurrency ?? 1, async (p): Promise<SwapPairResult> => {
    const xFirst = (await o.judge.pairwise({ question: p.question, a: p.x, b: p.y }, p.rubric)).winner;
    const yFirst = (await o.judge.pairwise({ question: p.question, a: p.y, b: p.x }, p.rubric)).winner;
    const content: [ContentWinner | null, ContentWinner | null] = [
      contentWinner(xFirst, 'x'),
      contentWinner(yFirst, 'y'),
    ];
    const flipped = content[0] !== null && content[1] !== null && content[0] !== content[1];
    return { id: p.id, xFirst, yFirst, content, flipped };
  });
  const resolved = results.filter((r) => r.xFirst !== null && r.yFirst !== null);
  const verdicts = results.flatMap((r) => [r.xFirst, r.yFirst]);
  const decisive = verdicts.filter((v) => v === 'A' || v === 'B').length;
  const firstWins = verdicts.filter((v) => v === 'A').length;
  const flipped = resolved.filter((r) => r.flipped).length;
  return {
    check: 'swap',
    pairs: results.length,
    resolved: resolved.length,
    flipped,
    flipShare: resolved.length > 0 ? flipped / resolved.length : null,
    followsFirst: resolved.filter((r) => r.xFirst === 'A' && r.yFirst === 'A').length,
    followsSecond: resolved.filter((r) => r.xFirst === 'B' && r.yFirst === 'B').length,
    decisive,
    firstWins,
    firstPositionWinRate: decisive > 0 ? firstWins / decisive : null,
    ties: verdicts.filter((v) => v === 'tie').length,
    unresolved: verdicts.filter((v) => v === null).length,
    results,
  };
}

/** Every pair of samples of one row (i < j): the swap check's pairs from a completions file. */
export function samplePairs(samples: readonly CheckSample[]): ResponsePair[] {
  const byRow = new Map<number, CheckSample[]>();
  for (const s of samples) {
    const list = byRow.get(s.index);
    if (list) list.push(s);
    else byRow.set(s.index, [s]);
  }
  const pairs: ResponsePair[] = [];
  for (const list of byRow.values())
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const [a, b] = [list[i]!, list[j]!];
        pairs.push({
          id: `${a.row}#${a.sample}-${b.sample}`,
          question: a.question,
          rubric: a.rubric,
          x: a.response,
          y: b.response,
        });
      }
  return pairs;
}

// ---------------------------------------------------------------------------------------------
// Preferred vs perturbed

export interface PerturbedPair {
  id: string;
  question: string;
  rubric: Rubric;
  reference: string;
  perturbed: string;
  /** Read from a file, or written by an engine from the reference. */
  source: 'file' | 'engine';
}

/**
 * A pairs file, JSON Lines: `{"id"?, "prompt", "reference", "perturbed", "rubric"?}` per line.
 * `rubric` is a RaR rubric (`[{title, description, weight}]`, categories as in rar-dataset.ts);
 * without it the row of `dataset` with the same `id` gives the rubric. Errors name the line.
 */
export function parsePerturbedPairs(
  text: string,
  fileName: string,
  dataset: readonly RarRow[] | null,
): PerturbedPair[] {
  const records = jsonLineRecords(text, fileName);
  if (records.length === 0)
    throw new WorkbenchError(
      'BAD_FORMAT',
      'no pairs: one JSON object per line, {"prompt", "reference", "perturbed", "rubric"}',
      fileName,
    );
  const byId = new Map((dataset ?? []).map((r) => [r.id, r]));
  const ids = new Set<string>();
  return records.map(({ value, line, where }) => {
    const bad = (msg: string) => new WorkbenchError('BAD_FORMAT', msg, where);
    if (!isRecord(value))
      throw bad(`expected an object {"prompt", "reference", "perturbed", "rubric"}, found ${describeValue(value)}`);
    for (const k of ['prompt', 'reference', 'perturbed'] as const)
      if (typeof value[k] !== 'string' || value[k].trim() === '')
        throw bad(`"${k}" must be a non-empty string, found ${describeValue(value[k])}`);
    if (value.id !== undefined && typeof value.id !== 'string' && typeof value.id !== 'number')
      throw bad(`"id" must be a string or a number, found ${describeValue(value.id)}`);
    const id = value.id === undefined ? `${fileName}:${line}` : String(value.id);
    if (ids.has(id)) throw bad(`duplicate id ${JSON.stringify(id)}`);
    ids.add(id);
    let rubric: Rubric;
    if (value.rubric !== undefined) {
      rubric = rarFromRecords(
        [{ value: { id, question: value.prompt, rubric: value.rubric }, line, where }],
        fileName,
      )[0]!.rubric;
    } else {
      const row = value.id === undefined ? undefined : byId.get(id);
      if (!row)
        throw bad(
          dataset
            ? `no "rubric" and no --dataset row has id ${JSON.stringify(id)}: give the line a "rubric" or the id of a dataset row`
            : 'no "rubric": give the line a RaR rubric [{"title", "description", "weight"}], or give --dataset and the id of its row',
        );
      rubric = row.rubric;
    }
    return {
      id,
      question: value.prompt as string,
      rubric,
      reference: value.reference as string,
      perturbed: value.perturbed as string,
      source: 'file' as const,
    };
  });
}

/**
 * Perturbed answers written by `engine` from each row's reference answer (prompt
 * `rar-perturb-v1`), cached like judge answers. Rows without a reference answer, and rows whose
 * perturbation came back empty, failed or identical to the reference, are returned in `skipped`
 * with the reason.
 */
export async function perturbReferences(o: {
  rows: readonly RarRow[];
  engine: Engine;
  model: string;
  params: Omit<SamplingParams, 'n'>;
  cache: JudgeCache;
  concurrency?: number;
}): Promise<{ pairs: PerturbedPair[]; skipped: Array<{ id: string; reason: string }> }> {
  const skipped: Array<{ id: string; reason: string }> = [];
  const made = await mapLimit(o.rows, o.concurrency ?? 1, async (row): Promise<PerturbedPair | null> => {
    const reference = row.referenceAnswer?.trim() ?? '';
    if (reference === '') {
      skipped.push({ id: row.id, reason: 'no reference_answer' });
      return null;
    }
    const messages = [
      { role: 'system' as const, content: RAR_PERTURB_V1.system },
      {
        role: 'user' as const,
        content: renderTemplate(RAR_PERTURB_V1.user, { question: row.question, reference: row.referenceAnswer! }),
      },
    ];
    const params: SamplingParams = { ...o.params, n: 1 };
    const key = judgeCacheKey(messages, o.model, params);
    let text = (await o.cache.get(key))?.text;
    if (text === undefined) {
      const [c] = await o.engine.generate({ messages }, params);
      if (!c || c.finishReason === 'error' || c.finishReason === 'abort') {
        skipped.push({ id: row.id, reason: `the perturbation failed: ${c?.error ?? 'no completion'}` });
        return null;
      }
      text = c.text;
      await o.cache.set(key, { text, finishReason: c.finishReason });
    }
    const perturbed = text.trim();
    if (perturbed === '' || perturbed === reference) {
      skipped.push({
        id: row.id,
        reason: perturbed === '' ? 'the perturbation is empty' : 'the perturbation is the reference unchanged',
      });
      return null;
    }
    return {
      id: row.id,
      question: row.question,
      rubric: row.rubric,
      reference: row.referenceAnswer!,
      perturbed,
      source: 'engine',
    };
  });
  // In row order, whatever order the concurrent calls ended in.
  const order = new Map(o.rows.map((r, i) => [r.id, i]));
  skipped.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  return { pairs: made.filter((p): p is PerturbedPair => p !== null), skipped };
}

interface PerturbedAggregationStat {
  id: AggregationId;
  version: number;
  /** Pairs where both responses got a reward. */
  scored: number;
  /** Reference higher / perturbed higher / equal. */
  preferred: number;
  perturbedPreferred: number;
  ties: number;
  /** Pairs where either reward is missing. */
  missing: number;
  /** preferred / scored (ties count as not preferred), and ties / scored. */
  rate: number | null;
  tieShare: number | null;
}

interface PerturbedPairResult {
  id: string;
  source: 'file' | 'engine';
  reference: AggregationValue[];
  perturbed: AggregationValue[];
}

export interface PerturbedReport {
  check: 'perturbed';
  pairs: number;
  aggregations: PerturbedAggregationStat[];
  results: PerturbedPairResult[];
}

/**
 * Scores the reference and the perturbed answer of each pair with the pair's rubric (the judge
 * does not see the reference as such), under each aggregation in `ids`; group-rank ranks the two
 * against each other.
 */
export async function preferredVsPerturbed(o: {
  pairs: readonly PerturbedPair[];
  judge: Judge;
  aggregations: readonly AggregationId[];
  explicit: ExplicitOptions;
  concurrency?: number;
}): Promise<PerturbedReport> {
  const judgings = judgingsFor(o.aggregations);
  const results: PerturbedPairResult[] = [];
  for (const p of o.pairs) {
    const score = (completion: string) =>
      scoreSample(
        p.rubric,
        { question: p.question, reference: null, completion },
        { aggregations: judgings, explicit: o.explicit, judge: o.judge, concurrency: o.concurrency ?? 1 },
      );
    const ref = await score(p.reference);
    const pert = await score(p.perturbed);
    const [r, q] = aggregateGroup(
      [
        { items: p.rubric.items, scores: ref, rule: null },
        { items: p.rubric.items, scores: pert, rule: null },
      ],
      o.aggregations,
      o.explicit,
    );
    results.push({ id: p.id, source: p.source, reference: r!, perturbed: q! });
  }
  const aggregations = o.aggregations.map((id, k): PerturbedAggregationStat => {
    let preferred = 0;
    let perturbedPreferred = 0;
    let ties = 0;
    let missing = 0;
    for (const r of results) {
      const a = r.reference[k]!.score;
      const b = r.perturbed[k]!.score;
      if (a === null || b === null) missing += 1;
      else if (a > b) preferred += 1;
      else if (a < b) perturbedPreferred += 1;
      else ties += 1;
    }
    const scored = preferred + perturbedPreferred + ties;
    return {
      id,
      version: aggregationDef(id).version,
      scored,
      preferred,
      perturbedPreferred,
      ties,
      missing,
      rate: scored > 0 ? preferred / scored : null,
      tieShare: scored > 0 ? ties / scored : null,
    };
  });
  return { check: 'perturbed', pairs: results.length, aggregations, results };
}
