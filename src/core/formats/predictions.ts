import { WorkbenchError } from '../errors.ts';
import type { ExtractOptions } from '../sql/extract-sql.ts';
import type { EvalItem, Extraction, ExtractionRule, GoldEntry, Prediction, Question } from '../types.ts';
import { pyStrip, pythonLines, stripBom } from './gold.ts';
import { predictionsFromRecords } from './prediction-records.ts';
import { describeValue, isRecord, parseJsonText } from './questions.ts';
import { jsonLineRecords } from './records.ts';

/** Separator between SQL and db name in BIRD prediction values (tab, dashes, " bird ", tab). */
export const BIRD_SEPARATOR = '\t----- bird -----\t';

function rule(r: ExtractionRule): Extraction {
  return { rule: r, thinkStripped: false };
}

/**
 * Top-level `[key, raw value text]` pairs of a JSON object, in file order. JS objects put
 * integer-like keys first in numeric order while the official evaluator iterates a Python dict
 * (file order), so the order has to come from the text. `text` must already be valid JSON.
 */
function topLevelEntries(text: string): Array<[string, string]> {
  const entries: Array<[string, string]> = [];
  let i = text.indexOf('{') + 1;
  const ws = (): void => {
    while (' \t\n\r'.includes(text[i]!)) i++;
  };
  const skipString = (): void => {
    for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
    i++;
  };
  for (;;) {
    ws();
    if (text[i] === '}') return entries;
    const keyStart = i;
    skipString();
    const key = JSON.parse(text.slice(keyStart, i)) as string;
    ws();
    i++; // ':'
    ws();
    const valueStart = i;
    let depth = 0;
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (c === '"') {
        skipString();
        i--;
      } else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        if (depth === 0) break;
        depth--;
      } else if (c === ',' && depth === 0) break;
    }
    entries.push([key, text.slice(valueStart, i).trim()]);
    if (text[i] === ',') i++;
  }
}

/** One BIRD value, read exactly as the official evaluator reads it. */
function birdPrediction(value: unknown, position: number, key: string): Prediction {
  if (typeof value !== 'string')
    return { position, questionId: null, sql: ' ', extraction: rule('bird-non-string'), key };
  const parts = value.split(BIRD_SEPARATOR);
  if (parts.length === 2)
    return {
      position,
      questionId: null,
      sql: parts[0]!,
      extraction: rule('bird-separator'),
      key,
      dbName: parts[1]!.trim(),
    };
  return { position, questionId: null, sql: pyStrip(value), extraction: rule('bird-no-separator'), key };
}

function parseBirdJson(body: string, fileName: string): Prediction[] {
  const parsed = parseJsonText(body, fileName);
  if (!isRecord(parsed)) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `expected a BIRD predictions object {"0": "SQL\\t----- bird -----\\tdb_id", ...}, found ${describeValue(parsed)}`,
      fileName,
    );
  }
  // Python dict semantics for repeated keys: the last value wins, at the first key's position.
  const slotOfKey = new Map<string, number>();
  const values: unknown[] = [];
  const keys: string[] = [];
  for (const [key, raw] of topLevelEntries(body)) {
    const slot = slotOfKey.get(key);
    if (slot === undefined) {
      slotOfKey.set(key, values.length);
      values.push(JSON.parse(raw));
      keys.push(key);
    } else values[slot] = JSON.parse(raw);
  }
  return values.map((v, position) => birdPrediction(v, position, keys[position]!));
}

/**
 * Plain SQL, one prediction per line, `position` = line index. A tab ends the SQL: the rest
 * of the line is a db name, as in gold files. An empty line in the middle is a
 * prediction with empty SQL (it keeps later lines aligned with gold); blank lines at the end are
 * ignored, like a final newline.
 */
function parseSqlLines(body: string, fileName: string): Prediction[] {
  const lines = pythonLines(body);
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  if (lines.length === 0) throw new WorkbenchError('BAD_FORMAT', 'the file contains no predictions', fileName);
  // A line in gold format (`SQL<TAB>db_id`, e.g. Spider's dev_gold.sql used as predictions)
  // contributes the SQL before its last tab; the db name is ignored, as in BIRD JSON.
  return lines.map((line, position) => {
    const tab = line.lastIndexOf('\t');
    const sql = (tab >= 0 ? line.slice(0, tab) : line).trim();
    return { position, questionId: null, sql, extraction: rule('sql-line') };
  });
}

function looksLikeJsonlLine(line: string): boolean {
  try {
    const v: unknown = JSON.parse(line);
    return isRecord(v) && 'question_id' in v;
  } catch {
    return false;
  }
}

/**
 * Parses a predictions file, detecting its format: `.jsonl` → JSON Lines; `.sql` → one SQL per
 * line; text starting with `{` → JSON Lines if its first line alone is an object with
 * `question_id`, else a BIRD predictions object; `[` → error; other non-JSON text → one SQL per
 * line, unless the name ends in `.json`.
 */
export function parsePredictions(text: string, fileName: string, options: ExtractOptions = {}): Prediction[] {
  const body = stripBom(text);
  const name = fileName.toLowerCase();
  const trimmed = body.trim();
  if (trimmed === '') throw new WorkbenchError('BAD_FORMAT', 'the predictions file is empty', fileName);

  if (name.endsWith('.jsonl')) return predictionsFromRecords(jsonLineRecords(body, fileName), fileName, options);
  if (name.endsWith('.sql')) return parseSqlLines(body, fileName);
  if (trimmed.startsWith('{')) {
    const firstLine = trimmed.slice(0, (trimmed + '\n').indexOf('\n'));
    if (looksLikeJsonlLine(firstLine))
      return predictionsFromRecords(jsonLineRecords(body, fileName), fileName, options);
    const preds = parseBirdJson(body, fileName);
    if (preds.length === 0) throw new WorkbenchError('BAD_FORMAT', 'the predictions object is empty', fileName);
    return preds;
  }
  if (trimmed.startsWith('[')) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      'a JSON array is not a predictions format: use a BIRD object {"0": "SQL\\t----- bird -----\\tdb_id", ...}, ' +
        'JSON Lines {"question_id": 0, "sql": "..."} or a .sql file with one query per line',
      fileName,
    );
  }
  if (name.endsWith('.json')) {
    throw new WorkbenchError(
      'BAD_JSON',
      'named .json but does not start with `{`: it is not a BIRD predictions object',
      fileName,
    );
  }
  return parseSqlLines(body, fileName);
}

function checkQuestionsMatchGold(questions: Question[], gold: GoldEntry[]): void {
  if (questions.length !== gold.length) {
    throw new WorkbenchError(
      'MISMATCH',
      `the questions file has ${questions.length} questions but the gold file has ${gold.length} lines: they do not belong together`,
    );
  }
  const i = questions.findIndex((q, k) => q.dbId !== gold[k]!.dbId);
  if (i >= 0) {
    throw new WorkbenchError(
      'MISMATCH',
      `question ${i} has db_id "${questions[i]!.dbId}" but gold line ${i + 1} has "${gold[i]!.dbId}": ` +
        'the questions file and the gold file are not in the same order or not the same dataset',
      `questions[${i}]`,
    );
  }
}

/** The most frequent value (the smallest among equally frequent ones), or undefined. */
function mostCommon(values: Iterable<number>): number | undefined {
  const freq = new Map<number, number>();
  for (const v of values) freq.set(v, (freq.get(v) ?? 0) + 1);
  let best: number | undefined;
  for (const [v, f] of freq)
    if (best === undefined || f > freq.get(best)! || (f === freq.get(best)! && v < best)) best = v;
  return best;
}

/**
 * Pairs predictions with gold. Positional files (BIRD JSON, .sql) pair like Python's zip, as
 * official, one sample per question. JSONL pairs by question_id and keeps every sample: the
 * lines (and array elements) of one id are its samples 0, 1, ... in file order, and each
 * becomes an item with the gold position as `index`. The prediction's own db name is
 * ignored: each item runs on its gold line's database, as the current official evaluator does.
 *
 * An id that the questions file repeats (BIRD mini-dev: 137 and 138, identical copies) gets
 * all its samples at every copy, except when it has exactly (copies x n) samples, n being the
 * file's usual samples per question: then they are dealt out in file order, n to each copy,
 * so that a per-position file converted to JSONL scores exactly like the positional file.
 */
export function pairPredictions(
  preds: Prediction[],
  gold: GoldEntry[],
  questions: Question[] | null,
  fileName: string,
): { items: EvalItem[]; warnings: string[] } {
  if (questions) checkQuestionsMatchGold(questions, gold);
  const warnings: string[] = [];
  const item = (index: number, p: Prediction, sample?: number): EvalItem => {
    const it: EvalItem = {
      index,
      questionId: questions ? questions[index]!.questionId : index,
      dbId: gold[index]!.dbId,
      difficulty: questions ? questions[index]!.difficulty : 'unknown',
      predSql: p.sql,
      goldSql: gold[index]!.sql,
      extraction: p.extraction,
    };
    if (sample !== undefined) it.sample = sample;
    if (p.completion !== undefined) it.completion = p.completion;
    if (p.meanLogprob !== undefined) it.meanLogprob = p.meanLogprob;
    return it;
  };

  const keyed = preds.filter((p) => p.questionId !== null).length;
  if (keyed === 0) {
    // Positional, like Python's zip; what is suspicious about it is reported by pairingFindings.
    const n = Math.min(preds.length, gold.length);
    return { items: preds.slice(0, n).map((p, k) => item(k, p)), warnings };
  }
  if (keyed !== preds.length) {
    throw new WorkbenchError('INTERNAL', 'predictions mix question_id and positional entries', fileName);
  }

  const goldOfId = new Map<number, number[]>();
  if (questions) questions.forEach((q, i) => goldOfId.set(q.questionId, [...(goldOfId.get(q.questionId) ?? []), i]));
  const samplesOfId = new Map<number, { positions: number[]; samples: Prediction[] }>();
  for (const p of preds) {
    const id = p.questionId!;
    let entry = samplesOfId.get(id);
    if (!entry) {
      const positions = questions ? goldOfId.get(id) : id < gold.length ? [id] : undefined;
      if (!positions) {
        throw new WorkbenchError(
          'MISMATCH',
          questions
            ? `question_id ${id} is not in the questions file: are the predictions for another dataset?`
            : `question_id ${id} is not a gold line index (0..${gold.length - 1}); without a questions file, ` +
                'question_id is read as the 0-based gold line. Load the questions file to pair by BIRD question_id.',
          `${fileName}:${p.position + 1}`,
        );
      }
      samplesOfId.set(id, (entry = { positions, samples: [] }));
    }
    entry.samples.push(p);
  }
  const usualN = mostCommon(
    [...samplesOfId.values()].filter((e) => e.positions.length === 1).map((e) => e.samples.length),
  );
  const items: EvalItem[] = [];
  for (const { positions, samples } of samplesOfId.values()) {
    const deal = positions.length > 1 && usualN !== undefined && samples.length === positions.length * usualN;
    positions.forEach((g, copy) => {
      const mine = deal ? samples.slice(copy * usualN, (copy + 1) * usualN) : samples;
      mine.forEach((p, s) => items.push(item(g, p, s)));
    });
  }
  items.sort((a, b) => a.index - b.index || a.sample! - b.sample!);
  const answered = new Set(items.map((i) => i.index)).size;
  if (answered < gold.length) {
    warnings.push(`${fileName}: ${gold.length - answered} gold questions have no prediction and were skipped.`);
  }
  return { items, warnings };
}
