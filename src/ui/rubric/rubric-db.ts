/** The page's one connection to the rubrics database, shared by the rubric screen and the rubric runs. */
import { openRubricDb, type RubricDb } from '../../adapters/judge/idb-judge-cache.ts';

let db: Promise<RubricDb> | null = null;

export function rubricDb(): Promise<RubricDb> {
  db ??= openRubricDb().catch((err: unknown) => {
    db = null; // a later call tries again
    throw err;
  });
  return db;
}
