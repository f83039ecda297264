/**
 * Which file of an import is what, from paths alone (pure: tested in Node). Users hand over
 * a folder as downloaded (BIRD: `dev.json` or `mini_dev_sqlite.json` + gold `.sql` +
 * `dev_databases/<db>/<db>.sqlite`; Spider: `dev.json` + `dev_gold.sql` + `database/<db>/<db>.sqlite`),
 * so the rules follow those layouts and refuse to guess when two files could be the questions.
 */
import { WorkbenchError } from '../errors.ts';

interface Classified {
  questions: string;
  gold: string | null;
  /** db_id -> path of its database file. */
  databases: Map<string, string>;
  /** Files that play no part (schemas, descriptions, other dialects...). */
  ignored: string[];
  /**
   * db_id -> the other paths of its database of the same rank as the chosen one (two
   * `<db>/<db>.sqlite`, or two stray copies): the import checks that they hold the same bytes
   * (Spider's release has database/ and test_database/), and refuses them when they do not.
   */
  twins: Map<string, string[]>;
  /**
   * The dataset's tables.json (`dev_tables.json` or `tables.json`, outside the database folders):
   * the one in the questions file's folder, else the only one; null when there is none or
   * several elsewhere (which belongs to the questions cannot be told).
   */
  tables: string | null;
}

const DB_EXT = /\.(sqlite|sqlite3|db)$/i;
const JUNK = /(^|\/)(__MACOSX\/|\._|\.DS_Store$|Thumbs\.db$)/;
/** Folders whose .json/.sql files belong to databases, never to the question set. */
const DB_FOLDERS = /(^|\/)(dev_databases|train_databases|test_databases|databases|database|test_database)\//i;
/** JSON files of BIRD/Spider downloads that are not question files. */
const NOT_QUESTIONS = /(tables|column_meaning|tied_append|mysql|postgresql|_gold)[^/]*$/i;
/** Question files in order of preference when a download holds several. */
const PREFERRED_QUESTIONS = ['mini_dev_sqlite.json', 'mini_dev_sqlite.jsonl', 'dev.json', 'dev.jsonl'];

export function normalizePath(path: string): string {
  return path.replace(/\\/g, '/').replace(/^(\.\/|\/)+/, '');
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function stem(path: string): string {
  return baseName(path).replace(/\.[^.]*$/, '');
}

function dirName(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

export function isJunk(path: string): boolean {
  return JUNK.test(path);
}

export function isDatabasePath(path: string): boolean {
  return DB_EXT.test(path) && !isJunk(path);
}

/** `x/<db>/<db>.sqlite` -> `<db>`; a loose `<name>.sqlite` -> `<name>`. */
export function dbIdOf(path: string): string {
  return stem(path);
}

/**
 * Classifies the paths of one import. `questionsPath`/`goldPath` override the choice when a
 * user names the files. Throws MISSING_FILE when there is no question file and BAD_FORMAT
 * when several could be and none is preferred.
 */
export function classifyFiles(
  paths: readonly string[],
  choose: { questionsPath?: string; goldPath?: string } = {},
): Classified {
  const files = paths.map(normalizePath).filter((p) => !isJunk(p));
  const databases = new Map<string, string>();
  const ignored: string[] = [];
  const dbDirs = new Set<string>();
  for (const p of files) {
    if (!isDatabasePath(p)) continue;
    const id = dbIdOf(p);
    const prev = databases.get(id);
    // `<db>/<db>.sqlite` wins over a stray copy elsewhere under the same name.
    if (!prev || (baseName(dirName(p)) === id && baseName(dirName(prev)) !== id)) databases.set(id, p);
    // Only a `<db>/<db>.sqlite` folder belongs to its database (Spider keeps schema.sql there).
    if (baseName(dirName(p)) === id) dbDirs.add(dirName(p));
  }
  const twins = new Map<string, string[]>();
  const inLayout = (p: string, id: string) => baseName(dirName(p)) === id;
  for (const [id, p] of databases)
    for (const other of files) {
      if (!isDatabasePath(other) || dbIdOf(other) !== id || other === p) continue;
      ignored.push(other);
      if (inLayout(other, id) === inLayout(p, id)) twins.set(id, [...(twins.get(id) ?? []), other]);
    }

  const outsideDbs = (p: string) => !DB_FOLDERS.test(p) && !dbDirs.has(dirName(p));
  let questions: string | undefined;
  if (choose.questionsPath) {
    questions = files.find((p) => p === normalizePath(choose.questionsPath!));
    if (!questions)
      throw new WorkbenchError(
        'MISSING_FILE',
        'the chosen questions file is not among the files given',
        choose.questionsPath,
      );
  } else {
    const candidates = files.filter(
      (p) =>
        /\.(jsonl?|parquet)$/i.test(p) &&
        outsideDbs(p) &&
        !NOT_QUESTIONS.test(baseName(p)) &&
        !/^train/i.test(baseName(p)),
    );
    for (const name of PREFERRED_QUESTIONS) {
      const hits = candidates.filter((p) => baseName(p).toLowerCase() === name);
      // The shallowest copy: a folder may hold the download and an unpacked sub-folder.
      if (hits.length > 0) {
        questions = hits.sort((a, b) => a.split('/').length - b.split('/').length)[0];
        break;
      }
    }
    if (!questions && candidates.length === 1) questions = candidates[0];
    if (!questions && candidates.length > 1) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `several files could be the questions (${candidates.join(', ')}): import only one of them, or choose it`,
        'import',
      );
    }
    if (!questions) {
      throw new WorkbenchError(
        'MISSING_FILE',
        'no questions file (.json, .jsonl or .parquet, e.g. dev.json or mini_dev_sqlite.json) among the files given',
        'import',
      );
    }
  }

  let gold: string | null = null;
  if (choose.goldPath) {
    gold = files.find((p) => p === normalizePath(choose.goldPath!)) ?? null;
    if (!gold)
      throw new WorkbenchError('MISSING_FILE', 'the chosen gold file is not among the files given', choose.goldPath);
  } else {
    const sqls = files.filter((p) => /\.sql$/i.test(p) && outsideDbs(p) && !/(mysql|postgresql)/i.test(baseName(p)));
    const q = stem(questions);
    const prefer = [
      `${q}_gold.sql`,
      `${q}.sql`,
      `${q.replace(/_sqlite$/, '')}_sqlite_gold.sql`,
      'dev_gold.sql',
      'dev.sql',
    ];
    for (const name of prefer) {
      const hit = sqls.find(
        (p) => baseName(p).toLowerCase() === name.toLowerCase() && dirName(p) === dirName(questions!),
      );
      if (hit) {
        gold = hit;
        break;
      }
    }
    if (!gold) {
      const golds = sqls.filter((p) => /gold/i.test(baseName(p)) && !/^train/i.test(baseName(p)));
      if (golds.length === 1) gold = golds[0]!;
    }
  }
  const tablesFiles = files.filter((p) => /^(dev_)?tables\.json$/i.test(baseName(p)) && outsideDbs(p));
  const tables =
    tablesFiles.find((p) => dirName(p) === dirName(questions!)) ?? (tablesFiles.length === 1 ? tablesFiles[0]! : null);
  for (const p of files) if (p !== questions && p !== gold && p !== tables && !isDatabasePath(p)) ignored.push(p);
  return { questions, gold, databases, ignored, twins, tables };
}
