/**
 * Limits of the platform that the evaluation's settings must respect.
 *
 * MAX_TIMER_MS: setTimeout (browsers and Node) stores its delay in a signed 32-bit integer; a
 * longer delay is taken as 1 ms, so a "30-day" timeout fires at once and every item times out.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
