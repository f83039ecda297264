/**
 * A corrected-gold overlay: a second gold file whose SQL replaces the official gold of the
 * questions it names, so the same predictions can be scored against both. Accepted shapes:
 * - a JSON array of objects with `question_id` (number or numeric string) and `SQL` (BIRD's
 *   question files, BIRD's revised dev, the Arcwise-Plat mini-dev corrections); `db_id` is
 *   checked when present; other fields (question, evidence, `original_SQL`...) are ignored;
 * - JSONL, one such object per line;
 * - a BIRD gold `.sql` file (`SQL<TAB>db_id` per line), which replaces by gold position.
 */
import { WorkbenchError } from '../errors.ts';
import type { EvalItem } from '../types.ts';
import { parseGoldSql, pythonLines, stripBom } from './gold.ts';

interface OverlayEntry {
  sql: string;
  dbId: string | null;
}

export interface GoldOverlay {
  name: string;
  /** `question-id`: keyed by question id; `position`: keyed by 0-based gold line. */
  keyedBy: 'question-id' | 'position';
  entries: ReadonlyMap<number, OverlayEntry>;
}

function entryOf(value: unknown, where: string): [number, OverlayEntry] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `expected an object with question_id and SQL, got ${JSON.stringify(value)?.slice(0, 60)}`,
      where,
    );
  }
  const o = value as Record<string, unknown>;
  const rawId = o.question_id;
  const id =
    typeof rawId === 'number' ? rawId : typeof rawId === 'string' && /^\s*\d+\s*$/.test(rawId) ? Number(rawId) : NaN;
  if (rawId === undefined) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `the object has no question_id (its keys: ${Object.keys(o).slice(0, 6).join(', ') || 'none'}): each entry is {"question_id": ..., "SQL": ...}`,
      where,
    );
  }
  if (!Number.isInteger(id))
    throw new WorkbenchError(
      'BAD_FORMAT',
      `question_id must be an integer (or a numeric string), got ${JSON.stringify(rawId)}`,
      where,
    );
  const sql = o.SQL ?? o.sql;
  if (typeof sql !== 'string' || sql.trim() === '')
    throw new WorkbenchError('BAD_FORMAT', `question ${id}: no "SQL" string (the corrected gold query)`, where);
  const dbId = typeof o.db_id === 'string' ? o.db_id : null;
  return [id, { sql, dbId }];
}

export function parseGoldOverlay(text: string, name: string): GoldOverlay {
  const body = stripBom(text);
  const trimmed = body.trimStart();
  const entries = new Map<number, OverlayEntry>();
  const put = ([id, e]: [number, OverlayEntry], where: string) => {
    if (entries.has(id))
      throw new WorkbenchError(
        'BAD_FORMAT',
        `question ${id} appears twice; keep one corrected gold per question`,
        where,
      );
    entries.set(id, e);
  };
  if (trimmed.startsWith('[')) {
    let data: unknown;
    try {
      data = JSON.parse(body);
    } catch (err) {
      throw new WorkbenchError('BAD_JSON', `not valid JSON: ${(err as Error).message}`, name);
    }
    (data as unknown[]).forEach((v, i) => put(entryOf(v, `${name}[${i}]`), `${name}[${i}]`));
  } else if (trimmed.startsWith('{')) {
    // One JSON object that is not itself an entry (`{"123": "SELECT ..."}`, `{"corrections": [...]}`): say what is expected.
    let whole: unknown = undefined;
    try {
      whole = JSON.parse(body);
    } catch {
      // JSON Lines (several objects), read below.
    }
    if (whole !== null && typeof whole === 'object' && !Array.isArray(whole) && !('question_id' in whole)) {
      const keys = Object.keys(whole)
        .slice(0, 5)
        .map((k) => JSON.stringify(k))
        .join(', ');
      throw new WorkbenchError(
        'BAD_FORMAT',
        `is one JSON object (keys ${keys || 'none'}), not an overlay: give a JSON array [{"question_id": ..., "SQL": ...}, ...], JSON Lines with one such object per line, or a gold .sql`,
        name,
      );
    }
    pythonLines(body).forEach((line, i) => {
      if (line.trim() === '') return;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch (err) {
        throw new WorkbenchError('BAD_JSON', `line is not JSON: ${(err as Error).message}`, `${name}:${i + 1}`);
      }
      put(entryOf(v, `${name}:${i + 1}`), `${name}:${i + 1}`);
    });
  } else {
    parseGoldSql(body, name).forEach((g, i) => entries.set(i, { sql: g.sql, dbId: g.dbId }));
    return { name, keyedBy: 'position', entries };
  }
  if (entries.size === 0)
    throw new WorkbenchError(
      'BAD_FORMAT',
      'the overlay names no question: expected objects with question_id and SQL',
      name,
    );
  return { name, keyedBy: 'question-id', entries };
}

interface OverlaidItems {
  /** Every item, with the corrected gold where the overlay has one. */
  items: EvalItem[];
  /** Positions (item order) of the items whose gold SQL the overlay changed. */
  changedGold: number[];
  /** Positions (item order) of the items the overlay names (same SQL or not). */
  covered: number[];
}

/** Applies an overlay to a run's items; a database that disagrees is an error naming the question. */
export function overlayItems(items: readonly EvalItem[], overlay: GoldOverlay): OverlaidItems {
  const changedGold: number[] = [];
  const covered: number[] = [];
  const out = items.map((it, at) => {
    const e = overlay.entries.get(overlay.keyedBy === 'position' ? it.index : it.questionId);
    if (!e) return it;
    if (e.dbId !== null && e.dbId !== it.dbId) {
      throw new WorkbenchError(
        'MISMATCH',
        `question ${it.questionId}: the overlay's gold is for database ${e.dbId}, the run's for ${it.dbId}; is this overlay for the same dataset?`,
        overlay.name,
      );
    }
    covered.push(at);
    if (e.sql === it.goldSql) return it;
    changedGold.push(at);
    return { ...it, goldSql: e.sql };
  });
  if (covered.length === 0 && items.length > 0) {
    throw new WorkbenchError(
      'MISMATCH',
      `the overlay names none of the run's ${new Set(items.map((i) => i.index)).size} questions (by ${overlay.keyedBy})`,
      overlay.name,
    );
  }
  return { items: out, changedGold, covered };
}

/**
 * An id (or gold position) of no question of the dataset would silently correct nothing: the
 * overlay is of another dataset or version. Refused, naming them. `known`: the dataset's
 * question ids (keyed by question id) or its gold positions (keyed by position).
 */
export function checkOverlayKnown(overlay: GoldOverlay, known: ReadonlySet<number>, datasetName: string): void {
  const unknown = [...overlay.entries.keys()].filter((k) => !known.has(k));
  if (unknown.length === 0) return;
  const what = overlay.keyedBy === 'position' ? 'gold line position' : 'question id';
  throw new WorkbenchError(
    'MISMATCH',
    `${unknown.length} ${what}(s) of the overlay are no question of ${datasetName}: ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ', …' : ''}; ` +
      'keep only the corrections of this dataset (an overlay of another dataset or version corrects nothing here)',
    overlay.name,
  );
}
