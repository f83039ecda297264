/** `rubric`'s judge flags and its "nothing was scored" check. */
import { MAX_TIMER_MS } from '../core/eval/limits.ts';
import { WorkbenchError } from '../core/errors.ts';
import type { RubricSummary } from '../core/rubric/aggregate.ts';
import type { JudgeStats } from '../core/rubric/judge.ts';
import type { Aggregation } from '../core/rubric/score.ts';
import { bad, numberFlag } from './flags.ts';

/** Judge calls: a few retries of a bad answer, a few parallel requests (more only hammer the judge). */
const MAX_JUDGE_RETRIES = 10;
const MAX_JUDGE_CONCURRENCY = 64;

/** The OpenAI engine's own default: a local judge on a CPU can take minutes for one answer. */
export const DEFAULT_JUDGE_TIMEOUT_S = 600;

/** `--judge-timeout-s`: seconds one judge request may take (each retry gets as long again). */
function judgeTimeoutFlag(v: string | undefined): number {
  if (v === undefined) return DEFAULT_JUDGE_TIMEOUT_S;
  const n = Number(v);
  const max = Math.floor(MAX_TIMER_MS / 1000);
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0 || n > max)
    throw bad('--judge-timeout-s', `expected a number of seconds in (0, ${max}], got ${JSON.stringify(v)}`);
  return n;
}

/** The flags of every judge call (`rubric` and `rubric check`): retries, sampling, concurrency, timeout. */
export function judgeCallFlags(values: Record<string, string | boolean | string[] | undefined>) {
  const v = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  return {
    retries: numberFlag('--retries', v('retries'), 2, { min: 0, max: MAX_JUDGE_RETRIES, integer: true }),
    temperature: numberFlag('--temperature', v('temperature'), 0, { min: 0, max: 2 }),
    maxTokens: numberFlag('--max-tokens', v('max-tokens'), 512, { min: 1, max: 1_048_576, integer: true }),
    concurrency: numberFlag('--concurrency', v('concurrency'), 4, {
      min: 1,
      max: MAX_JUDGE_CONCURRENCY,
      integer: true,
    }),
    httpRetries: numberFlag('--http-retries', v('http-retries'), 4, { min: 0, max: MAX_JUDGE_RETRIES, integer: true }),
    judgeTimeoutS: judgeTimeoutFlag(v('judge-timeout-s')),
  };
}

/**
 * Throws when no sample got a score: the judge failed every call, or answered but never in the
 * format (every verdict unparseable), or both; with the judge's counts. The table and --out
 * are already written. Exit 2, as the README says: zeros of a judge that never gave a verdict
 * are no result.
 */
export function assertJudgeScoredSomething(
  summary: RubricSummary,
  aggregations: readonly Aggregation[],
  stats: JudgeStats,
  samples: number,
): void {
  if (samples === 0 || aggregations.some((a) => summary[a].n > 0)) return;
  const why =
    stats.calls > 0 && stats.errors >= stats.calls
      ? `the judge failed ${stats.errors} of ${stats.calls} call(s)`
      : `the judge answered, but ${stats.malformed} answer(s) were malformed and no verdict could be read (${stats.errors} failed call(s) of ${stats.calls})`;
  throw new WorkbenchError(
    'BAD_OPTION',
    `nothing was scored: none of the ${samples} sample(s) got a ${aggregations.join(', ')} score; ${why} ` +
      '(the reasons are in the table above and in --out): check the judge server, --judge-model (a model that follows the JSON format), --max-tokens and --judge-timeout-s',
    '--judge-url',
  );
}
