import path from 'node:path';
import { expect } from 'vitest';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { planReplay } from '../../src/core/run/replay.ts';
import type { EvalItem } from '../../src/core/types.ts';
import { birdPredictionFiles } from '../../bench/items.ts';
import { readSharedText, sharedData } from './shared-data.ts';

/** The mini-dev databases under ../shared/data/bird/databases. */
export const BIRD_DBS = new Set(['superhero', 'student_club', 'toxicology']);

/** The 13 real mini-dev prediction files as one run of 13 samples per question (file k = sample k). */
export function thirteenSampleRun(): EvalItem[] {
  const gold = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'gold.sql');
  const questions = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'q.json');
  const files = birdPredictionFiles();
  expect(files).toHaveLength(13);
  return files.flatMap((f, k) =>
    planReplay({
      predictions: { name: path.basename(f), text: readSharedText(path.relative(sharedData(), f)) },
      gold,
      questions,
    })
      .items.filter((it) => BIRD_DBS.has(it.dbId))
      .map((it) => ({ ...it, sample: k })),
  );
}
