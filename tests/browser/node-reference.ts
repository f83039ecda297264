/**
 * The reference the browser is checked against: the same demo files evaluated in Node by the
 * same core, through the Node worker pool (worker_threads), with the page's options.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import type { MetricName } from '../../src/core/eval/executor.ts';
import { summarize, type Summary } from '../../src/core/eval/summary.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { pairPredictions, parsePredictions } from '../../src/core/formats/predictions.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import type { EvalItem, ItemResult, Question } from '../../src/core/types.ts';

export const DEMO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'public', 'demo');
const METRICS: MetricName[] = ['ex', 'soft-f1'];

/** The demo's questions, and its items paired with a predictions file of public/demo. */
async function demoItems(predictionsFile: string): Promise<{ questions: Question[]; items: EvalItem[] }> {
  const read = (name: string) => readFile(path.join(DEMO_ROOT, name), 'utf8');
  const questions = parseQuestions(await read('questions.json'), 'questions.json');
  const gold = parseGoldSql(await read('gold.sql'), 'gold.sql');
  const preds = parsePredictions(await read(predictionsFile), predictionsFile);
  return { questions, items: pairPredictions(preds, gold, questions, predictionsFile).items };
}

export async function evaluateDemoInNode(
  predictionsFile: string,
  options: { timeoutS: number; readOnly?: boolean },
): Promise<{ results: ItemResult[]; summary: Summary }> {
  const { items } = await demoItems(predictionsFile);
  const pool = createNodeSqlPool({ dbRoot: DEMO_ROOT, workers: 2 });
  try {
    const results = await pool.evaluate(items, {
      metrics: METRICS,
      timeoutMs: options.timeoutS * 1000,
      readOnly: options.readOnly ?? false,
      vesIterations: 0,
      previewRows: 0,
    });
    return { results, summary: summarize(results, METRICS) };
  } finally {
    await pool.dispose();
  }
}

/**
 * The demo's predictions evaluated in Node (`evaluateDemoInNode`), each result with the SQL, gold
 * SQL and completion of its item, as a stored sample has them, and its question.
 */
export async function demoSamplesInNode(
  predictionsFile: string,
  options: { timeoutS: number },
): Promise<{ sample: ItemResult & { sql: string; goldSql: string; completion?: string }; question: Question }[]> {
  const { questions, items } = await demoItems(predictionsFile);
  const { results } = await evaluateDemoInNode(predictionsFile, options);
  return results.map((r) => {
    const item = items.find((i) => i.index === r.index)!;
    return {
      sample: { ...r, sql: item.predSql, goldSql: item.goldSql, completion: item.completion },
      question: questions[r.index]!,
    };
  });
}
