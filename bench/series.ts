/**
 * Training runs, in Node:
 * - `series_build_ms_per_100k_samples`: the series view's numbers (per-step statistics, question
 *   dynamics, buckets, warnings, best step) of a synthetic series of 40 steps x 1,534 questions x
 *   8 samples (490,880; `--quick`: 10 x 200 x 8) computed as the analysis worker computes them,
 *   one step at a time from the lean samples (core/series/stats.ts), per 100,000 samples;
 * - `series_step_new_executions`: a new step of 12,272 samples (1,534 questions x 8; `--quick`:
 *   200 x 8) evaluated on a series of 3 earlier steps by `evaluateSeriesStep`, through the real
 *   sql.js pool on a small database: the samples executed, beside the step's samples
 *   (`series_step_samples`) and the SQL texts it holds that the series had not seen
 *   (`series_step_new_sql_texts`, the count the executions must equal).
 */
import path from 'node:path';
import { createNodeSqlPool } from '../src/adapters/node/sql-worker-host.ts';
import { DEFAULT_RUN_CONFIG } from '../src/core/run/types.ts';
import { reuseKey } from '../src/core/run/reuse.ts';
import { evaluateSeriesStep, SeriesVerdicts } from '../src/core/series/evaluate-step.ts';
import {
  seriesReportOf,
  seriesSample,
  stepCells,
  stepStats,
  type StepCells,
  type StepStats,
} from '../src/core/series/stats.ts';
import type { EvalItem } from '../src/core/types.ts';
import { makeTinyDb } from './synthetic-db.ts';
import { syntheticStep } from './synthetic-series.ts';

export function measureSeriesBuild(quick: boolean): {
  msPer100k: number;
  cpuMsPer100k: number;
  samples: number;
  steps: number;
} {
  const steps = quick ? 10 : 40;
  const questions = quick ? 200 : 1534;
  const perQuestion = 8;
  // Made before the clock starts: the worker reads them from IndexedDB, which is not what this measures.
  const all = Array.from({ length: steps }, (_, s) => syntheticStep(s + 1, questions, perQuestion));
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const stats: StepStats[] = [];
  const cells: Array<{ step: number; cells: StepCells }> = [];
  all.forEach((samples, s) => {
    const lean = samples.map(seriesSample);
    const scores = lean.map((x) => x.ex * 0.9);
    stats.push(stepStats({ step: (s + 1) * 25, samples: lean, trainerScores: scores, metrics: ['ex'] }));
    cells.push({ step: (s + 1) * 25, cells: stepCells(lean) });
  });
  seriesReportOf(stats, cells);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const n = steps * questions * perQuestion;
  // CPU time beside wall time: on a loaded machine the wall time counts other processes' turns.
  return {
    msPer100k: (ms * 100_000) / n,
    cpuMsPer100k: ((cpu.user + cpu.system) / 1000) * (100_000 / n),
    samples: n,
    steps,
  };
}

/** Step `s`'s items on the small database: sample k of question q takes variant (q + k + s) % 4 of its SQL; `newVariant` gives half the questions a fifth on their last sample. */
function stepItems(s: number, questions: number, perQuestion: number, dbId: string, newVariant: boolean): EvalItem[] {
  const items: EvalItem[] = [];
  for (let q = 0; q < questions; q++) {
    const id = (q % 200) + 1;
    for (let k = 0; k < perQuestion; k++) {
      const v = newVariant && k === perQuestion - 1 && q % 2 === 0 ? 4 : (q + k + s) % 4;
      items.push({
        index: q,
        questionId: q,
        dbId,
        difficulty: 'simple',
        // Each question its own gold; a prediction's variant, with a `;` on odd ones (reuse reads past it).
        goldSql: `SELECT name FROM t WHERE id = ${id} AND ${q} = ${q}`,
        predSql: `SELECT name FROM t WHERE id = ${id} AND ${v} = ${v}${v % 2 ? ';' : ''}`,
        extraction: { rule: 'sql-field', thinkStripped: false },
        sample: k,
      });
    }
  }
  return items;
}

export async function measureSeriesStep(
  tmp: string,
  quick: boolean,
  workers: number,
): Promise<{ keys: Record<string, number> }> {
  const questions = quick ? 200 : 1534;
  const perQuestion = 8;
  const dbId = 'series_tiny';
  makeTinyDb(path.join(tmp, 'series-db'), dbId);
  const pool = createNodeSqlPool({ dbRoot: path.join(tmp, 'series-db'), workers });
  const config = { ...DEFAULT_RUN_CONFIG, metrics: ['ex' as const], timeoutMs: 30_000 };
  const verdicts = new SeriesVerdicts();
  const seen = new Set<string>();
  const key = reuseKey;
  try {
    for (let s = 0; s < 3; s++) {
      const items = stepItems(s, questions, perQuestion, dbId, false);
      await evaluateSeriesStep(items, config, { executor: pool }, verdicts);
      for (const it of items) seen.add(key(it));
    }
    const step = stepItems(3, questions, perQuestion, dbId, true);
    const newTexts = new Set(step.filter((it) => !seen.has(key(it))).map(key)).size;
    const t0 = performance.now();
    const ev = await evaluateSeriesStep(step, config, { executor: pool }, verdicts);
    const ms = performance.now() - t0;
    if (ev.cancelled || ev.results.length !== step.length)
      throw new Error(`the new step was not evaluated whole: ${ev.results.length} of ${step.length}`);
    return {
      keys: {
        series_step_new_executions: ev.executed,
        series_step_samples: step.length,
        series_step_new_sql_texts: newTexts,
        series_step_from_earlier_steps: ev.fromEarlierSteps,
        series_step_ms: ms,
      },
    };
  } finally {
    await pool.dispose();
  }
}
