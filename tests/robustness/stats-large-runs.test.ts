/**
 * `stats` and `compare` on large valid runs, through the real CLI: 500,000 samples (used to
 * crash with "Maximum call stack size exceeded"), one reward of 1e300 (used to loop to
 * out-of-memory in the advantage histogram), 2,000 samples of one question (used to fail with
 * a raw RangeError). The numbers are checked against a straightforward reference.
 */
import { describe, expect, it } from 'vitest';
import type { SampleRecord } from '../../src/core/run/types.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { syntheticRunFile, syntheticSamples, writeRunFile } from './synthetic-run.ts';

const LONG = 300_000;

/** All k-subsets of [0, n) (small n only). */
function subsets(n: number, k: number): number[][] {
  if (k === 0) return [[]];
  if (n < k) return [];
  return [...subsets(n - 1, k), ...subsets(n - 1, k - 1).map((s) => [...s, n - 1])];
}

function byQuestion(samples: readonly SampleRecord[]): SampleRecord[][] {
  const m = new Map<number, SampleRecord[]>();
  for (const s of samples) m.set(s.index, [...(m.get(s.index) ?? []), s]);
  return [...m.values()];
}

/** pass@k and maj@k by enumerating every k-subset of every question's samples. */
function reference(samples: readonly SampleRecord[], k: number) {
  let pass = 0;
  let maj = 0;
  const qs = byQuestion(samples);
  for (const q of qs) {
    const subs = subsets(q.length, k);
    let p = 0;
    let v = 0;
    for (const sub of subs) {
      const picked = sub.map((i) => q[i]!);
      if (picked.some((s) => s.ex === 1)) p++;
      const votes = new Map<string, { n: number; ex: number }>();
      for (const s of picked) {
        if (s.resultKey === undefined || s.format === 0) continue;
        const g = votes.get(s.resultKey) ?? { n: 0, ex: s.ex };
        g.n++;
        votes.set(s.resultKey, g);
      }
      if (votes.size === 0) continue;
      let top = 0;
      for (const g of votes.values()) top = Math.max(top, g.n);
      const tied = [...votes.values()].filter((g) => g.n === top);
      v += tied.reduce((a, g) => a + g.ex, 0) / tied.length;
    }
    pass += p / subs.length;
    maj += v / subs.length;
  }
  return { pass: pass / qs.length, maj: maj / qs.length };
}

async function stats(samples: SampleRecord[], extra: string[] = []) {
  const run = tempFile('run.json');
  writeRunFile(run, syntheticRunFile(samples));
  const out = tempFile('stats.json');
  const cli = await runCli(['stats', '--run', run, '--out', out, ...extra]);
  return { run, cli, json: cli.code === 0 ? readJson(out) : null };
}

describe('stats and compare on large valid runs', () => {
  it(
    'a small run: every pass@k and maj@k equals the enumeration of all k-subsets',
    async () => {
      const samples = syntheticSamples({ questions: 12, samples: 6, seed: 3 });
      const { cli, json } = await stats(samples);
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      for (let k = 1; k <= 6; k++) {
        const ref = reference(samples, k);
        expect(json.pass_at_k[String(k)], `pass@${k}`).toBeCloseTo(ref.pass, 12);
        // k < n is the exact expectation; k = n is one vote with a seeded tie-break (one of the tied answers)
        if (k < 6) expect(json.maj_at_k[String(k)], `maj@${k}`).toBeCloseTo(ref.maj, 12);
      }
      const qs = byQuestion(samples);
      expect(json.mean_ex).toBeCloseTo(
        qs.reduce((a, q) => a + q.filter((s) => s.ex).length / q.length, 0) / qs.length,
        12,
      );
    },
    LONG,
  );

  it(
    '500,000 samples (5,000 questions x 100) through stats and compare: exit 0, the counts and means of the samples',
    async () => {
      const a = syntheticSamples({ questions: 5000, samples: 100, seed: 1 });
      const { run: runA, cli, json } = await stats(a);
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      expect(json.questions).toBe(5000);
      expect(json.samples).toBe(500_000);
      const qa = byQuestion(a);
      const rate = (q: SampleRecord[]) => q.filter((s) => s.ex === 1).length / q.length;
      expect(json.mean_ex).toBeCloseTo(qa.reduce((s, q) => s + rate(q), 0) / 5000, 12);
      expect(json.pass_at_k['1']).toBeCloseTo(json.mean_ex, 12);
      expect(json.pass_at_k['100']).toBeCloseTo(qa.filter((q) => rate(q) > 0).length / 5000, 12);
      expect(json.frontier_share).toBeCloseTo(qa.filter((q) => rate(q) > 0 && rate(q) < 1).length / 5000, 12);
      for (const v of Object.values(json.maj_at_k) as number[]) expect(v).toBeGreaterThanOrEqual(0);

      const runB = tempFile('b.run.json');
      const b = syntheticSamples({ questions: 5000, samples: 100, seed: 2 });
      writeRunFile(runB, syntheticRunFile(b, 'other'));
      const out = tempFile('cmp.json');
      const cmp = await runCli(['compare', runA, runB, '--resamples', '200', '--out', out]);
      expect(cmp.stderr).toBe('');
      expect(cmp.code).toBe(0);
      const got = readJson(out);
      const qb = byQuestion(b);
      const want = { fixed: 0, broken: 0, both_right: 0, both_wrong: 0 };
      qa.forEach((q, i) => {
        const [ra, rb] = [rate(q) > 0.5, rate(qb[i]!) > 0.5];
        want[ra && rb ? 'both_right' : ra ? 'broken' : rb ? 'fixed' : 'both_wrong']++;
      });
      expect(got.questions).toBe(5000);
      expect(got.counts).toEqual(want);
    },
    LONG,
  );

  it(
    'one sample with reward 1e300: stats finishes with finite numbers and a bounded advantage histogram',
    async () => {
      const samples = syntheticSamples({
        questions: 10,
        samples: 1,
        seed: 1,
        reward: (s) => (s.index === 0 ? 1e300 : s.ex),
      });
      samples.find((s) => s.index === 1)!.ex = 1; // a second, ordinary non-zero advantage next to the huge one
      samples.find((s) => s.index === 1)!.reward = 1;
      const { cli, json } = await stats(samples);
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      const bins = json.grpo.advantage_histogram as Array<{ count: number; hi: number }>;
      expect(bins.length).toBeLessThanOrEqual(41);
      expect(bins.reduce((a, b) => a + b.count, 0)).toBe(10);
      expect(bins[bins.length - 1]!.hi).toBeGreaterThanOrEqual(1e300 / (1 + 1e-6));
      expect(json.mean_reward).toBeCloseTo(1e299, -290);
    },
    LONG,
  );

  it(
    '2,000 samples of one question: stats gives maj@k for every k (was a RangeError past 1,000)',
    async () => {
      const samples = syntheticSamples({ questions: 1, samples: 2000, seed: 5 });
      const { cli, json } = await stats(samples, ['--k', '1,2,1000,2000']);
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      const right = samples.filter((s) => s.ex === 1).length;
      expect(json.pass_at_k['1']).toBeCloseTo(right / 2000, 12);
      // maj@1 is the chance one random sample votes and is right
      expect(json.maj_at_k['1']).toBeCloseTo(right / 2000, 10);
      expect(json.maj_at_k['2000']).toBe(right > 0 ? 1 : 0);
    },
    LONG,
  );
});
