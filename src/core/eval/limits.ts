/**
 * Limits of the platform that a setting must stay within. Browsers and Node store a timer's
 * delay as a signed 32-bit number of milliseconds: a longer delay fires at once (Node warns
 * and uses 1 ms), so a timeout of 2^31 ms or more would time out every item immediately.
 */
import { WorkbenchError } from '../errors.ts';

/** The longest delay setTimeout honours: 2^31 - 1 ms, about 24.8 days. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Refuses a timeout the platform cannot time. `setting` names the option as the caller
 * knows it (`timeoutMs`, `--timeout-s`).
 */
export function checkTimerMs(ms: number, setting: string): void {
  if (!(typeof ms === 'number' && Number.isFinite(ms) && ms > 0 && ms <= MAX_TIMER_MS)) {
    throw new WorkbenchError(
      'BAD_OPTION',
      `must be a number of milliseconds > 0 and at most ${MAX_TIMER_MS.toLocaleString('en-US')} (2^31 - 1, the longest delay a timer can wait), got ${ms}`,
      setting,
    );
  }
}
