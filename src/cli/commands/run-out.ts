/**
 * `eval --run-out`: the run header from the CLI's inputs. Checksums are computed here, at the
 * Node edge (Node's SHA-256, node:crypto, fed by the core's `sha256OfPieces`: streamed so
 * multi-GB databases do not sit in memory).
 */
import { randomUUID, createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FileRef, RunHeader, RunQuestion } from '../../core/run/types.ts';
import type { EvalItem, ItemResult, Question } from '../../core/types.ts';
import { runConfigOf, type EvalArgs } from './eval-args.ts';
import { maxOf } from '../../core/util/numbers.ts';
import { sha256OfPieces } from '../../core/util/sha256.ts';
import { WorkbenchError } from '../../core/errors.ts';

/** sha256 of a file, streamed, with Node's SHA-256 (node:crypto) through the core's one route. */
export async function sha256File(file: string): Promise<string> {
  return (await sha256OfPieces(() => createHash('sha256'), createReadStream(file))).sha256;
}

export async function fileRef(file: string): Promise<FileRef> {
  const [sha256, st] = await Promise.all([sha256File(file), stat(file)]);
  return { name: path.basename(file), sha256, bytes: st.size };
}

/**
 * `sql.js 1.17.0`: its package.json is not exported, so it is read next to the resolved entry
 * (dist/). `sql.js-1.8` (the version check's engine, an npm alias) gives `sql.js 1.8.0`.
 */
export function executorName(pkgName: 'sql.js' | 'sql.js-1.8' = 'sql.js'): string {
  try {
    const entry = createRequire(import.meta.url).resolve(pkgName);
    const pkg = JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    return `sql.js ${pkg.version}`;
  } catch {
    return pkgName === 'sql.js' ? 'sql.js' : 'sql.js (older)';
  }
}

const dbFile = (dbRoot: string, db: string) => path.join(dbRoot, db, `${db}.sqlite`);

/**
 * The sha256 of each database the items name that exists under `dbRoot`, taken before the run:
 * the run file records the databases the run read, and `checkDatabasesUnchanged` compares them
 * after it (a database replaced mid-run was recorded with the new hash).
 */
export async function hashDatabases(dbRoot: string, dbIds: Iterable<string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const db of [...new Set(dbIds)].sort()) {
    const file = dbFile(dbRoot, db);
    if (!(await stat(file).catch(() => null))?.isFile()) continue;
    out.set(db, await sha256File(file));
  }
  return out;
}

/** Hashes the databases again after the run: a changed one is an error naming it (the results mix two databases). */
export async function checkDatabasesUnchanged(
  dbRoot: string,
  before: ReadonlyMap<string, string>,
  shownDbRoot = dbRoot,
): Promise<void> {
  for (const [db, sha] of before) {
    const now = await sha256File(dbFile(dbRoot, db)).catch(() => 'missing');
    if (now !== sha) {
      throw new WorkbenchError(
        'MISMATCH',
        `database ${db} changed during the run (${path.join(shownDbRoot, db, `${db}.sqlite`)}: sha256 ${sha.slice(0, 12)}… before, ${now === 'missing' ? 'gone' : `${now.slice(0, 12)}…`} after): ` +
          'its items may have read either version, so no run file was written; run the evaluation again on an unchanging copy',
        '--db-root',
      );
    }
  }
}

/**
 * The run header. `hashed`: the databases' sha256 taken before the run (hashDatabases), which
 * the caller checked after it (checkDatabasesUnchanged); without it they are hashed now.
 */
export async function evalRunHeader(
  args: EvalArgs,
  items: readonly EvalItem[],
  results: readonly ItemResult[],
  hashed?: ReadonlyMap<string, string>,
): Promise<RunHeader> {
  const present = [...new Set(results.filter((r) => r.status !== 'missing-db').map((r) => r.dbId))].sort();
  const databases: Record<string, string> = {};
  for (const db of present) databases[db] = hashed?.get(db) ?? (await sha256File(dbFile(args.dbRoot, db)));
  const gold = await fileRef(args.gold);
  const questions = args.dataset ? await fileRef(args.dataset) : gold;
  const perQuestion = new Map<number, number>();
  for (const it of items) perQuestion.set(it.index, (perQuestion.get(it.index) ?? 0) + 1);
  const now = new Date().toISOString();
  const datasetName = path.basename(args.dataset ?? args.gold);
  return {
    id: randomUUID(),
    name: path.basename(args.predictions),
    createdAt: now,
    updatedAt: now,
    status: 'done',
    source: { kind: 'replay', predictions: await fileRef(args.predictions) },
    dataset: { id: datasetName, name: datasetName, questions, gold, databases },
    subset: {
      description: 'every gold question with a prediction',
      indices: [...perQuestion.keys()].sort((a, b) => a - b),
    },
    config: runConfigOf(args),
    samplesPerQuestion: Math.max(1, maxOf([...perQuestion.values()])),
    executor: executorName(),
  };
}

/** The texts of the run's questions, from the questions file. */
export function runQuestions(items: readonly Pick<EvalItem, 'index'>[], questions: readonly Question[]): RunQuestion[] {
  const indices = [...new Set(items.map((i) => i.index))].sort((a, b) => a - b);
  return indices.map((index) => {
    const q = questions[index]!;
    return { index, questionId: q.questionId, dbId: q.dbId, question: q.question, evidence: q.evidence };
  });
}
