/**
 * gpt-4o's BIRD mini-dev predictions on `superhero`, with every tenth replaced by
 * `DELETE FROM <the first table its gold query reads>`: the input of the R-VES leak.
 * Built at test time from ../shared/data into a temporary folder (never copied into the repo).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EvalItem } from '../../src/core/types.ts';
import { sharedData } from './shared-data.ts';

const SEP = '\t----- bird -----\t';

export interface WritingPredictions {
  dir: string;
  predictions: string;
  gold: string;
  dataset: string;
  dbRoot: string;
  items: EvalItem[];
  /** Positions of the DELETE predictions. */
  deletes: number[];
}

export function superheroWithDeletes(dbId = 'superhero', every = 10): WritingPredictions {
  const preds = JSON.parse(
    readFileSync(sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json'), 'utf8'),
  ) as Record<string, string>;
  const goldLines = readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'utf8')
    .split('\n')
    .filter((l) => l.trim());
  const questions = JSON.parse(readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite.json'), 'utf8')) as {
    db_id: string;
    question_id: number;
    difficulty: string;
  }[];
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-writing-'));
  const outPreds: Record<string, string> = {};
  const outGold: string[] = [];
  const outQuestions: unknown[] = [];
  const items: EvalItem[] = [];
  const deletes: number[] = [];
  questions.forEach((q, i) => {
    if (q.db_id !== dbId) return;
    const n = outGold.length;
    const goldSql = goldLines[i]!.split('\t')[0]!;
    let predSql = preds[String(i)]!.split(SEP)[0]!;
    if (n % every === 0) {
      predSql = `DELETE FROM ${/\bFROM\s+(\w+)/i.exec(goldSql)![1]}`;
      deletes.push(n);
    }
    outPreds[String(n)] = `${predSql}${SEP}${dbId}`;
    outGold.push(goldLines[i]!);
    outQuestions.push(q);
    items.push({
      index: n,
      questionId: q.question_id,
      dbId,
      difficulty: q.difficulty as EvalItem['difficulty'],
      predSql,
      goldSql,
      extraction: { rule: 'sql-field', thinkStripped: false },
    });
  });
  const file = (name: string, text: string) => {
    writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  return {
    dir,
    items,
    deletes,
    predictions: file('predictions.json', JSON.stringify(outPreds)),
    gold: file('gold.sql', `${outGold.join('\n')}\n`),
    dataset: file('dataset.json', JSON.stringify(outQuestions)),
    dbRoot: sharedData('bird', 'databases'),
  };
}
