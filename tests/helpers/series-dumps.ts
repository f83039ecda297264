/**
 * A training run made of real completions: the 13 BIRD mini-dev prediction files (sorted by
 * path) as 13 verl validation dumps, step 100, 200, ..., 1300, written as verl's
 * `RayPPOTrainer._dump_generations` writes `<validation_data_dir>/<global_steps>.jsonl` (one JSON
 * object per line: `input`, `output`, `score`, `step`; docs/formats.md). Only the 140 questions
 * whose database is here (student_club, superhero, toxicology) are dumped.
 * - `input`: a chat prompt holding the question's text and evidence (how harness rows are mapped);
 * - `output`: the file's SQL for the question in a ```sql fence, so extraction yields exactly the
 *   SQL `eval` reads from the BIRD file;
 * - `score`: the stand-in trainer's reward, exact match of the SQL text with the gold after
 *   collapsing whitespace and case (a reward a trainer might log; not EX).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { readSharedText, sharedData } from './shared-data.ts';

export const PRESENT_DBS = ['student_club', 'superhero', 'toxicology'];
export const MINIDEV_GOLD = sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql');
export const MINIDEV_QUESTIONS = sharedData('bird', 'minidev', 'mini_dev_sqlite.json');
export const DB_ROOT = sharedData('bird', 'databases');

export const PREDICTION_FILES = ['TA_output', 'sql_output_kg']
  .map((d) => sharedData('bird', 'predictions', d))
  .flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith('.json'))
      .map((f) => path.join(d, f)),
  )
  .sort();

interface MiniDevQuestion {
  question_id: number;
  db_id: string;
  question: string;
  evidence: string;
  SQL: string;
}
export const questions = JSON.parse(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json')) as MiniDevQuestion[];

const norm = (s: string) => s.replace(/\s+/g, ' ').trim().replace(/;$/, '').toLowerCase();

export const stepOf = (i: number) => (i + 1) * 100;

/** The verl lines of prediction file `i` (0-based) as step stepOf(i), for the questions on `dbs`. */
export function verlLines(i: number, dbs: readonly string[] = PRESENT_DBS): string[] {
  const preds = JSON.parse(readFileSync(PREDICTION_FILES[i]!, 'utf8')) as Record<string, string>;
  const step = stepOf(i);
  return questions.flatMap((q, index) => {
    if (!dbs.includes(q.db_id)) return [];
    const sql = (preds[String(index)] ?? '').split(BIRD_SEPARATOR)[0]!.trim();
    const input = `<|im_start|>system\nYou write SQLite for the database ${q.db_id}.<|im_end|>\n<|im_start|>user\nQuestion: ${q.question}\nEvidence: ${q.evidence}<|im_end|>\n<|im_start|>assistant\n`;
    const output = `\`\`\`sql\n${sql}\n\`\`\``;
    return [JSON.stringify({ input, output, score: norm(sql) === norm(q.SQL) ? 1.0 : 0.0, step })];
  });
}

/** Writes `<step>.jsonl` for the given prediction files into `dir`; returns the paths. */
export function writeVerlDumps(dir: string, which: readonly number[], dbs: readonly string[] = PRESENT_DBS): string[] {
  mkdirSync(dir, { recursive: true });
  return which.map((i) => {
    const file = path.join(dir, `${stepOf(i)}.jsonl`);
    writeFileSync(file, verlLines(i, dbs).join('\n') + '\n');
    return file;
  });
}
