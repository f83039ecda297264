/**
 * The numbers every front end must agree on: the official evaluator's values, the app's limits
 * and the key of a sample within a run (`evalOptionsOf` in run/score-run.ts turns a run's
 * settings, `RunConfig`, into the executor's options).
 */

/** Official per-item timeout (prediction and gold together), in seconds. */
export const OFFICIAL_TIMEOUT_S = 30;
export const OFFICIAL_TIMEOUT_MS = OFFICIAL_TIMEOUT_S * 1000;
/** Official R-VES timing repetitions per correct item. */
export const OFFICIAL_VES_ITERATIONS = 100;
/** Largest per-item timeout the app's forms accept, in seconds. */
export const APP_MAX_TIMEOUT_S = 600;

/** `index/sample`: what identifies a sample within a run (a missing sample number is 0). */
export function sampleKey(x: { readonly index: number; readonly sample?: number }): string {
  return `${x.index}/${x.sample ?? 0}`;
}
