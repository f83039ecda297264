/** `rubric`'s judge flags and its "nothing was scored" check. */
import { MAX_TIMER_MS } from '../core/eval/limits.ts';
import { WorkbenchError } from '../core/errors.ts';
import type { RubricSummary } from '../core/rubric/aggregate.ts';
import type { JudgeStats } from '../core/rubric/judge.ts';
import type { Aggregation } from '../core/rubric/score.ts';
import { bad } from './commands/flags.ts';

/** The OpenAI engine's own default: a local judge on a CPU can take minutes for one answer. */
export const DEFAULT_JUDGE_TIMEOUT_S = 600;

/** `--judge-timeout-s`: seconds one judge request may take (each retry gets as long again). */
export function judgeTimeoutFlag(v: string | undefined): number {
  if (v === undefined) return DEFAULT_JUDGE_TIMEOUT_S;
  const n = Number(v);
  const max = Math.floor(MAX_TIMER_MS / 1000);
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0 || n > max) throw bad('--judge-timeout-s', `expected a number of seconds in (0, ${max}], got ${JSON.stringify(v)}`);
  return n;
}

/**
 * Throws when the judge failed every call it made and so no sample got a score, with the
 * judge's counts; the table and --out are already written. A judge that answered but never in
 * the format is a result (`unparseable` verdicts), not a failure, and exits 0.
 */
export function assertJudgeScoredSomething(summary: RubricSummary, aggregations: readonly Aggregation[], stats: JudgeStats, samples: number): void {
  if (samples === 0 || aggregations.some((a) => summary[a].n > 0)) return;
  if (stats.calls === 0 || stats.errors < stats.calls) return;
  throw new WorkbenchError(
    'BAD_OPTION',
    `nothing was scored: none of the ${samples} sample(s) got a ${aggregations.join(', ')} score; ` +
      `the judge failed ${stats.errors} of ${stats.calls} call(s) and gave ${stats.malformed} malformed answer(s) ` +
      '(the reasons are in the table above and in --out): check the judge server, --judge-model and --judge-timeout-s',
    '--judge-url',
  );
}
