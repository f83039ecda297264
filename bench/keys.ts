/** The benchmark's keys: which are measured by `npm run bench`, and their targets. */
import { workerBudgetBytes } from '../workers/sql-bounds.ts';

/** Measured in Node: each is a finite number in the JSON written by `--out`. */
export const NODE_KEYS = [
  'eval_items',
  'eval_ratio_vs_native_1worker',
  'eval_ratio_vs_native_allworkers',
  'eval_items_per_s_allworkers',
  'eval_disagreements',
  'db_open_ms_per_mib',
  'peak_worker_rss_mib_per_db_mib',
  // The RL-shaped workload (bench/rl.ts) and the statistics at scale.
  'rl_eval_items',
  'rl_eval_ratio_vs_native_1worker',
  'rl_eval_ratio_vs_native_allworkers',
  'rl_gold_executions',
  'rl_pred_executions',
  'rl_disagreements',
  'stats_ms_per_100k_samples',
  'compare_ms_per_100k_samples',
  // Metric ts (bench/ts.ts).
  'ts_build_ms_per_db_mib',
  'ts_eval_ratio_vs_ex',
  // One worker's peak memory on the hostile workload (bench/hostile-probe.ts), against its budget.
  'worker_peak_rss_mib_hostile',
  // bench/parse.ts: time(4N) / time(N) of the inputs that were quadratic.
  'parse_linear_ratio',
  // bench/series.ts: the series view's numbers per 100,000 samples (40 steps x 1,534 x 8),
  // and the executions of a new 12,272-sample step on a series (beside series_step_samples and
  // series_step_new_sql_texts, the count it must equal).
  'series_build_ms_per_100k_samples',
  'series_step_new_executions',
] as const;

/**
 * Measured in headless Chromium through the built app (bench/browser.ts): finite numbers too,
 * unless /usr/bin/chromium is missing, when the bench skips them and says why.
 */
export const BROWSER_KEYS = [
  'browser_eval_items',
  'browser_eval_items_per_s',
  'browser_longest_task_ms',
  'browser_total_blocking_ms',
  'idb_write_samples_per_s',
  'idb_reopen_run_ms',
  // bench/browser-scale.ts: a run of 100,032 samples (1,563 questions x 64); --quick: 12,800 (200 x 64).
  'idb_write_samples_per_s_100k',
  'idb_reopen_run_ms_100k',
  'browser_rl_view_longest_task_ms_100k',
  // bench/report.ts: the offline report of a 100,000-sample run, its size and its opening from disk; --quick: 8,000 (500 x 16).
  'report_bytes_per_sample',
  'report_open_ms_100k',
  // bench/browser-scale.ts: the series view of 40 steps x 1,534 x 8 (490,880 samples),
  // opened, its curves drawn and its question grid scrolled; --quick: 10 x 200 x 8.
  'browser_series_view_longest_task_ms',
  // bench/playground.ts: the demo question's gold SQL typed key by key into the reward playground.
  'browser_playground_typing_longest_task_ms',
  // bench/gguf.ts: greedy decoding of the real stories260K.gguf on the CPU backend (always);
  // gen_tokens_per_s_gguf_webgpu joins it only when llama.cpp ran the layers on WebGPU.
  'gen_tokens_per_s_gguf_cpu',
] as const;

/** Every key of the issue; all are measured now. */
export const IMPLEMENTED_KEYS = [...NODE_KEYS, ...BROWSER_KEYS] as const;

export interface Target {
  text: string;
  met: (v: number) => boolean;
}

/** The budget of a worker holding the hostile workload's tiny database (docs/isolation.md). */
const HOSTILE_BUDGET_MIB = Math.ceil(workerBudgetBytes(64 * 1024) / 2 ** 20);

export const TARGETS: Record<string, Target> = {
  worker_peak_rss_mib_hostile: { text: `<= ${HOSTILE_BUDGET_MIB} (budget)`, met: (v) => v <= HOSTILE_BUDGET_MIB },
  eval_ratio_vs_native_1worker: { text: '<= 1.5', met: (v) => v <= 1.5 },
  eval_ratio_vs_native_allworkers: { text: '< 1.0', met: (v) => v < 1.0 },
  peak_worker_rss_mib_per_db_mib: { text: '<= 2.5', met: (v) => v <= 2.5 },
  eval_disagreements: { text: '= 0', met: (v) => v === 0 },
  browser_longest_task_ms: { text: '< 50', met: (v) => v < 50 },
  idb_write_samples_per_s: { text: '>= 10000', met: (v) => v >= 10_000 },
  idb_reopen_run_ms: { text: '< 500', met: (v) => v < 500 },
  rl_eval_ratio_vs_native_1worker: { text: '<= 0.25', met: (v) => v <= 0.25 },
  rl_eval_ratio_vs_native_allworkers: { text: '<= 0.15', met: (v) => v <= 0.15 },
  rl_disagreements: { text: '= 0', met: (v) => v === 0 },
  idb_write_samples_per_s_100k: { text: '>= 20000', met: (v) => v >= 20_000 },
  idb_reopen_run_ms_100k: { text: '< 500', met: (v) => v < 500 },
  browser_rl_view_longest_task_ms_100k: { text: '< 50', met: (v) => v < 50 },
  browser_series_view_longest_task_ms: { text: '< 50', met: (v) => v < 50 },
  browser_playground_typing_longest_task_ms: { text: '< 50', met: (v) => v < 50 },
  stats_ms_per_100k_samples: { text: '< 1500', met: (v) => v < 1500 },
  compare_ms_per_100k_samples: { text: '< 3000', met: (v) => v < 3000 },
  parse_linear_ratio: { text: '<= 6 (linear: 4, quadratic: 16)', met: (v) => v <= 6 },
  // 40 MiB per 100,000 samples.
  report_bytes_per_sample: { text: '<= 419 (40 MiB / 100,000)', met: (v) => v <= (40 * 2 ** 20) / 100_000 },
  report_open_ms_100k: { text: '< 5000', met: (v) => v < 5000 },
};
