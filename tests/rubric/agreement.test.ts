/**
 * Agreement of the judge with human labels (core/rubric/agreement.ts) and the labels' JSONL
 * (core/rubric/labels.ts): κ, raw agreement and the constant-answer baseline equal a direct
 * computation, on hand-computable cases and on a run judged by the BIASED JUDGE DOUBLE (a test
 * double of an LLM judge on a loopback server, tests/rubric/helpers/judge-checks-fixture.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiEngine } from '../../src/adapters/engines/openai-engine.ts';
import { agreementReport, binaryAgreement, type JudgedResponse, type Pair } from '../../src/core/rubric/agreement.ts';
import { aggregateByGroup, judgedAggregationIds } from '../../src/core/rubric/aggregations.ts';
import { Judge } from '../../src/core/rubric/judge.ts';
import {
  labelsToJsonl,
  mergeLabels,
  parseLabelsJsonl,
  responseHash,
  type HumanLabel,
} from '../../src/core/rubric/labels.ts';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import { pairCompletions, replayCompletions, runRar, type RarSample } from '../../src/core/rubric/rar-run.ts';
import { sha256Hex } from '../../src/core/util/sha256.ts';
import {
  completionLines,
  datasetLines,
  honestMet,
  startBiasedJudgeDouble,
  type BiasedJudgeDouble,
} from './helpers/judge-checks-fixture.ts';

/** Pairs from a 2×2 table: [rater, reference] counts. */
function table(tt: number, tf: number, ft: number, ff: number): Pair[] {
  const rep = (n: number, rater: boolean, reference: boolean) =>
    Array.from({ length: n }, () => ({ rater, reference }));
  return [...rep(tt, true, true), ...rep(tf, true, false), ...rep(ft, false, true), ...rep(ff, false, false)];
}

/** κ, raw and baseline computed directly from the 2×2 table (independent of binaryAgreement). */
function direct(tt: number, tf: number, ft: number, ff: number) {
  const n = tt + tf + ft + ff;
  const po = (tt + ff) / n;
  const rYes = (tt + tf) / n;
  const hYes = (tt + ft) / n;
  const pe = rYes * hYes + (1 - rYes) * (1 - hYes);
  return { raw: po, kappa: (po - pe) / (1 - pe), baseline: Math.max(hYes, 1 - hYes) };
}

describe('binaryAgreement: κ, raw agreement, constant-answer baseline', () => {
  it('a hand-computed 2×2 table: 20/5/10/15 gives raw 0.7, κ 0.4, baseline 0.6', () => {
    const a = binaryAgreement(table(20, 5, 10, 15));
    expect(a.n).toBe(50);
    expect(a.raw).toBeCloseTo(0.7, 12);
    // p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5) / 0.5 = 0.4
    expect(a.kappa).toBeCloseTo(0.4, 12);
    expect(a.baseline).toBeCloseTo(0.6, 12);
    expect(a.majority).toBe(true);
    expect([a.falsePasses, a.falseFails]).toEqual([5, 10]);
  });

  it.each([
    [3, 1, 2, 4],
    [0, 4, 6, 0],
    [9, 0, 0, 1],
    [1, 7, 1, 1],
  ])('table %i/%i/%i/%i equals the direct formulas', (tt, tf, ft, ff) => {
    const a = binaryAgreement(table(tt, tf, ft, ff));
    const d = direct(tt, tf, ft, ff);
    expect(a.raw).toBeCloseTo(d.raw, 12);
    expect(a.kappa).toBeCloseTo(d.kappa, 12);
    expect(a.baseline).toBeCloseTo(d.baseline, 12);
  });

  it('a judge that always says "met" on mostly-met labels: high raw agreement, κ 0, baseline equal to it', () => {
    const a = binaryAgreement(table(9, 1, 0, 0));
    expect(a.raw).toBeCloseTo(0.9, 12);
    expect(a.baseline).toBeCloseTo(0.9, 12);
    expect(a.kappa).toBe(0);
  });

  it('κ is null, never a number, when p_e = 1 or there are no pairs', () => {
    expect(binaryAgreement(table(4, 0, 0, 0)).kappa).toBeNull();
    expect(binaryAgreement(table(4, 0, 0, 0)).raw).toBe(1);
    const none = binaryAgreement([]);
    expect([none.raw, none.kappa, none.baseline, none.majority]).toEqual([null, null, null, null]);
  });
});

const DS = sha256Hex('dataset');
const label = (over: Partial<HumanLabel>): HumanLabel => ({
  labeller: 'ann',
  dataset: DS,
  question: 'q0',
  sample: 0,
  response: responseHash('r0'),
  criterion: 'c1',
  value: true,
  at: '2026-12-07T10:00:00.000Z',
  ...over,
});

describe('labels JSONL and merging', () => {
  it('round-trips, and the later label of one labeller and item wins; other labellers are kept', () => {
    const a = label({});
    const b = label({ labeller: 'bob', value: false });
    expect(parseLabelsJsonl(labelsToJsonl([a, b]), 'x.jsonl')).toEqual([a, b]);
    const later = label({ value: false, at: '2026-12-07T11:00:00.000Z' });
    const earlier = label({ value: false, at: '2026-12-07T09:00:00.000Z' });
    const m = mergeLabels([a, b], [later, earlier, label({ criterion: 'c2' })]);
    expect([m.added, m.replaced, m.ignored]).toEqual([1, 1, 1]);
    expect(m.labels.find((l) => l.labeller === 'ann' && l.criterion === 'c1')).toEqual(later);
    expect(m.labels.find((l) => l.labeller === 'bob')).toEqual(b);
    // Equal times: the stored label is kept.
    expect(mergeLabels([a], [label({ value: false })]).labels).toEqual([a]);
  });

  it.each([
    ['not json', /^f\.jsonl:2: not valid JSON/],
    ['[1]', /^f\.jsonl:2: expected a label object/],
    [JSON.stringify({ ...label({}), value: 'yes' }), /^f\.jsonl:2: "value" must be true/],
    [JSON.stringify({ ...label({}), labeller: ' ' }), /^f\.jsonl:2: "labeller" must be/],
    [JSON.stringify({ ...label({}), at: 'yesterday' }), /^f\.jsonl:2: "at" must be an ISO 8601 time/],
    [JSON.stringify({ ...label({}), response: 'abc' }), /^f\.jsonl:2: "response" must be the completion's sha256/],
    [JSON.stringify({ ...label({}), criterion: '' }), /^f\.jsonl:2: "criterion" must be/],
    [JSON.stringify({ ...label({}), extra: 1 }), /^f\.jsonl:2: unknown field "extra"/],
  ])('a bad line is refused naming the file and line: %s', (line, err) => {
    expect(() => parseLabelsJsonl(`${JSON.stringify(label({}))}\n${line}\n`, 'f.jsonl')).toThrow(err);
  });

  it('an empty file is refused', () => {
    expect(() => parseLabelsJsonl('\n\n', 'e.jsonl')).toThrow(/^e\.jsonl: no labels/);
  });
});

describe('agreementReport on a run judged by the biased judge double', () => {
  let server: BiasedJudgeDouble | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('per criterion and overall, judge vs labels, labeller vs labeller, and aggregations vs whole-response labels equal a direct count', async () => {
    server = await startBiasedJudgeDouble({ flips: new Set(), biasedPairs: new Set() });
    const engine = createOpenAiEngine({ baseUrl: server.url, maxRetries: 0, concurrency: 4 });
    await engine.load({ id: 'biased-double' });
    const text = datasetLines()
      .map((l) => JSON.stringify(l))
      .join('\n');
    const rows = parseRarJsonl(text, 'ds.jsonl');
    const jobs = pairCompletions(
      completionLines()
        .map((l) => JSON.stringify(l))
        .join('\n'),
      'c.jsonl',
      rows,
    );
    const samples: RarSample[] = [];
    await runRar({
      rows,
      samples: 3,
      policy: { kind: 'replay', completions: replayCompletions(jobs) },
      judge: new Judge({ engine, model: 'biased-double' }),
      aggregations: ['explicit', 'implicit', 'likert'],
      explicit: { normalization: 'positive', clip: true, unresolved: 'null' },
      weighting: 'as-given',
      done: new Set(),
      write: async (s) => void samples.push(...s),
    });
    expect(samples).toHaveLength(15);
    const ds = sha256Hex(text);
    const values = aggregateByGroup(
      samples,
      (s) => s.index,
      (s) => ({ items: rows[s.index]!.rubric.items, scores: s.scores, rule: null }),
      judgedAggregationIds(samples.map((s) => s.scores)),
      { normalization: 'positive', clip: true, unresolved: 'null' },
    );
    const responses: JudgedResponse[] = samples.map((s, i) => ({
      dataset: ds,
      question: s.rowId,
      response: responseHash(s.completion),
      index: s.index,
      sample: s.sample,
      items: rows[s.index]!.rubric.items,
      criteria: s.scores.criteria,
      aggregations: values[i]!,
    }));

    // Ann labels every criterion of every response with the truth (the token is there), except
    // that she disagrees with it on every criterion "c5" (a planted human-vs-judge difference).
    // Bob labels the criteria of q0 and q1 only, by the truth. Whole responses: Ann passes a
    // response iff it has no pitfall token and at least 4 positive tokens.
    const labels: HumanLabel[] = [];
    const truth = new Map<string, boolean>();
    for (const s of samples) {
      const base = {
        dataset: ds,
        question: s.rowId,
        sample: s.sample,
        response: responseHash(s.completion),
        at: '2026-12-07T10:00:00.000Z',
      };
      for (const it of rows[s.index]!.rubric.items) {
        const t = honestMet(s.completion, it.description);
        truth.set(`${s.rowId}.${s.sample}.${it.id}`, t);
        labels.push({ ...base, labeller: 'ann', criterion: it.id, value: it.id === 'c5' ? !t : t });
        if (s.index < 2) labels.push({ ...base, labeller: 'bob', criterion: it.id, value: t });
      }
      const pos = s.completion.match(/\bkw\d+x\d+\b/g)?.length ?? 0;
      const pit = /\bbad\d+x\d+\b/.test(s.completion);
      labels.push({ ...base, labeller: 'ann', criterion: null, value: !pit && pos >= 4 });
    }
    // A label of another dataset's response is not matched.
    labels.push(label({ dataset: sha256Hex('other') }));
    const report = agreementReport(responses, labels, 0.5);
    expect(report.unmatched).toBe(1);
    expect(report.withoutVerdict).toBe(0);

    // Direct count: the double's verdict is the truth (no flips planted), so every pair agrees
    // except Ann's c5 labels; each c5 disagreement is a false pass where the truth is met.
    const judgePairs: Pair[] = [];
    let fp = 0;
    let ff = 0;
    for (const l of labels) {
      if (l.criterion === null || l.dataset !== ds) continue;
      const s = samples.find((x) => x.rowId === l.question && responseHash(x.completion) === l.response)!;
      const verdict = truth.get(`${s.rowId}.${s.sample}.${l.criterion}`)!;
      judgePairs.push({ rater: verdict, reference: l.value });
      if (verdict && !l.value) fp += 1;
      if (!verdict && l.value) ff += 1;
    }
    const n = judgePairs.length;
    expect(n).toBe(15 * 8 + 6 * 8);
    const agree = judgePairs.filter((p) => p.rater === p.reference).length;
    expect(agree).toBe(n - 15);
    const rYes = judgePairs.filter((p) => p.rater).length / n;
    const hYes = judgePairs.filter((p) => p.reference).length / n;
    const pe = rYes * hYes + (1 - rYes) * (1 - hYes);
    expect(report.judge.overall.n).toBe(n);
    expect(report.judge.overall.raw).toBeCloseTo(agree / n, 12);
    expect(report.judge.overall.kappa).toBeCloseTo((agree / n - pe) / (1 - pe), 12);
    expect(report.judge.overall.baseline).toBeCloseTo(Math.max(hYes, 1 - hYes), 12);
    expect([report.judge.overall.falsePasses, report.judge.overall.falseFails]).toEqual([fp, ff]);
    expect(report.judge.errors).toHaveLength(15);
    expect(new Set(report.judge.errors.map((e) => e.criterion))).toEqual(new Set(['c5']));
    // Per criterion: 5 questions × 8 criteria; c5 of q0 has 3 pairs of Ann (all wrong) and 3 of Bob (all right).
    expect(report.judge.perCriterion).toHaveLength(40);
    const q0c5 = report.judge.perCriterion.find((r) => r.question === 'q0' && r.criterion === 'c5')!.agreement;
    expect([q0c5.n, q0c5.agree]).toEqual([6, 3]);
    const q2c1 = report.judge.perCriterion.find((r) => r.question === 'q2' && r.criterion === 'c1')!.agreement;
    expect([q2c1.n, q2c1.raw]).toEqual([3, 1]);

    // Ann vs Bob: on q0 and q1 (6 responses × 8 criteria), they differ on c5 only.
    expect(report.labellers).toHaveLength(1);
    const ab = report.labellers[0]!;
    expect([ab.a, ab.b, ab.overall.n, ab.overall.agree]).toEqual(['ann', 'bob', 48, 42]);

    // Aggregations thresholded at 0.5 vs Ann's whole-response labels.
    for (const row of report.aggregations) {
      const pairs: Pair[] = [];
      for (const [i, s] of samples.entries()) {
        const v = values[i]!.find((x) => x.id === row.id)!;
        if (v.score === null) continue;
        const want = labels.find((l) => l.criterion === null && l.response === responseHash(s.completion))!;
        pairs.push({ rater: v.score >= 0.5, reference: want.value });
      }
      const a = pairs.filter((p) => p.rater === p.reference).length;
      expect(row.agreement.n, row.id).toBe(pairs.length);
      expect(row.agreement.agree, row.id).toBe(a);
      expect(row.errors.length, row.id).toBe(pairs.length - a);
    }
    // Likert is the double's constant 6 → 5/9 ≥ 0.5: it passes everything, so its false passes
    // are exactly the responses Ann failed (the 5 with a pitfall token).
    const likert = report.aggregations.find((r) => r.id === 'likert')!.agreement;
    expect([likert.n, likert.falsePasses, likert.falseFails, likert.kappa]).toEqual([15, 5, 0, 0]);
  });
});
