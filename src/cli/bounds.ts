/**
 * Upper bounds of the numeric flags that size the work: worker threads and time limits.
 * Checked at parse time, so a bad value fails before any file is read.
 */
import { availableParallelism } from 'node:os';
import { MAX_TIMER_MS } from '../core/eval/limits.ts';
import { bad } from './flags.ts';

/** More threads than this only share the same cores and multiply the memory (one sql.js heap each). */
export const WORKERS_PER_CORE = 4;

export function maxWorkers(): number {
  return WORKERS_PER_CORE * availableParallelism();
}

/** `--workers N`: null when absent (the caller uses the number of cores). */
export function workersFlag(v: string | undefined): number | null {
  if (v === undefined) return null;
  const n = Number(v);
  const cap = maxWorkers();
  if (v.trim() === '' || !Number.isInteger(n) || n <= 0)
    throw bad('--workers', `expected a positive integer, got ${JSON.stringify(v)}`);
  if (n > cap) {
    throw bad(
      '--workers',
      `${n} is more than ${cap} (${WORKERS_PER_CORE} x the ${availableParallelism()} cores of this machine): use at most ${cap}`,
    );
  }
  return n;
}

/**
 * `--timeout-s` in ms must fit a timer; with R-VES the time limit of the timing repetitions is
 * timeout x iterations, which must fit too.
 */
export function checkTimerFlags(timeoutS: number, rves: { iterations: number } | null): void {
  const ms = timeoutS * 1000;
  if (ms > MAX_TIMER_MS) {
    throw bad(
      '--timeout-s',
      `${timeoutS} s is longer than a timer can wait (${MAX_TIMER_MS} ms, about 24.8 days): use at most ${Math.floor(MAX_TIMER_MS / 1000)}`,
    );
  }
  if (rves && ms * rves.iterations > MAX_TIMER_MS) {
    throw bad(
      '--timeout-s',
      `with --metrics r-ves the limit of the timing runs is --timeout-s x --ves-iterations = ${timeoutS} s x ${rves.iterations} = ` +
        `${ms * rves.iterations} ms, longer than a timer can wait (${MAX_TIMER_MS} ms): lower --timeout-s or --ves-iterations`,
    );
  }
}
