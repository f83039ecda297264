/**
 * One step of a training run scored: the use case both hosts call for every step (the app's
 * series service, src/app/series-service.ts, and the CLI's `series`). The host reads and pairs
 * the step's file and supplies the executor, the question texts, the verdict cache and the
 * series' verdicts so far; this puts the items under the dataset's EX rule, evaluates them with
 * the core's `evaluateSeriesStep` (the run recipe, executing only SQL the series has not executed
 * before) and turns the results into the step run's sample records and execution counts.
 */
import type { ExRule } from '../core/compare/spider-ex.ts';
import type { Summary } from '../core/eval/summary.ts';
import { runFormula, toSampleRecords, type ScoreRunPorts } from '../core/run/score-run.ts';
import type { RunConfig, SampleRecord } from '../core/run/types.ts';
import { evaluateSeriesStep, type SeriesVerdicts } from '../core/series/evaluate-step.ts';
import type { EvalItem, ItemResult } from '../core/types.ts';
import { underRule } from './ex-rule.ts';

interface ScoredSeriesStep {
  /** The step's items and the configuration under the EX rule (Spider's gives each question Spider's hardness). */
  items: EvalItem[];
  config: RunConfig;
  /** In item order; only what finished when `cancelled`. */
  results: ItemResult[];
  /** One per item, with the configuration's reward formula; empty when `cancelled`. */
  records: SampleRecord[];
  summary: Summary;
  /** Executed here; reused from earlier steps or within the step; from the verdict cache across runs. */
  executions: { executed: number; reused: number; fromCache: number };
  /** `sqlite_version()` of the engine that gave the new verdicts; null when nothing was executed. */
  sqliteVersion: string | null;
  cancelled: boolean;
}

/**
 * Scores `items` (one step, as paired by the host) under `config` and the dataset's EX rule,
 * remembering the new verdicts in `verdicts` for the steps after it.
 */
export async function scoreSeriesStep(
  stepItems: readonly EvalItem[],
  stepConfig: RunConfig,
  rule: ExRule,
  ports: ScoreRunPorts,
  verdicts: SeriesVerdicts,
): Promise<ScoredSeriesStep> {
  const { config, items } = underRule(stepConfig, [...stepItems], rule);
  const ev = await evaluateSeriesStep(items, config, ports, verdicts);
  return {
    items,
    config,
    results: ev.results,
    records: ev.cancelled ? [] : toSampleRecords(items, ev.results, runFormula(config)),
    summary: ev.summary,
    executions: { executed: ev.executed, reused: ev.fromEarlierSteps + ev.reusedInStep, fromCache: ev.fromCache },
    sqliteVersion: ev.sqliteVersion,
    cancelled: ev.cancelled,
  };
}
