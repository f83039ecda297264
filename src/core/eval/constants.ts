/**
 * The numbers every front end must agree on: the official evaluator's values, the app's limits,
 * the key of a sample within a run, and the evaluation options of a run's configuration.
 */
import type { EvalOptions, MetricName } from './executor.ts';

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

/** What a run's configuration says about evaluation. */
export interface EvalConfig {
  metrics: readonly MetricName[];
  timeoutMs: number;
  readOnly: boolean;
  vesIterations: number;
}

/** The executor's options for a run's configuration; rows are kept for display only when asked. */
export function evalOptionsOf(config: EvalConfig, previewRows = 0): EvalOptions {
  return {
    metrics: [...config.metrics],
    timeoutMs: config.timeoutMs,
    readOnly: config.readOnly,
    vesIterations: config.vesIterations,
    previewRows,
  };
}
