/**
 * `rubric check` end to end: the CLI as a user runs it, on the RaR-format dataset built by the
 * judge-check fixture, judged by the BIASED JUDGE DOUBLE (a test double of an LLM judge on a
 * loopback server, tests/rubric/helpers/judge-checks-fixture.ts) with planted faults.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { jsonlFile, readJson, runCli, tempFile } from '../helpers/cli.ts';
import {
  completionLines,
  datasetLines,
  flipKey,
  pairKey,
  perturbedLines,
  rubricOf,
  startBiasedJudgeDouble,
  type BiasedJudgeDouble,
} from './helpers/judge-checks-fixture.ts';

let server: BiasedJudgeDouble | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

interface Out {
  format: string;
  options: { repeat: number; swap: boolean; aggregations: string[] };
  checks: {
    repeat: {
      k: number;
      overall: { n: number; flipped: number; share: number };
      flips: Array<{ row: string; sample: number; criterion: string }>;
    };
    swap: { pairs: number; flipped: number; followsFirst: number; firstPositionWinRate: number };
    perturbed: {
      pairs: number;
      aggregations: Array<{ id: string; preferred: number; ties: number; perturbedPreferred: number; rate: number }>;
    };
  };
  judge_stats: { calls: number };
}

const completions = completionLines();
/** Planted flips: criterion c<r+1> of sample 1 of row q<r>, one per row (5 of 120). */
const planted = datasetLines().map((_, r) => ({ row: `q${r}`, response: completions[3 * r + 1]!.completion, j: r }));
const FLIPS = new Set(planted.map((p, r) => flipKey(p.response, rubricOf(r)[p.j]!.title)));
/** Position bias planted on the pair (sample 0, sample 2) of q1 and of q3. */
const BIASED = new Set([1, 3].map((r) => pairKey(completions[3 * r]!.completion, completions[3 * r + 2]!.completion)));

describe('rubric check CLI', { timeout: 180_000 }, () => {
  it('--repeat 2 --swap --perturbed: the planted flips and bias, and the perturbed rates per aggregation', async () => {
    server = await startBiasedJudgeDouble({ flips: FLIPS, biasedPairs: BIASED });
    const out = tempFile('checks.json');
    const run = await runCli([
      'rubric',
      'check',
      '--dataset',
      jsonlFile('data.jsonl', datasetLines()),
      '--completions',
      jsonlFile('completions.jsonl', completions),
      '--perturbed',
      jsonlFile('pairs.jsonl', perturbedLines()),
      '--repeat',
      '2',
      '--swap',
      '--aggregation',
      'explicit,veto,likert',
      '--judge-url',
      server.url,
      '--judge-model',
      'biased-double',
      '--out',
      out,
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const got = readJson<Out>(out);
    expect(got.format).toBe('rlvr-workbench-judge-checks');
    expect(got.checks.repeat.overall).toMatchObject({ n: 120, flipped: 5, share: 5 / 120 });
    expect(got.checks.repeat.flips.map((f) => `${f.row}/${f.sample}/${f.criterion}`)).toEqual(
      planted.map((p) => `${p.row}/1/c${p.j + 1}`),
    );
    expect(got.checks.swap).toMatchObject({ pairs: 15, flipped: 2, followsFirst: 2, firstPositionWinRate: 17 / 30 });
    // By hand from the fixture's pairs (perturbedLines; positive weights sum to 22): explicit
    // 1 vs 17/22, 20/22, 21/22 for q0–q2, a tie for q3, 20/22 vs 1 for q4; veto 1 vs 0 (a lost
    // Essential), 20/22, 0 (a triggered pitfall), a tie, 20/22 vs 1; Likert ties all (the double's constant 6).
    const by = Object.fromEntries(got.checks.perturbed.aggregations.map((a) => [a.id, a]));
    expect(by.explicit).toMatchObject({ preferred: 3, ties: 1, perturbedPreferred: 1, rate: 0.6 });
    expect(by.veto).toMatchObject({ preferred: 3, ties: 1, perturbedPreferred: 1, rate: 0.6 });
    expect(by.likert).toMatchObject({ preferred: 0, ties: 5, perturbedPreferred: 0, rate: 0 });
    // 2 × 120 criteria, 2 × 15 pairwise, 10 answers × (8 criteria + 1 Likert).
    expect(got.judge_stats.calls).toBe(240 + 30 + 90);
    expect(server.calls).toBe(360);
    expect(run.stdout).toMatch(/repeat consistency \(k = 2\): 5 of 120 .*\(4\.2 %\)/);
    expect(run.stdout).toMatch(/first position wins 17 of 30 decisive verdict\(s\) \(56\.7 %/);
    expect(run.stdout).toMatch(/explicit@1\s+60\.0 %/);
  });

  it('--perturb --swap: perturbed answers written by the engine, the swap check on (reference, perturbed)', async () => {
    server = await startBiasedJudgeDouble({ flips: new Set(), biasedPairs: new Set() });
    const out = tempFile('checks.json');
    const run = await runCli([
      'rubric',
      'check',
      '--dataset',
      jsonlFile('data.jsonl', datasetLines()),
      '--perturb',
      '--swap',
      '--aggregation',
      'explicit',
      '--judge-url',
      server.url,
      '--judge-model',
      'biased-double',
      '--out',
      out,
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const got = readJson<Out>(out);
    // The double's perturbation drops the reference's first (Essential) token: every reference wins.
    expect(got.checks.perturbed.pairs).toBe(5);
    expect(got.checks.perturbed.aggregations).toMatchObject([{ id: 'explicit', preferred: 5, rate: 1 }]);
    // An unbiased pairwise judge: the same winner in both orders, first position 50 %.
    expect(got.checks.swap).toMatchObject({ pairs: 5, flipped: 0, followsFirst: 0, firstPositionWinRate: 0.5 });
    const perturbCalls = server.requests.filter((r) =>
      r.messages.some((m) => m.content.includes('Rewrite the reference answer')),
    );
    expect(perturbCalls).toHaveLength(5);
  });

  it('refuses a run that names no check, and --perturbed with --perturb, naming the flags', async () => {
    const none = await runCli(['rubric', 'check', '--judge-url', 'http://127.0.0.1:9/v1', '--judge-model', 'm']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/name a check: --repeat K, --swap, --perturbed FILE or --perturb/);
    const both = await runCli([
      'rubric',
      'check',
      '--perturbed',
      'x.jsonl',
      '--perturb',
      '--judge-url',
      'http://127.0.0.1:9/v1',
      '--judge-model',
      'm',
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--perturb.*not both/);
  });
});
