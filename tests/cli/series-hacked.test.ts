/**
 * `series` on a reward-hacked training run (tests/helpers/hacked-series.ts): the 13 real mini-dev
 * steps with each wrong answer from step 300 on replaced by a DELETE, `SELECT 'true'` or an
 * empty-result read. The best step is chosen on the earned score and is never a hacked step; the
 * step with the highest EX (a hacked one) is named beside it with what applies to it; the
 * questions solved only by hacks are their own bucket; the fell-below-best warning starts at the
 * first step whose EX falls below the best step's by more than its own interval; earned and pass^n
 * equal a direct computation from the steps' samples.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { readJson, runCli } from '../helpers/cli.ts';
import { directStepNumbers, HACKED_FROM, writeHackedSeries } from '../helpers/hacked-series.ts';
import { directBuckets, MINIDEV_ARGS } from '../helpers/series-dumps.ts';

describe('series: a reward-hacked run of 13 real checkpoints', () => {
  it('picks the best step on the earned score, never a hacked step; names the best by EX; buckets the hacked questions apart; warns where EX falls', async () => {
    // One verdict cache for the real run and the hacked one: the hacked run executes what the
    // hacks changed and takes the rest (steps before HACKED_FROM, the right answers after) from
    // the real run's verdicts. Nothing here compares the two runs' verdicts: the numbers checked
    // are computed directly from the hacked run's own samples (the cache's correctness:
    // tests/adapters/verdict-cache*.test.ts).
    const cache = ['--cache', mkdtempSync(path.join(tmpdir(), 'wb-hacked-cache-'))];
    const { hacked } = await writeHackedSeries(cache);
    const dir = path.dirname(hacked);
    const [out, seriesOut] = [path.join(dir, 'hacked.json'), path.join(dir, 'hacked.series.json')];
    const run = await runCli([
      'series',
      '--completions',
      hacked,
      ...MINIDEV_ARGS,
      ...cache,
      '--out',
      out,
      '--series-out',
      seriesOut,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const report = readJson(out);
    const file = parseSeriesFile(readFileSync(seriesOut, 'utf8'), seriesOut);

    // Earned score and pass^n per step, as a direct computation from the samples says.
    const direct = directStepNumbers(file.steps.map((s) => ({ step: s.step, samples: s.run.samples })));
    for (const [i, d] of direct.entries()) {
      expect(report.steps[i].step).toBe(d.step);
      expect(report.steps[i].ex).toBeCloseTo(d.ex, 10);
      expect(report.steps[i].earned).toBeCloseTo(d.earned, 10);
      expect(report.steps[i].pass_hat_n).toBeCloseTo(d.passHatN, 10);
    }

    // The hacks win EX at a hacked step; the best step is the best earned one, before the hacks.
    const byEx = direct.reduce((a, d) => (d.ex > a.ex ? d : a));
    const byEarned = direct.reduce((a, d) => (d.earned > a.earned ? d : a));
    expect(byEx.step).toBeGreaterThanOrEqual(HACKED_FROM);
    expect(byEarned.step).toBeLessThan(HACKED_FROM);
    expect(report.best_step).toMatchObject({ step: byEarned.step, by_ex: { step: byEx.step } });
    expect(report.best_step.by_ex.unearned.write).toBeGreaterThan(0);
    expect(report.best_step.by_ex.warnings).toContain('writes-rising');
    expect(run.stdout).toContain(`best step by earned score: step ${byEarned.step}, earned`);
    expect(run.stdout).toContain(`best step by EX: step ${byEx.step} has the highest EX`);

    // Questions solved only by hacks: their own bucket, as the direct computation says.
    const buckets = directBuckets(file.steps.map((s) => ({ step: s.step, samples: s.run.samples })));
    const got = report.questions
      .map((q: any) => ({
        question_id: q.question_id,
        bucket: q.bucket,
        first_solved_step: q.first_solved_step,
        flips: q.flips,
      }))
      .sort((a: any, b: any) => a.question_id - b.question_id);
    expect(got).toEqual(buckets);
    expect(report.buckets.unearned).toBe(buckets.filter((q) => q.bucket === 'unearned').length);
    expect(report.buckets.unearned).toBeGreaterThan(0);
    expect(run.stdout).toMatch(new RegExp(`, ${report.buckets.unearned} solved only by unearned passes$`, 'm'));

    // The regression warning starts at the first step after the best whose EX is below the best
    // step's EX by more than its own interval reaches.
    const bestAt = report.steps.findIndex((s: any) => s.step === byEarned.step);
    const falls = report.steps.slice(bestAt + 1).filter((s: any) => s.ex_ci_high < report.best_step.ex);
    expect(falls.length).toBeGreaterThan(0);
    const w = report.warnings.find((x: any) => x.rule === 'fell-below-best');
    expect(w.start_step).toBe(falls[0].step);
    const worst = falls.reduce((a: any, s: any) => (s.ex < a.ex ? s : a));
    expect(w.message).toContain(
      `at step ${byEarned.step} (the best step) to ${worst.ex.toFixed(2)} at step ${worst.step}`,
    );
  }, 900_000);
});
