import type { SuiteSpec, SuiteStats } from '../ts/suite.ts';
import type { EvalItem, ItemResult } from '../types.ts';
import { OFFICIAL_TIMEOUT_MS, OFFICIAL_VES_ITERATIONS } from './constants.ts';
import type { ExRule } from '../compare/spider-ex.ts';

/** `ts`: test-suite accuracy with the row-order checks (docs/test-suite.md). */
export type MetricName = 'ex' | 'soft-f1' | 'r-ves' | 'ts';
export const METRICS: readonly MetricName[] = ['ex', 'soft-f1', 'r-ves', 'ts'];

/**
 * What one `SqlExecutor.evaluate` call is asked: not a run's settings (those are `RunConfig`,
 * src/core/run/types.ts, the one settings type from the form or the flags to here) but one
 * request to the executor. A run's requests come from its settings through `evalOptionsOf`
 * (src/core/run/score-run.ts), which adds what a call alone decides (`previewRows`); only calls
 * outside a run (the databases' facts, the executor's own tests) build one themselves.
 */
export interface EvalOptions {
  metrics: readonly MetricName[];
  /** Per item, covering prediction and gold together (official: 30 s). */
  timeoutMs: number;
  readOnly: boolean;
  /** R-VES repetitions per correct item (official: 100). */
  vesIterations: number;
  /** Rows of each result kept for display. */
  previewRows: number;
  /**
   * Reuse results that cannot differ (src/core/run/reuse.ts): a gold already executed on the
   * pristine database, identical items. Default on; the verdicts are the same either way.
   */
  reuse?: boolean;
  /** The test suite's settings for metric `ts` (default DEFAULT_SUITE_SPEC of src/core/ts/suite.ts). */
  suite?: SuiteSpec;
  /** Which execution match decides EX (docs/spider-rules.md); absent: BIRD's set equality. */
  exRule?: ExRule;
}

export const DEFAULT_EVAL_OPTIONS: EvalOptions = {
  metrics: ['ex', 'soft-f1'],
  timeoutMs: OFFICIAL_TIMEOUT_MS,
  readOnly: false,
  vesIterations: OFFICIAL_VES_ITERATIONS,
  previewRows: 0,
};

/** Rows shown with an item, when the executor was asked for them. */
export interface ItemPreview {
  predColumns: string[];
  goldColumns: string[];
  predRows: unknown[][];
  goldRows: unknown[][];
}

export type EvalEvent =
  | { type: 'item'; result: ItemResult; preview: ItemPreview | null; done: number; total: number }
  /** `quickChecked`: its whole-file check ran (false: these bytes passed it at an earlier opening). */
  | { type: 'db-loaded'; dbId: string; ms: number; sizeBytes: number; quickChecked?: boolean }
  | { type: 'worker-restarted'; reason: string }
  /** A database's test suite was built (or loaded from the suite cache: `cached`). */
  | { type: 'suite-ready'; dbId: string; cached: boolean; stats: SuiteStats; chosen: number[] }
  /** A database's test suite is being built: `done` of `total` candidate databases generated and run. */
  | { type: 'suite-progress'; dbId: string; done: number; total: number }
  /** An item was handed to a worker (progress names a slow one: "running item #1334 (db) for 22 s"). */
  | { type: 'item-started'; index: number; questionId: number; dbId: string; sample: number };

/** The part of AbortSignal the core uses (the core is compiled without DOM types). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
}

/** Port: runs prediction and gold SQL of each item and compares them. */
export interface SqlExecutor {
  evaluate(
    items: readonly EvalItem[],
    options: EvalOptions,
    hooks?: { signal?: AbortSignalLike; onEvent?: (e: EvalEvent) => void },
  ): Promise<ItemResult[]>;
  dispose(): Promise<void>;
}
