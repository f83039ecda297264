/**
 * When two datasets hold the same files: the same kind, questions, gold and tables.json (by
 * sha256) and the same database for every db_id. Importing the same folder again under the same
 * name gives back the stored dataset instead of a duplicate; under another name it is stored and
 * the app says which dataset has the same files.
 */
import type { DatasetRecord } from './records.ts';

type Files = Pick<DatasetRecord, 'kind' | 'questionsFile' | 'goldFile' | 'databases' | 'tablesFile'>;

export function sameDatasetFiles(a: Files, b: Files): boolean {
  if (a.kind !== b.kind || a.questionsFile.sha256 !== b.questionsFile.sha256) return false;
  if ((a.goldFile?.sha256 ?? null) !== (b.goldFile?.sha256 ?? null)) return false;
  if ((a.tablesFile?.sha256 ?? null) !== (b.tablesFile?.sha256 ?? null)) return false;
  const ids = Object.keys(a.databases);
  return ids.length === Object.keys(b.databases).length && ids.every((id) => a.databases[id] === b.databases[id]);
}
