/**
 * Builds the embedded demo under public/demo/ (BIRD's layout, so the CLI runs on it too):
 *
 *   public/demo/city_library/city_library.sqlite   from scripts/demo/city_library.sql
 *   public/demo/questions.json                     from scripts/demo/questions.ts
 *   public/demo/gold.sql                           from the same questions (SQL<TAB>db_id)
 *   public/demo/predictions.json                   from scripts/demo/predictions.ts
 *   public/demo/predictions-hostile.json           idem
 *
 * Run with `npm run demo:build` (or `npx tsx scripts/build-demo.ts`). The outputs are committed;
 * tests/demo/demo-data.test.ts rebuilds everything in memory and checks they are up to date.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import initSqlJs from 'sql.js';
import { HOSTILE_PREDICTIONS, MODEL_PREDICTIONS, type DemoPrediction } from './demo/predictions.ts';
import { DEMO_DB_ID, DEMO_QUESTIONS } from './demo/questions.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEMO_DIR = path.join(REPO_ROOT, 'public', 'demo');
export const DEMO_SQL_SCRIPT = path.join(REPO_ROOT, 'scripts', 'demo', `${DEMO_DB_ID}.sql`);
/** Relative to DEMO_DIR. */
export const DEMO_DB_FILE = `${DEMO_DB_ID}/${DEMO_DB_ID}.sqlite`;

/** BIRD's separator between the SQL and the database name in a predictions value. */
const BIRD_SEPARATOR = '\t----- bird -----\t';

/** Runs the SQL script in a fresh in-memory database and returns the compacted file bytes. */
export async function buildDemoDatabase(): Promise<Uint8Array> {
  const SQL = await initSqlJs();
  const script = await readFile(DEMO_SQL_SCRIPT, 'utf8');
  const db = new SQL.Database();
  try {
    db.exec(script);
    const violations = db.exec('PRAGMA foreign_key_check');
    if (violations.length > 0) {
      throw new Error(`${DEMO_SQL_SCRIPT}: foreign key violations: ${JSON.stringify(violations[0]!.values)}`);
    }
    db.exec('VACUUM');
    return db.export();
  } finally {
    db.close();
  }
}

function birdPredictions(preds: readonly DemoPrediction[]): string {
  if (preds.length !== DEMO_QUESTIONS.length) {
    throw new Error(`${preds.length} predictions for ${DEMO_QUESTIONS.length} questions`);
  }
  const obj: Record<string, string> = {};
  preds.forEach((p, i) => {
    obj[String(i)] = `${p.sql}${BIRD_SEPARATOR}${DEMO_DB_ID}`;
  });
  // BIRD's own scripts write predictions with json.dump(..., indent=4).
  return JSON.stringify(obj, null, 4) + '\n';
}

/** The text files of the demo, by path relative to DEMO_DIR. */
export function demoTextFiles(): Record<string, string> {
  for (const q of DEMO_QUESTIONS) {
    if (q.SQL.includes('\t') || q.SQL.includes('\n'))
      throw new Error(`gold SQL must be one line without tabs: ${q.SQL}`);
  }
  const questions = DEMO_QUESTIONS.map((q, i) => ({
    question_id: i,
    db_id: DEMO_DB_ID,
    question: q.question,
    evidence: q.evidence,
    SQL: q.SQL,
    difficulty: q.difficulty,
  }));
  return {
    'questions.json': JSON.stringify(questions, null, 4) + '\n',
    'gold.sql': DEMO_QUESTIONS.map((q) => `${q.SQL}\t${DEMO_DB_ID}\n`).join(''),
    'predictions.json': birdPredictions(MODEL_PREDICTIONS),
    'predictions-hostile.json': birdPredictions(HOSTILE_PREDICTIONS),
  };
}

async function main(): Promise<void> {
  const bytes = await buildDemoDatabase();
  await mkdir(path.join(DEMO_DIR, DEMO_DB_ID), { recursive: true });
  await writeFile(path.join(DEMO_DIR, DEMO_DB_FILE), bytes);
  process.stdout.write(`wrote public/demo/${DEMO_DB_FILE} (${bytes.length} bytes)\n`);
  for (const [name, text] of Object.entries(demoTextFiles())) {
    await writeFile(path.join(DEMO_DIR, name), text);
    process.stdout.write(`wrote public/demo/${name}\n`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`build-demo: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
