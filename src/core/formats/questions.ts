import { spiderHardness } from '../sql/spider-hardness.ts';
import { WorkbenchError } from '../errors.ts';
import type { Difficulty, Question } from '../types.ts';
import { stripBom } from './gold.ts';

/**
 * Offset of the first JSON syntax error, or -1 if none is found. Engines word JSON.parse errors
 * differently and V8 often gives no position at all, so a small strict scanner locates it.
 * It keeps its open arrays and objects on an explicit stack, not the call stack: a file of
 * 100,000 nested `[` must give a position, not a stack overflow.
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const str = (): boolean => {
    i++;
    for (;;) {
      if (i >= text.length) return false;
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c !== 92) {
        i++;
        continue;
      }
      const e = text[i + 1];
      if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
      else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
      else {
        i++; // point at the bad escape letter, not at the backslash
        return false;
      }
    }
  };
  const lit = /true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  /** Closing characters of the containers that are open, innermost last. */
  const open: string[] = [];
  /** Before a member of an object: its key and colon. */
  const key = (): boolean => {
    ws();
    if (text[i] !== '"' || !str()) return false;
    ws();
    if (text[i] !== ':') return false;
    i++;
    return true;
  };
  for (;;) {
    // A value starts here.
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) i++;
      else {
        open.push(close);
        if (close === '}' && !key()) return i;
        continue;
      }
    } else if (c === '"') {
      if (!str()) return i;
    } else {
      lit.lastIndex = i;
      if (!lit.exec(text)) return i;
      i = lit.lastIndex;
    }
    // A value ended: close containers, or go on to the next member.
    for (;;) {
      const close = open.at(-1);
      if (close === undefined) {
        ws();
        return i < text.length ? i : -1;
      }
      ws();
      if (text[i] === close) {
        i++;
        open.pop();
        continue;
      }
      if (text[i] !== ',') return i;
      i++;
      if (close === '}' && !key()) return i;
      break;
    }
  }
}

/** 1-based line and column of a character offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lastNl = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: offset - lastNl };
}

function syntaxProblem(text: string, err: unknown): { offset: number; problem: string } {
  const offset = jsonErrorOffset(text);
  if (offset < 0) return { offset, problem: err instanceof Error ? err.message : String(err) };
  if (offset >= text.length) return { offset, problem: 'the JSON ends too early (is the file truncated?)' };
  return { offset, problem: `unexpected ${JSON.stringify(text[offset])}` };
}

/** JSON.parse with a BAD_JSON error naming `file:line:column`. */
export function parseJsonText(text: string, fileName: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const { offset, problem } = syntaxProblem(text, err);
    const at = offset < 0 ? null : lineColumn(text, offset);
    const where = at ? `${fileName}:${at.line}:${at.column}` : fileName;
    throw new WorkbenchError('BAD_JSON', `not valid JSON: ${problem}. Fix or re-export the file.`, where);
  }
}

/**
 * JSON Lines: one JSON value per line; blank lines are skipped. Errors name `file:line`
 * (1-based physical line), which callers also use for later errors.
 */
export function parseJsonLines(text: string, fileName: string): Array<{ value: unknown; line: number }> {
  const out: Array<{ value: unknown; line: number }> = [];
  stripBom(text)
    .split('\n')
    .forEach((raw, i) => {
      if (raw.trim() === '') return;
      try {
        out.push({ value: JSON.parse(raw), line: i + 1 });
      } catch (err) {
        const { offset, problem } = syntaxProblem(raw, err);
        const at = offset < 0 ? '' : ` at column ${offset + 1}`;
        throw new WorkbenchError(
          'BAD_JSON',
          `this line is not valid JSON${at}: ${problem}. In JSON Lines every line must be one complete JSON object.`,
          `${fileName}:${i + 1}`,
        );
      }
    });
  return out;
}

/** How a value looks, for messages. */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return v === '' ? 'an empty string' : `the string ${JSON.stringify(v.slice(0, 40))}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const KNOWN_DIFFICULTIES: ReadonlySet<string> = new Set(['simple', 'moderate', 'challenging']);

/** One question record and where it is (`file[i]`, `file:line`, `file row N (row group G)`). */
interface Row {
  value: unknown;
  where: string;
}

function requireString(obj: Record<string, unknown>, key: string, where: string, nonEmpty: boolean): string {
  const v = obj[key];
  if (typeof v !== 'string' || (nonEmpty && v.trim() === '')) {
    const want = nonEmpty ? 'a non-empty string' : 'a string';
    throw new WorkbenchError('BAD_FORMAT', `"${key}" must be ${want}, found ${describeValue(v)}`, where);
  }
  return v;
}

function toQuestion(row: Row, position: number, sqlKey: 'SQL' | 'query'): Question {
  const { value, where } = row;
  if (!isRecord(value)) {
    throw new WorkbenchError('BAD_FORMAT', `expected a question object, found ${describeValue(value)}`, where);
  }
  let questionId = position;
  if (value.question_id !== undefined) {
    const id = value.question_id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `"question_id" must be a non-negative integer, found ${describeValue(id)}`,
        where,
      );
    }
    questionId = id;
  }
  const evidence = value.evidence ?? '';
  if (typeof evidence !== 'string') {
    throw new WorkbenchError('BAD_FORMAT', `"evidence" must be a string, found ${describeValue(evidence)}`, where);
  }
  // Spider's files carry no level: its hardness comes from the gold SQL, by Spider's own rule.
  const difficulty: Difficulty =
    typeof value.difficulty === 'string' && KNOWN_DIFFICULTIES.has(value.difficulty)
      ? (value.difficulty as Difficulty)
      : sqlKey === 'query' && typeof value.query === 'string'
        ? spiderHardness(value.query)
        : 'unknown';
  return {
    questionId,
    dbId: requireString(value, 'db_id', where, true),
    question: requireString(value, 'question', where, false),
    evidence,
    goldSql: requireString(value, sqlKey, where, false),
    difficulty,
  };
}

function sameQuestion(a: Question, b: Question): boolean {
  return (
    a.dbId === b.dbId &&
    a.question === b.question &&
    a.evidence === b.evidence &&
    a.goldSql === b.goldSql &&
    a.difficulty === b.difficulty
  );
}

/**
 * Parses a question file: a JSON array (BIRD `dev.json`, `mini_dev_sqlite.json`, Spider
 * `dev.json`) or JSON Lines (BIRD's `mini_dev_sqlite.jsonl`). The first element decides the
 * flavour: `SQL` means BIRD, `query` means Spider.
 *
 * A repeated question_id is accepted only when both entries are identical: BIRD mini-dev ships
 * ids 137 and 138 twice (positions 484/487 and 485/488), and the official evaluator counts both
 * positions. Differing entries under one id are an error, since pairing by id would be ambiguous.
 */
export function parseQuestions(text: string, fileName: string): Question[] {
  const body = stripBom(text);
  const first = body.trimStart()[0];
  if (first === undefined) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      'the file is empty: expected a JSON array of questions or JSON Lines',
      fileName,
    );
  }

  let rows: Row[];
  if (first === '[') {
    const parsed = parseJsonText(body, fileName);
    if (!Array.isArray(parsed)) {
      throw new WorkbenchError('BAD_FORMAT', 'expected a JSON array of questions', fileName);
    }
    rows = parsed.map((value, i) => ({ value, where: `${fileName}[${i}]` }));
  } else {
    rows = parseJsonLines(body, fileName).map(({ value, line }) => ({ value, where: `${fileName}:${line}` }));
  }
  return questionsFromRecords(rows, fileName);
}

/**
 * Questions from records: the elements of a JSON array, the lines of JSON Lines or the rows of a
 * Parquet file (BIRD's and Spider's question files as published on dataset hubs), checked alike.
 */
export function questionsFromRecords(rows: readonly Row[], fileName: string): Question[] {
  if (rows.length === 0) {
    throw new WorkbenchError('BAD_FORMAT', 'the file contains no questions', fileName);
  }

  const head = rows[0]!;
  let sqlKey: 'SQL' | 'query';
  if (isRecord(head.value) && 'SQL' in head.value) sqlKey = 'SQL';
  else if (isRecord(head.value) && 'query' in head.value) sqlKey = 'query';
  else {
    throw new WorkbenchError(
      'BAD_FORMAT',
      'the first question has neither "SQL" (BIRD) nor "query" (Spider): is this a question file?',
      head.where,
    );
  }

  const questions = rows.map((row, i) => toQuestion(row, i, sqlKey));
  const firstById = new Map<number, number>();
  questions.forEach((q, i) => {
    const j = firstById.get(q.questionId);
    if (j === undefined) firstById.set(q.questionId, i);
    else if (!sameQuestion(questions[j]!, q)) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `question_id ${q.questionId} is already used by a different question at ${rows[j]!.where}; ` +
          'question ids must be unique',
        rows[i]!.where,
      );
    }
  });
  return questions;
}
