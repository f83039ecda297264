/**
 * `rubric` CLI command end to end: the shipped example dataset and completions, judged by a
 * local OpenAI-protocol server on 127.0.0.1 with recorded answers.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_JUDGE_URL, ROOT, readJson, rubricArgs, runCli, tempFile } from '../helpers/cli.ts';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import { section, startJudgeServer, type ChatRequest, type JudgeServer } from './helpers/openai-server.ts';

const DATASET = path.join(ROOT, 'public/rubrics/example-rar.jsonl');
const COMPLETIONS = path.join(ROOT, 'public/rubrics/example-completions.jsonl');
const PITFALLS = new Set([
  'Waiting advice',
  'Unsafe medication',
  'Insulin first',
  'Air bubbles',
  'Mass in speed',
  'Energy as speed',
  'Wrong formula',
]);

/**
 * A recorded judge: the two bad completions ("muscle strain", "air bubbles") meet only their
 * pitfalls; every other completion meets every positive criterion except "Nitroglycerin caveat".
 */
function recorded(req: ChatRequest): string {
  const user = req.messages.find((m) => m.role === 'user')!.content;
  const response = section(req, 'response');
  const bad = /muscle strain|air bubbles/.test(response);
  if (user.includes('<criterion>')) {
    const title = section(req, 'criterion').split(':')[0]!;
    const met = bad ? PITFALLS.has(title) : !PITFALLS.has(title) && title !== 'Nitroglycerin caveat';
    return JSON.stringify({ criteria_met: met, explanation: `recorded verdict for ${title}` });
  }
  if (user.includes('<rubric>')) return `{"score": ${bad ? 2 : 9}, "explanation": "recorded"}`;
  return '```json\n{"score": 6, "explanation": "recorded"}\n```';
}

interface Out {
  judge: { model: string; engine: string };
  summary: {
    count: number;
    explicit: { mean: number; n: number };
    promptInjection: number;
    judge_stats: { calls: number; cacheHits: number };
  };
  items: Array<{
    id: string;
    sample: number;
    scores: {
      criteria: Array<{ status: string }>;
      explicit: { score: number; unclipped: number };
      implicit: { score: number };
      likert: { score: number };
      promptInjection: { flagged: boolean };
    };
  }>;
}

let server: JudgeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const base = (url: string) =>
  rubricArgs({ dataset: DATASET, completions: COMPLETIONS, judgeUrl: url, judgeModel: 'recorded-judge' });

/** Each test spawns the CLI (npm + tsx) once or twice: allow for a loaded 2-core machine. */
describe('rubric CLI command', { timeout: 180_000 }, () => {
  it('scores the example completions: explicit, implicit and Likert per sample, prompt injection flagged', async () => {
    server = await startJudgeServer(recorded);
    const out = tempFile('rubric.json');
    const run = await runCli([...base(server.url), '--out', out]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const got = readJson<Out>(out);
    expect(got.items.map((i) => [i.id, i.sample])).toEqual([
      ['med-chest-pain', 0],
      ['med-chest-pain', 1],
      ['med-t2d-first-line', 0],
      ['sci-ice-floats', 0],
      ['sci-ice-floats', 1],
      ['sci-falling-ball', 0],
      ['sci-propane-combustion', 0],
    ]);
    const explicit = got.items.map((i) => i.scores.explicit.score);
    // Chest pain: positive weights 5+5+4+3+3+2+2 = 24, all met but nitroglycerin (3): 21/24.
    expect(explicit[0]).toBeCloseTo(21 / 24, 12);
    // The bad answer meets both pitfalls: −3/24, clipped to 0.
    expect(explicit[1]).toBe(0);
    expect(got.items[1]!.scores.explicit.unclipped).toBeCloseTo(-3 / 24, 12);
    expect(explicit[4]).toBe(0);
    expect([explicit[2], explicit[3], explicit[5], explicit[6]]).toEqual([1, 1, 1, 1]);
    expect(got.items[0]!.scores.implicit.score).toBeCloseTo(8 / 9, 12);
    expect(got.items[1]!.scores.implicit.score).toBeCloseTo(1 / 9, 12);
    expect(got.items.every((i) => Math.abs(i.scores.likert.score - 5 / 9) < 1e-12)).toBe(true);
    expect(got.items.map((i) => i.scores.promptInjection.flagged)).toEqual([
      false,
      false,
      false,
      false,
      true,
      false,
      false,
    ]);
    expect(got.summary.explicit.mean).toBeCloseTo((21 / 24 + 4) / 7, 12);
    expect(got.summary.promptInjection).toBe(1);
    // 9 + 9 + 10 + 8 + 8 + 9 + 7 criteria, plus one implicit and one Likert call per sample.
    expect(server.calls).toBe(60 + 7 + 7);
    expect(got.summary.judge_stats).toMatchObject({ calls: 74, cacheHits: 0 });
    expect(got.judge).toMatchObject({ model: 'recorded-judge', engine: 'openai' });
    expect(run.stdout).toMatch(/^med-chest-pain\s+0\s+0\.875\s+0\.889\s+0\.556\s*$/m);
    expect(run.stdout).toContain('warning: 1 completion(s) address the judge');
  });

  it('with --cache, a second run with other weights and aggregations makes no judge call', async () => {
    server = await startJudgeServer(recorded);
    const cache = tempFile('judge-cache.jsonl');
    const first = await runCli([...base(server.url), '--cache', cache]);
    expect(first.code).toBe(0);
    expect(server.calls).toBe(74);
    expect(existsSync(cache)).toBe(true);
    const out = tempFile('paper.json');
    const again = await runCli([
      ...base(server.url),
      '--cache',
      cache,
      '--weighting',
      'paper',
      '--aggregation',
      'explicit,likert',
      '--out',
      out,
    ]);
    expect(again.code).toBe(0);
    expect(server.calls).toBe(74);
    const got = readJson<Out>(out);
    expect(got.summary.judge_stats).toMatchObject({ calls: 0, cacheHits: 60 + 7 });
    // Paper weights: 1 + 1 + 0.7·3 + 0.3·2 = 4.7 positive, all met but nitroglycerin (0.7).
    expect(got.items[0]!.scores.explicit.score).toBeCloseTo(4 / 4.7, 12);
    expect(got.items[0]!.scores.implicit).toBeNull();
  });

  it('a judge that never answers in the format leaves `unparseable` verdicts, never a 0, and exits 2: nothing was scored', async () => {
    server = await startJudgeServer(() => 'Looks good to me!');
    const out = tempFile('u.json');
    const run = await runCli([
      ...base(server.url),
      '--retries',
      '0',
      '--aggregation',
      'explicit,implicit',
      '--out',
      out,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /nothing was scored: none of the 7 sample\(s\) got a explicit, implicit score; the judge answered, but \d+ answer\(s\) were malformed/,
    );
    const got = readJson<Out>(out);
    expect(
      got.items.every(
        (i) => i.scores.explicit.score === null && i.scores.criteria.every((c) => c.status === 'unparseable'),
      ),
    ).toBe(true);
    expect(got.summary.explicit).toMatchObject({ n: 0, mean: null });
    expect(run.stdout).toMatch(/^med-chest-pain\s+0\s+—\s+—\s+—\s+unresolved:c1,.*implicit:unparseable/m);
    expect(run.stdout).toContain('explicit  mean — over 0 sample(s), 7 without a score');
  });

  it('--aggregation all: every registry aggregation per sample equals a direct computation from the stored verdicts', async () => {
    server = await startJudgeServer(recorded);
    // The example completions with a rule reward on all but the last line (which gets none).
    const lines = readFileSync(COMPLETIONS, 'utf8').trim().split('\n');
    const rules = [1, 0.5, 1, 1, 0, 0.25, null];
    const comps = tempFile('ruled.jsonl');
    writeFileSync(
      comps,
      lines
        .map((l, i) => JSON.stringify({ ...JSON.parse(l), ...(rules[i] === null ? {} : { rule_score: rules[i] }) }))
        .join('\n') + '\n',
    );
    const args = rubricArgs({
      dataset: DATASET,
      completions: comps,
      judgeUrl: server.url,
      judgeModel: 'recorded-judge',
    });
    const out = tempFile('all.json');
    const cache = tempFile('cache.jsonl');
    const run = await runCli([...args, '--aggregation', 'all', '--cache', cache, '--out', out]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const rows = parseRarJsonl(readFileSync(DATASET, 'utf8'), 'example-rar.jsonl');
    const got = readJson<{
      options: { aggregations: string[]; aggregation_versions: Record<string, number> };
      summary: { aggregations: Array<{ id: string; n: number; missing: number; mean: number | null }> };
      items: Array<{
        id: string;
        scores: {
          criteria: Array<{ id: string; met: boolean }>;
          explicit: { score: number };
          aggregations: Array<{ id: string; version: number; score: number | null; status: string }>;
        };
      }>;
    }>(out);
    expect(got.options.aggregations).toEqual([
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
    ]);
    expect(Object.values(got.options.aggregation_versions).every((v) => v === 1)).toBe(true);
    // Direct computation: a criterion fails when unmet, a pitfall (negative weight: describes the fault) when met.
    const expected = got.items.map((item, i) => {
      const rubric = rows.find((r) => r.id === item.id)!.rubric.items;
      const met = new Map(item.scores.criteria.map((c) => [c.id, c.met]));
      const fails = rubric.filter((c) => (c.category === 'pitfall' ? met.get(c.id) : !met.get(c.id)));
      const num = rubric.reduce((a, c) => a + (met.get(c.id) ? c.weight : 0), 0);
      const pos = rubric.reduce((a, c) => a + Math.max(0, c.weight), 0);
      const abs = rubric.reduce((a, c) => a + Math.abs(c.weight), 0);
      const explicit = Math.min(1, Math.max(0, num / pos));
      const group = got.items.filter((o) => o.id === item.id).map((o) => o.scores.explicit.score);
      const s = item.scores.explicit.score;
      return {
        explicit,
        'explicit-abs': Math.min(1, Math.max(0, num / abs)),
        'explicit-unclipped': num / pos,
        veto: fails.some((c) => c.category === 'essential' || c.category === 'pitfall') ? 0 : explicit,
        minimum: fails.length ? 0 : 1,
        'all-must-pass': fails.some((c) => c.category !== 'optional') ? 0 : 1,
        'rule-x-judge': rules[i] === null ? null : rules[i]! * explicit,
        'group-rank':
          group.length < 2
            ? null
            : (group.filter((x) => x < s).length + (group.filter((x) => x === s).length - 1) / 2) / (group.length - 1),
      };
    });
    for (const [i, item] of got.items.entries()) {
      const byId = Object.fromEntries(item.scores.aggregations.map((a) => [a.id, a.score]));
      for (const [id, want] of Object.entries(expected[i]!)) {
        if (want === null) expect(byId[id], `${item.id} ${id}`).toBeNull();
        else expect(byId[id], `${item.id} ${id}`).toBeCloseTo(want, 12);
      }
    }
    // The samples differ under the new aggregations: the chest-pain answer misses one criterion.
    expect(expected.map((e) => e['group-rank'])).toEqual([1, 0, null, 1, 0, null, null]);
    expect(expected[0]!.minimum).toBe(0);
    expect(expected[1]!.veto).toBe(0);
    const rule = got.summary.aggregations.find((a) => a.id === 'rule-x-judge')!;
    expect(rule).toMatchObject({ n: 6, missing: 1 });
    expect(rule.mean).toBeCloseTo(expected.slice(0, 6).reduce((a, e) => a + e['rule-x-judge']!, 0) / 6, 12);
    // Repeated flags and lists choose columns: explicit, implicit, Likert, then the chosen others.
    const picked = await runCli([
      ...args,
      '--cache',
      cache,
      '--aggregation',
      'veto',
      '--aggregation',
      'group-rank,minimum',
    ]);
    expect(picked.code).toBe(0);
    expect(picked.stdout).toMatch(
      /^row\s+sample\s+explicit\s+implicit\s+likert\s+veto\s+minimum\s+group-rank\s+flags$/m,
    );
    const f = (x: number | null) => (x === null ? '—' : x.toFixed(3));
    const e0 = expected[0]!;
    expect(picked.stdout).toContain(
      ['med-chest-pain', '0', f(e0.explicit), '—', '—', f(e0.veto), f(e0.minimum), f(e0['group-rank'])]
        .map((c) => c.padEnd(10))
        .join(' ')
        .trimEnd(),
    );
    expect(picked.stdout).toMatch(/^group-rank mean 0\.500 over 4 sample\(s\), 3 without a score \(/m);
    expect(server.calls).toBe(74);
  });

  it('--help lists every aggregation with its version and formula; a bad rule_score is named with its line', async () => {
    const help = await runCli(['rubric', '--help']);
    expect(help.stdout + help.stderr).toContain(
      'veto@1                0 if any Essential failed or any Pitfall triggered',
    );
    expect(help.stdout + help.stderr).toMatch(/group-rank@1 +\(#\{j: s_j < s_i\}/);
    const comps = tempFile('bad-rule.jsonl');
    writeFileSync(
      comps,
      '{"id": "med-chest-pain", "completion": "a"}\n{"id": "med-chest-pain", "completion": "b", "rule_score": 2}\n',
    );
    const run = await runCli(rubricArgs({ dataset: DATASET, completions: comps }));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('bad-rule.jsonl:2: "rule_score" must be a number in [0, 1]');
  });

  it('exits 2 naming the flag when the judge cannot be reached', async () => {
    server = await startJudgeServer(recorded);
    const url = server.url;
    await server.close();
    server = null;
    const run = await runCli([...base(url), '--http-retries', '0', '--aggregation', 'likert']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^error: --judge-url: the judge failed after 0 of 7 sample\(s\): GET http:\/\/127\.0\.0\.1:\d+\/v1\/models: the server could not be reached/,
    );
  });

  it('stops with exit 2 when the judge server fails mid-run, keeping the cached answers for a rerun', async () => {
    let calls = 0;
    server = await startJudgeServer((req) =>
      ++calls > 20 ? { status: 503, body: '{"error":{"message":"going away"}}' } : recorded(req),
    );
    const cache = tempFile('partial.jsonl');
    const run = await runCli([...base(server.url), '--http-retries', '0', '--concurrency', '1', '--cache', cache]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--judge-url: the judge failed after 1 of 7 sample(s)');
    expect(run.stderr).toContain('HTTP 503: going away');
    expect(run.stderr).toContain(`the answers received so far are in ${cache}`);
    // The rerun pays only for what is missing.
    await server.close();
    server = await startJudgeServer(recorded);
    const again = await runCli([...base(server.url), '--cache', cache]);
    expect(again.code).toBe(0);
    expect(server.calls).toBe(74 - 20);
  });

  it.each([
    [['--aggregation', 'explicit,vibes'], '--aggregation: unknown aggregation "vibes"'],
    [
      ['--aggregation', 'veto', '--aggregation', 'vibes'],
      '--aggregation: unknown aggregation "vibes"; use all or any of',
    ],
    [['--weighting', 'heavy'], '--weighting: expected one of as-given, paper, rar-integers, got "heavy"'],
    [['--retries', '1.5'], '--retries: expected an integer from 0 to 10, got "1.5"'],
  ])('rejects %j', async (flags, message) => {
    const run = await runCli([...base(NO_JUDGE_URL), ...flags]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it('rejects a missing judge URL and completions that do not pair with the dataset', async () => {
    const noUrl = await runCli(['rubric', '--dataset', DATASET, '--completions', COMPLETIONS, '--judge-model', 'm']);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('--judge-url: is required');
    const comps = tempFile('c.jsonl');
    writeFileSync(comps, '{"completion": "a"}\n{"completion": "b"}\n');
    const unpaired = await runCli(rubricArgs({ dataset: DATASET, completions: comps }));
    expect(unpaired.code).toBe(2);
    expect(unpaired.stderr).toContain('c.jsonl: 2 completions without "id" or "index" for 5 dataset rows');
    writeFileSync(comps, '{"id": "med-chest-pain", "completion": "a"}\n{"id": "nope", "completion": "b"}\n');
    const unknown = await runCli(rubricArgs({ dataset: DATASET, completions: comps }));
    expect(unknown.stderr).toContain('c.jsonl:2: no dataset row has id "nope"');
  });
});
