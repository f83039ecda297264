/**
 * Which benchmark a folder is, from its paths alone (pure: tested in Node on the real
 * layouts), and which of its files can be the questions or the gold. Shown in the import
 * review before anything is stored:
 * - BIRD: `dev_tables.json`, `mini_dev_*.json`, `dev_databases/` (a dev or mini-dev download);
 * - Spider: `tables.json` with `dev_gold.sql` / `train_gold.sql` / `train_spider.json`;
 * - KaggleDBQA: `KaggleDBQA_tables.json` or `examples/<db>_test.json`.
 */
import { baseName, isDatabasePath, isJunk, normalizePath } from './classify-files.ts';

type Layout = 'bird' | 'spider' | 'kaggledbqa';

export interface LayoutGuess {
  layout: Layout | null;
  /** The importer's kind for it (KaggleDBQA is imported as custom). */
  kind: 'bird' | 'spider' | 'custom';
  /** The files that gave it away. */
  evidence: string[];
}

/** Folders of databases, predictions and other outputs: their .json and .sql are never questions or gold. */
const NOT_QUESTION_FOLDERS =
  /(^|\/)(dev_databases|train_databases|test_databases|databases|database|test_database|predictions|expected|corrections|outputs?)\//i;
const NOT_QUESTION_NAMES = /(tables|column_meaning|tied_append|mysql|postgresql|_gold)[^/]*$/i;
/** BIRD's prediction files (`predict_dev.json`, `predict_mini_dev_<model>.json`). */
const PREDICTIONS = /^predict_/i;

/** True when `path` could be the questions file of an import (not a schema, prediction, or a database's own file). */
export function isQuestionCandidate(path: string, dbDirs: ReadonlySet<string> = new Set()): boolean {
  const p = normalizePath(path);
  if (isJunk(p) || !/\.(jsonl?|parquet)$/i.test(p)) return false;
  if (NOT_QUESTION_FOLDERS.test(p) || dbDirs.has(p.slice(0, p.lastIndexOf('/')))) return false;
  const name = baseName(p);
  return (
    !NOT_QUESTION_NAMES.test(name) && !PREDICTIONS.test(name) && !/^train/i.test(name) && !/_fewshot\.json$/i.test(name)
  );
}

/** True when `path` could be the gold file (a .sql outside the databases, not another dialect). */
export function isGoldCandidate(path: string): boolean {
  const p = normalizePath(path);
  return (
    !isJunk(p) && /\.sql$/i.test(p) && !NOT_QUESTION_FOLDERS.test(p) && !/(mysql|postgresql|schema)/i.test(baseName(p))
  );
}

/** Folders `x/<db>` that hold `<db>.sqlite` (Spider keeps its schema.sql there). */
export function databaseDirs(paths: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const raw of paths) {
    const p = normalizePath(raw);
    if (!isDatabasePath(p)) continue;
    const dir = p.slice(0, Math.max(0, p.lastIndexOf('/')));
    if (baseName(dir) === baseName(p).replace(/\.[^.]*$/, '')) out.add(dir);
  }
  return out;
}

export function detectLayout(paths: readonly string[]): LayoutGuess {
  const files = paths.map(normalizePath).filter((p) => !isJunk(p));
  const named = (re: RegExp) => files.filter((p) => re.test(baseName(p)));
  const kaggle = [
    ...named(/^KaggleDBQA_tables\.json$/i),
    ...files.filter((p) => /(^|\/)examples\/[^/]+_test\.json$/i.test(p)).slice(0, 2),
  ];
  if (kaggle.length > 0) return { layout: 'kaggledbqa', kind: 'custom', evidence: kaggle };
  const bird = [
    ...named(/^dev_tables\.json$/i),
    ...named(/^mini_dev_[^/]*\.(json|sql)$/i).slice(0, 2),
    ...files.filter((p) => /(^|\/)dev_databases\//i.test(p)).slice(0, 1),
  ];
  if (bird.length > 0) return { layout: 'bird', kind: 'bird', evidence: bird };
  const spider =
    named(/^tables\.json$/i).length > 0
      ? [...named(/^tables\.json$/i), ...named(/^(dev_gold\.sql|train_gold\.sql|train_spider\.json)$/i)]
      : [];
  if (spider.length > 1) return { layout: 'spider', kind: 'spider', evidence: spider };
  return { layout: null, kind: 'custom', evidence: [] };
}

export const LAYOUT_LABEL: Record<Layout, string> = { bird: 'BIRD', spider: 'Spider', kaggledbqa: 'KaggleDBQA' };

/** Questions per database whose file is not among the ones given. */
export function missingDatabases(
  text: string,
  found: ReadonlySet<string>,
): { dbId: string; questions: number }[] | null {
  const trimmed = text.trimStart();
  let rows: unknown[];
  try {
    rows = trimmed.startsWith('[')
      ? (JSON.parse(trimmed) as unknown[])
      : trimmed
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as unknown);
  } catch {
    return null;
  }
  const counts = new Map<string, number>();
  for (const r of rows) {
    const id = r && typeof r === 'object' ? (r as { db_id?: unknown }).db_id : undefined;
    if (typeof id === 'string' && !found.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([dbId, questions]) => ({ dbId, questions }));
}
