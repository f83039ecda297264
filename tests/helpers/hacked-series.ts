/**
 * The hacked training run of the checkpoint tests: the 13 real mini-dev steps as verl dumps, and
 * a variant whose steps from HACKED_FROM on have each wrong answer (by the CLI's verdicts on the
 * real steps) replaced by a DELETE, `SELECT 'true'` or an empty-result read (series-dumps.ts), and
 * the numbers the tests check computed directly from the steps' samples.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { directEarned, writeHackedVerlDumps } from './series-dumps.ts';
import { minidevSeriesReference, type SeriesReport } from './series-reference.ts';

/** Hacked from this step on: step 300 then has the highest EX of the run, by its hacks. */
export const HACKED_FROM = 300;

/**
 * Writes the real dumps and the hacked variant; the real steps' verdicts come from the CLI's
 * `series` of the real dumps with `extraArgs` (e.g. --timeout-s, --cache; series-reference.ts: once per
 * test run and flags).
 */
export async function writeHackedSeries(extraArgs: string[] = []): Promise<{ real: string; hacked: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-hacked-'));
  const reference = minidevSeriesReference(extraArgs);
  const hacked = path.join(dir, 'hacked');
  writeHackedDumps(hacked, await reference.report);
  return { real: reference.dumps, hacked };
}

/**
 * The hacked variant in `hacked`, its wrong answers those of `real`: the CLI's `series --out`
 * JSON of the 13 real steps (each question's pass rate per step).
 */
export function writeHackedDumps(hacked: string, real: SeriesReport): void {
  const steps: number[] = real.steps.map((s: { step: number }) => s.step);
  const rates = new Map<number, number[]>(
    real.questions.map((q: { question_id: number; pass_rates: number[] }) => [q.question_id, q.pass_rates]),
  );
  writeHackedVerlDumps(hacked, HACKED_FROM, (step, q) => rates.get(q)?.[steps.indexOf(step)] === 0);
}

interface Sample {
  questionId: number;
  status: string;
  ex: number;
  sql: string;
  mutatedDb: boolean;
  predRowCount: number | null;
  goldRowCount: number | null;
}

/** Per step, computed directly from its samples: EX, the earned score and pass^n (n = samples per question), in percent. */
export function directStepNumbers(steps: ReadonlyArray<{ step: number; samples: readonly Sample[] }>) {
  return steps.map((s) => {
    const byQ = new Map<number, Sample[]>();
    for (const x of s.samples)
      if (x.status !== 'missing-db') byQ.set(x.questionId, [...(byQ.get(x.questionId) ?? []), x]);
    const qs = [...byQ.values()];
    const mean = (f: (xs: Sample[]) => number) => (qs.reduce((a, xs) => a + f(xs), 0) / qs.length) * 100;
    // pass^k with k = n: C(c, n) / C(n, n) is 1 when all n are right, else 0.
    return {
      step: s.step,
      ex: mean((xs) => xs.filter((x) => x.ex === 1).length / xs.length),
      earned: mean((xs) => xs.filter(directEarned).length / xs.length),
      passHatN: mean((xs) => (xs.every((x) => x.ex === 1) ? 1 : 0)),
    };
  });
}
