/**
 * Judge checks that need no people (src/core/rubric/judge-checks.ts), end to end through the
 * product's OpenAI engine, against the BIASED JUDGE DOUBLE (a test double of an LLM judge on a
 * loopback server, tests/rubric/helpers/judge-checks-fixture.ts) with planted faults: the checks
 * must find exactly what was planted, and the preferred-vs-perturbed rates must equal a direct
 * count over the double's verdicts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiEngine } from '../../src/adapters/engines/openai-engine.ts';
import { AGGREGATION_IDS, type AggregationId } from '../../src/core/rubric/aggregations.ts';
import { MemoryJudgeCache, type JudgeCache } from '../../src/core/rubric/judge-cache.ts';
import {
  parsePerturbedPairs,
  perturbReferences,
  positionBias,
  preferredVsPerturbed,
  repeatCache,
  repeatConsistency,
  samplePairs,
  type CheckSample,
  type PerturbedPair,
} from '../../src/core/rubric/judge-checks.ts';
import { Judge } from '../../src/core/rubric/judge.ts';
import { parsePairwiseAnswer } from '../../src/core/rubric/parse-judge.ts';
import { parseRarJsonl, type RarRow } from '../../src/core/rubric/rar-dataset.ts';
import { pairCompletions } from '../../src/core/rubric/rar-run.ts';
import {
  LIKERT_SCORE,
  completionLines,
  datasetLines,
  flipKey,
  honestMet,
  implicitScore,
  pairKey,
  perturbedLines,
  startBiasedJudgeDouble,
  type BiasedJudgeDouble,
} from './helpers/judge-checks-fixture.ts';
import { section, startJudgeServer } from './helpers/openai-server.ts';

const jsonl = (rows: readonly unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const rows = parseRarJsonl(jsonl(datasetLines()), 'fixture.jsonl');
const samples: CheckSample[] = pairCompletions(jsonl(completionLines()), 'completions.jsonl', rows).map((j) => ({
  row: j.row.id,
  index: j.row.index,
  sample: j.sample,
  question: j.row.question,
  reference: j.row.referenceAnswer,
  rubric: j.row.rubric,
  response: j.completion,
}));

/** Every (sample, criterion), in order; every tenth one (10 %) is planted to flip. */
const allCriteria = samples.flatMap((s) => s.rubric.items.map((item) => ({ s, item })));
const plantedFlips = allCriteria.filter((_, n) => n % 10 === 3);
const FLIPS = new Set(plantedFlips.map(({ s, item }) => flipKey(s.response, item.title)));

/** The pairs of a row's samples; every fourth is planted to follow position A. */
const swapPairs = samplePairs(samples);
const plantedBias = swapPairs.filter((_, n) => n % 4 === 1);
const BIASED = new Set(plantedBias.map((p) => pairKey(p.x, p.y)));

let server: BiasedJudgeDouble | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function judgeOn(s: BiasedJudgeDouble, cache: JudgeCache = new MemoryJudgeCache()) {
  const engine = createOpenAiEngine({ baseUrl: s.url, maxRetries: 0, concurrency: 4 });
  await engine.load({ id: 'biased-double' });
  const judge = (c: JudgeCache = cache) => new Judge({ engine, model: 'biased-double', cache: c });
  return { engine, judge, cache };
}

/** Direct computation of each aggregation from the double's verdicts (independent of aggregations.ts). */
function direct(id: AggregationId, pair: PerturbedPair, response: string, other: string): number | null {
  const items = pair.rubric.items;
  const met = items.map((i) => honestMet(response, i.description));
  const sum = items.reduce((a, i, k) => a + (met[k] ? i.weight : 0), 0);
  const pos = items.reduce((a, i) => a + Math.max(0, i.weight), 0);
  const abs = items.reduce((a, i) => a + Math.abs(i.weight), 0);
  const clamp = (x: number) => Math.min(1, Math.max(0, x));
  const explicit = clamp(sum / pos);
  const pitfallHit = items.some((i, k) => i.weight < 0 && met[k]);
  const failed = (cats: string[]) => items.some((i, k) => cats.includes(i.category) && i.weight > 0 && !met[k]);
  switch (id) {
    case 'explicit':
      return explicit;
    case 'explicit-abs':
      return clamp(sum / abs);
    case 'explicit-unclipped':
      return sum / pos;
    case 'implicit':
      return (implicitScore(response) - 1) / 9;
    case 'likert':
      return (LIKERT_SCORE - 1) / 9;
    case 'veto':
      return failed(['essential']) || pitfallHit ? 0 : explicit;
    case 'minimum':
      return failed(['essential', 'important', 'optional']) || pitfallHit ? 0 : 1;
    case 'all-must-pass':
      return failed(['essential', 'important']) || pitfallHit ? 0 : 1;
    case 'rule-x-judge':
      return null; // no rule reward in these pairs
    case 'group-rank': {
      const mine = explicit;
      const theirs = direct('explicit', pair, other, response)!;
      return mine > theirs ? 1 : mine < theirs ? 0 : 0.5;
    }
  }
}

/** The direct count of one aggregation over the pairs. */
function directCount(id: AggregationId, pairs: readonly PerturbedPair[]) {
  const c = { preferred: 0, perturbedPreferred: 0, ties: 0, missing: 0 };
  for (const p of pairs) {
    const a = direct(id, p, p.reference, p.perturbed);
    const b = direct(id, p, p.perturbed, p.reference);
    if (a === null || b === null) c.missing += 1;
    else if (a > b) c.preferred += 1;
    else if (a < b) c.perturbedPreferred += 1;
    else c.ties += 1;
  }
  const scored = c.preferred + c.perturbedPreferred + c.ties;
  return { ...c, scored, rate: scored ? c.preferred / scored : null };
}

async function expectPerturbedMatchesDirect(pairs: readonly PerturbedPair[], judge: Judge) {
  const report = await preferredVsPerturbed({
    pairs,
    judge,
    aggregations: AGGREGATION_IDS,
    explicit: { normalization: 'positive', clip: true, unresolved: 'null' },
    concurrency: 4,
  });
  expect(report.pairs).toBe(pairs.length);
  for (const [k, id] of AGGREGATION_IDS.entries()) {
    const stat = report.aggregations[k]!;
    expect(stat.id).toBe(id);
    expect(stat).toMatchObject(directCount(id, pairs));
    // Each value equals the direct computation on the same verdicts.
    report.results.forEach((r, i) => {
      const p = pairs[i]!;
      const want = [direct(id, p, p.reference, p.perturbed), direct(id, p, p.perturbed, p.reference)];
      const got = [r.reference[k]!.score, r.perturbed[k]!.score];
      want.forEach((w, j) => (w === null ? expect(got[j]).toBeNull() : expect(got[j]).toBeCloseTo(w, 12)));
    });
  }
  return report;
}

describe('judge checks against the biased judge double', { timeout: 60_000 }, () => {
  it('repeat consistency finds exactly the planted 10 % flips, each repeat asking the judge again', async () => {
    server = await startBiasedJudgeDouble({ flips: FLIPS, biasedPairs: new Set() });
    const { judge, cache } = await judgeOn(server);
    const judgeFor = (r: number) => judge(repeatCache(cache, r));
    const report = await repeatConsistency({ samples, k: 3, judgeFor, concurrency: 4 });
    expect(allCriteria).toHaveLength(120);
    expect(plantedFlips).toHaveLength(12);
    // Every repeat asked the judge: 3 × 120 criterion calls (a shared cache would make 120).
    expect(server.calls).toBe(360);
    expect(server.flipsServed()).toBe(12);
    expect(report.overall).toEqual({ n: 120, flipped: 12, share: 0.1, unresolved: 0 });
    const key = (row: string, sample: number, criterion: string) => `${row}/${sample}/${criterion}`;
    expect(report.flips.map((f) => key(f.row, f.sample, f.criterion))).toEqual(
      plantedFlips.map(({ s, item }) => key(s.row, s.sample, item.id)),
    );
    // The second repeat is the flipped one.
    for (const f of report.flips) expect([f.verdicts[1], f.verdicts[2]]).toEqual([!f.verdicts[0], f.verdicts[0]]);
    // Per criterion and per category: direct counts of the planted set.
    for (const c of report.perCriterion) {
      const planted = plantedFlips.filter(({ s, item }) => s.index === c.index && item.id === c.criterion).length;
      expect([c.n, c.flipped]).toEqual([3, planted]);
    }
    for (const c of report.perCategory) {
      const all = allCriteria.filter(({ item }) => item.category === c.category).length;
      const planted = plantedFlips.filter(({ item }) => item.category === c.category).length;
      expect([c.n, c.flipped, c.share]).toEqual([all, planted, planted / all]);
    }

    // A rerun with the same cache replays every repeat's own answers: no call, same report.
    const again = await repeatConsistency({ samples, k: 3, judgeFor, concurrency: 4 });
    expect(server.calls).toBe(360);
    expect(again).toEqual(report);
  });

  it('a criterion without a verdict in some repeat is counted apart, never as a flip', async () => {
    const target = samples[4]!; // q1, sample 1
    const seen = new Map<string, number>();
    const judgeServer = await startJudgeServer((req) => {
      const user = req.messages.find((m) => m.role === 'user')!.content;
      const n = (seen.get(user) ?? 0) + 1;
      seen.set(user, n);
      const response = section(req, 'response');
      const criterion = section(req, 'criterion');
      if (n === 2 && response === target.response && criterion.startsWith('Criterion 1.2:')) return 'met, I think';
      return JSON.stringify({ criteria_met: honestMet(response, criterion) });
    });
    try {
      const engine = createOpenAiEngine({ baseUrl: judgeServer.url, maxRetries: 0 });
      await engine.load({ id: 'j' });
      const cache = new MemoryJudgeCache();
      const report = await repeatConsistency({
        samples,
        k: 2,
        judgeFor: (r) => new Judge({ engine, model: 'j', retries: 0, cache: repeatCache(cache, r) }),
      });
      expect(report.overall).toEqual({ n: 119, flipped: 0, share: 0, unresolved: 1 });
      expect(report.perCriterion.find((c) => c.row === 'q1' && c.criterion === 'c3')).toMatchObject({
        n: 2,
        unresolved: 1,
        flipped: 0,
      });
      expect(report.flips).toEqual([]);
    } finally {
      await judgeServer.close();
    }
  });

  it('the swap check finds the planted position bias', async () => {
    server = await startBiasedJudgeDouble({ flips: new Set(), biasedPairs: BIASED });
    const { judge } = await judgeOn(server);
    const report = await positionBias({ pairs: swapPairs, judge: judge(), concurrency: 4 });
    expect(swapPairs).toHaveLength(15);
    expect(plantedBias).toHaveLength(4);
    expect(server.calls).toBe(30);
    expect(report.results.filter((r) => r.flipped).map((r) => r.id)).toEqual(plantedBias.map((p) => p.id));
    expect(report).toMatchObject({
      pairs: 15,
      resolved: 15,
      flipped: 4,
      flipShare: 4 / 15,
      followsFirst: 4,
      followsSecond: 0,
      decisive: 30,
      // An honest verdict names A once of its two orders, a biased one twice.
      firstWins: 11 + 2 * 4,
      firstPositionWinRate: 19 / 30,
      ties: 0,
      unresolved: 0,
    });
    // Unbiased pairs: the better (earlier) sample wins in both orders.
    for (const r of report.results.filter((r) => !r.flipped)) expect(r.content).toEqual(['x', 'x']);
  });

  it('preferred vs perturbed from a file: each aggregation’s rate and values equal a direct count', async () => {
    server = await startBiasedJudgeDouble({ flips: new Set(), biasedPairs: new Set() });
    const { judge } = await judgeOn(server);
    const pairs = parsePerturbedPairs(jsonl(perturbedLines()), 'pairs.jsonl', rows);
    const report = await expectPerturbedMatchesDirect(pairs, judge());
    // By hand: q0, q1, q2 prefer the reference, q3 ties, q4's perturbed answer is better.
    const explicit = report.aggregations.find((a) => a.id === 'explicit')!;
    expect(explicit).toMatchObject({ preferred: 3, ties: 1, perturbedPreferred: 1, rate: 0.6, tieShare: 0.2 });
    expect(report.aggregations.find((a) => a.id === 'likert')).toMatchObject({ ties: 5, rate: 0 });
    expect(report.aggregations.find((a) => a.id === 'rule-x-judge')).toMatchObject({ missing: 5, rate: null });
    // The judge never sees the reference answer as such.
    expect(server.requests.every((r) => !r.messages.some((m) => m.content.includes('<reference_answer>')))).toBe(true);
  });

  it('preferred vs perturbed made by an engine from the references; a row without one is skipped', async () => {
    server = await startBiasedJudgeDouble({ flips: new Set(), biasedPairs: new Set() });
    const { engine, judge, cache } = await judgeOn(server);
    const lines = datasetLines().map((l, i) => (i === 2 ? { ...l, reference_answer: undefined } : l));
    const withGap: RarRow[] = parseRarJsonl(jsonl(lines), 'fixture.jsonl');
    const made = await perturbReferences({
      rows: withGap,
      engine,
      model: 'biased-double',
      params: { temperature: 0, topP: 1, maxTokens: 256, seed: 0, stop: [], logprobs: false },
      cache,
    });
    expect(made.skipped).toEqual([{ id: 'q2', reason: 'no reference_answer' }]);
    expect(made.pairs.map((p) => p.id)).toEqual(['q0', 'q1', 'q3', 'q4']);
    // The double drops the reference's first token (an Essential one).
    for (const p of made.pairs) expect(p.perturbed).toBe(p.reference.replace(/ kw\d+x0/, ''));
    const report = await expectPerturbedMatchesDirect(made.pairs, judge());
    expect(report.aggregations.find((a) => a.id === 'veto')).toMatchObject({ preferred: 4, rate: 1 });
  });
});

describe('perturbed pairs file', () => {
  const line = (o: Record<string, unknown>) => jsonl([o]);
  const base = { prompt: 'Q', reference: 'R', perturbed: 'P' };

  it('refuses a line without a rubric or a dataset row, naming the line', () => {
    expect(() => parsePerturbedPairs(line(base), 'pairs.jsonl', null)).toThrow(
      /pairs\.jsonl:1.*no "rubric"|no "rubric"/,
    );
    expect(() => parsePerturbedPairs(line({ ...base, id: 'zz' }), 'pairs.jsonl', rows)).toThrow(
      /no --dataset row has id "zz"/,
    );
  });

  it('refuses an empty perturbed answer and a malformed rubric, naming the line', () => {
    const err = (o: Record<string, unknown>) => {
      try {
        parsePerturbedPairs(jsonl([{ ...base, rubric: [{ title: 't', weight: 1 }] }, o]), 'pairs.jsonl', null);
      } catch (e) {
        return e as Error & { where?: string };
      }
      throw new Error('not refused');
    };
    expect(err({ ...base, perturbed: ' ' }).message).toMatch(/"perturbed" must be a non-empty string/);
    expect(err({ ...base, perturbed: ' ' }).where).toBe('pairs.jsonl:2');
    expect(err({ ...base, rubric: [{ title: 't', weight: 'x' }] }).message).toMatch(/weight must be a finite number/);
  });
});

describe('pairwise verdicts', { timeout: 60_000 }, () => {
  it('reads exactly "A", "B" or "tie"; anything else is no verdict, never a position', () => {
    expect(parsePairwiseAnswer('```json\n{"winner": "B", "explanation": "b"}\n```')).toEqual({
      ok: true,
      value: { winner: 'B', explanation: 'b' },
    });
    expect(parsePairwiseAnswer('{"winner": "tie"}')).toMatchObject({ ok: true, value: { winner: 'tie' } });
    for (const bad of ['{"winner": "a"}', '{"winner": "Response A"}', '{"winner": "Tie"}', 'A is better'])
      expect(parsePairwiseAnswer(bad).ok).toBe(false);
  });

  it('a pair the judge never answers in the format is counted apart, not as a position win', async () => {
    const judgeServer = await startJudgeServer((req) =>
      section(req, 'response_a').includes('kw0x') ? 'Response A is better.' : '{"winner": "A"}',
    );
    try {
      const engine = createOpenAiEngine({ baseUrl: judgeServer.url, maxRetries: 0 });
      await engine.load({ id: 'j' });
      const pairs = [swapPairs[0]!, swapPairs[3]!]; // rows q0 and q1
      const report = await positionBias({ pairs, judge: new Judge({ engine, model: 'j', retries: 1 }) });
      expect(report).toMatchObject({
        pairs: 2,
        resolved: 1,
        unresolved: 2,
        decisive: 2,
        firstWins: 2,
        followsFirst: 1,
      });
      expect(report.results[0]).toMatchObject({ xFirst: null, yFirst: null, flipped: false });
    } finally {
      await judgeServer.close();
    }
  });
});
