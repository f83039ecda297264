/**
 * Executes a real BIRD prediction file over mini-dev on the databases that are present, with
 * the product's worker pool, and returns each item with the execution facts the rubric's SQL
 * checks read (including the column counts the pool reports in its previews).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { pairPredictions, parsePredictions } from '../../../src/core/formats/predictions.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import type { SqlExecutionFacts } from '../../../src/core/rubric/sql-checks.ts';
import type { EvalItem, ItemResult, Question } from '../../../src/core/types.ts';
import { sharedData } from '../../helpers/shared-data.ts';
import { BIRD_DBS_HERE } from './schema.ts';

export interface BirdRunItem {
  item: EvalItem;
  question: Question;
  result: ItemResult;
  facts: SqlExecutionFacts;
}

export function miniDev(): { gold: ReturnType<typeof parseGoldSql>; questions: Question[] } {
  return {
    gold: parseGoldSql(
      readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'utf8'),
      'mini_dev_sqlite_gold.sql',
    ),
    questions: parseQuestions(
      readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite.json'), 'utf8'),
      'mini_dev_sqlite.json',
    ),
  };
}

/** `file` relative to bird/predictions; only items whose database is present are run. */
export async function runBirdPredictions(
  file: string,
  extraItems: (items: EvalItem[]) => EvalItem[] = (x) => x,
): Promise<BirdRunItem[]> {
  const { gold, questions } = miniDev();
  const preds = parsePredictions(readFileSync(sharedData('bird', 'predictions', file), 'utf8'), path.basename(file));
  const { items } = pairPredictions(preds, gold, questions, path.basename(file));
  const here = extraItems(items.filter((i) => (BIRD_DBS_HERE as readonly string[]).includes(i.dbId)));
  const columns = new Map<number, { pred: number; gold: number }>();
  const pool = createNodeSqlPool({ dbRoot: sharedData('bird', 'databases'), workers: 2 });
  try {
    const results = await pool.evaluate(
      here,
      { metrics: ['ex'], timeoutMs: 30_000, readOnly: false, vesIterations: 1, previewRows: 1 },
      {
        onEvent: (e) => {
          if (e.type === 'item' && e.preview)
            columns.set(e.result.index, { pred: e.preview.predColumns.length, gold: e.preview.goldColumns.length });
        },
      },
    );
    return results.map((result) => {
      const item = here.find((i) => i.index === result.index)!;
      const c = columns.get(result.index);
      const predFailed = result.status !== 'ok' && !(result.error ?? '').startsWith('gold:');
      return {
        item,
        question: questions[result.index]!,
        result,
        facts: {
          status: result.status,
          ex: result.ex,
          error: result.error,
          mutatedDb: result.mutatedDb,
          predColumnCount: c && !predFailed ? c.pred : null,
          goldColumnCount: c && result.status === 'ok' ? c.gold : null,
        },
      };
    });
  } finally {
    await pool.dispose();
  }
}
