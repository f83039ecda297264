import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is tests/helpers/shared-data.ts). */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const sharedRoot = resolve(repoRoot, '..', 'shared', 'data');

/**
 * Absolute path of a file under ../shared/data (real benchmark data, never copied into the repo).
 * Throws instead of letting a test skip silently when the data is not there.
 */
export function sharedData(...parts: string[]): string {
  const path = resolve(sharedRoot, ...parts);
  if (!existsSync(path)) {
    throw new Error(
      `../shared/data is missing: ${path} does not exist. Real-data tests read BIRD and Spider files from ${sharedRoot}.`,
    );
  }
  return path;
}

/** UTF-8 text of a file under ../shared/data. */
export function readSharedText(...parts: string[]): string {
  return readFileSync(sharedData(...parts), 'utf8');
}

/** A question of a BIRD questions file (mini-dev's mini_dev_sqlite.json, the demo's questions.json). */
export interface BirdQuestionRow {
  question_id: number;
  db_id: string;
  question: string;
  evidence: string;
  SQL: string;
  difficulty?: string;
}

/** The questions of a BIRD questions file. */
export function readBirdQuestions(file: string): BirdQuestionRow[] {
  return JSON.parse(readFileSync(file, 'utf8')) as BirdQuestionRow[];
}

/** BIRD mini-dev's questions (mini_dev_sqlite.json). */
export function minidevQuestions(): BirdQuestionRow[] {
  return readBirdQuestions(sharedData('bird', 'minidev', 'mini_dev_sqlite.json'));
}

/** A dataset's files as the CLI names them: `--gold`, `--dataset` (none when null), `--db-root`. */
export interface DatasetFiles {
  gold: string;
  dataset: string | null;
  dbRoot: string;
}

/** BIRD mini-dev's gold and questions files, and the folder of the databases here. */
export function minidevFiles(): DatasetFiles {
  return {
    gold: sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
    dataset: sharedData('bird', 'minidev', 'mini_dev_sqlite.json'),
    dbRoot: sharedData('bird', 'databases'),
  };
}

/** The CLI's flags naming a dataset's files: `--gold`, `--dataset` (left out when null), `--db-root`. */
export function datasetFlags(files: DatasetFiles): string[] {
  return [
    '--gold',
    files.gold,
    ...(files.dataset === null ? [] : ['--dataset', files.dataset]),
    '--db-root',
    files.dbRoot,
  ];
}

/**
 * The CLI's flags for BIRD mini-dev with the databases here: `--gold`, `--dataset`, `--db-root`,
 * each replaceable (a test's own gold, dataset or database folder; `dataset: null` leaves
 * `--dataset` out).
 */
export function minidevFlags(files: Partial<DatasetFiles> = {}): string[] {
  return datasetFlags({ ...minidevFiles(), ...files });
}

/** Spider dev's gold and questions files, and the folder of its databases here. */
export function spiderFiles(): DatasetFiles {
  return {
    gold: sharedData('spider', 'dev_gold.sql'),
    dataset: sharedData('spider', 'dev.json'),
    dbRoot: sharedData('spider'),
  };
}

/** The CLI's flags for Spider dev with the databases here, each replaceable (e.g. another `dbRoot`). */
export function spiderFlags(files: Partial<DatasetFiles> = {}): string[] {
  return datasetFlags({ ...spiderFiles(), ...files });
}

/** A file of the embedded demo (public/demo, in the repository); no name: the folder, its databases' root. */
export function demoFile(name = ''): string {
  return resolve(repoRoot, 'public', 'demo', name);
}

/** The CLI's flags for the embedded demo: its gold, questions and database folder, each replaceable. */
export function demoFlags(files: Partial<DatasetFiles> = {}): string[] {
  return datasetFlags({
    gold: demoFile('gold.sql'),
    dataset: demoFile('questions.json'),
    dbRoot: demoFile(),
    ...files,
  });
}

/** GPT-4o's chain-of-thought predictions for mini-dev (BIRD's TA_output): a real predictions file. */
export function gpt4oMinidevPredictions(): string {
  return sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json');
}

/** `eval` of GPT-4o's mini-dev predictions on mini-dev with one worker, then `extra`: CLI arguments. */
export function gpt4oEvalArgs(...extra: string[]): string[] {
  return ['eval', '--predictions', gpt4oMinidevPredictions(), ...minidevFlags(), '--workers', '1', ...extra];
}
