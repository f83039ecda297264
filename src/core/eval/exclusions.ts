/**
 * Questions excluded from a run's or a training run's metrics by hand (Inspect's `log exclude`;
 * BIRD users list unanswerable golds), each with why, who and when. Every metric reads a run's
 * samples through `withoutExcluded`, so an excluded question counts nowhere (EX, Soft-F1, R-VES,
 * the tables, pass@k, the series' steps and buckets, comparisons); exports keep its rows and mark
 * them (`excludedReason`).
 */
import { WorkbenchError } from '../errors.ts';

export interface Exclusion {
  /** The question's id (BIRD's `question_id`; the sample's `questionId`). */
  questionId: number;
  /** Why it is left out (non-empty). */
  reason: string;
  /** Who left it out. */
  author: string;
  /** ISO 8601: when it was made. */
  date: string;
}

/** An exclusion as a JSONL line of an `--exclude` file (and as exports write it). */
interface ExclusionLine {
  question_id: number;
  reason: string;
  author: string;
  date: string;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An exclusion checked: the question id an integer >= 0, the reason and the author non-empty,
 * the date ISO 8601. Throws BAD_FORMAT naming `where` and the field.
 */
export function checkedExclusion(e: Exclusion, where: string): Exclusion {
  if (!Number.isInteger(e.questionId) || e.questionId < 0)
    throw new WorkbenchError(
      'BAD_FORMAT',
      `question_id must be a whole number >= 0, got ${JSON.stringify(e.questionId)}`,
      where,
    );
  if (typeof e.reason !== 'string' || e.reason.trim() === '')
    throw new WorkbenchError('BAD_FORMAT', 'reason is required: say why the question is excluded', where);
  if (typeof e.author !== 'string' || e.author.trim() === '')
    throw new WorkbenchError('BAD_FORMAT', 'author is required: name who excluded the question', where);
  if (typeof e.date !== 'string' || !ISO_DATE.test(e.date) || Number.isNaN(Date.parse(e.date)))
    throw new WorkbenchError(
      'BAD_FORMAT',
      `date must be an ISO 8601 date (2026-12-07 or 2026-12-07T11:05:00Z), got ${JSON.stringify(e.date)}`,
      where,
    );
  return { questionId: e.questionId, reason: e.reason.trim(), author: e.author.trim(), date: e.date };
}

/**
 * The exclusions of an `--exclude` JSONL file: one `{"question_id", "reason", "author", "date"}`
 * per line (blank lines skipped). A line that is not such an object is refused naming the file
 * and the line; a question listed twice is refused too (which reason would hold?).
 */
export function parseExclusions(text: string, file: string): Exclusion[] {
  const out: Exclusion[] = [];
  const seen = new Map<number, number>();
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${file} line ${i + 1}`;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      throw new WorkbenchError(
        'BAD_JSON',
        `not JSON (${(err as Error).message}); each line is {"question_id": 12, "reason": "...", "author": "...", "date": "2026-12-07"}`,
        where,
      );
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new WorkbenchError(
        'BAD_FORMAT',
        'each line must be an object {"question_id", "reason", "author", "date"}',
        where,
      );
    const o = v as Record<string, unknown>;
    const unknown = Object.keys(o).filter((k) => !['question_id', 'reason', 'author', 'date'].includes(k));
    if (unknown.length)
      throw new WorkbenchError(
        'BAD_FORMAT',
        `unknown field ${unknown.map((k) => JSON.stringify(k)).join(', ')}; the fields are question_id, reason, author, date`,
        where,
      );
    const e = checkedExclusion(
      {
        questionId: o.question_id as number,
        reason: o.reason as string,
        author: o.author as string,
        date: o.date as string,
      },
      where,
    );
    const before = seen.get(e.questionId);
    if (before !== undefined)
      throw new WorkbenchError(
        'BAD_FORMAT',
        `question ${e.questionId} is already excluded at line ${before}; list each question once`,
        where,
      );
    seen.set(e.questionId, i + 1);
    out.push(e);
  });
  return out;
}

/** The JSONL line of an exclusion (what `parseExclusions` reads back). */
export function exclusionLine(e: Exclusion): string {
  const line: ExclusionLine = { question_id: e.questionId, reason: e.reason, author: e.author, date: e.date };
  return JSON.stringify(line);
}

/** Question id -> its exclusion. The first of a question listed twice holds. */
export function exclusionMap(exclusions: readonly Exclusion[] | null | undefined): Map<number, Exclusion> {
  const m = new Map<number, Exclusion>();
  for (const e of exclusions ?? []) if (!m.has(e.questionId)) m.set(e.questionId, e);
  return m;
}

/** The items (samples) whose question is not excluded, in their order; the same array when nothing is excluded. */
export function withoutExcluded<T extends { questionId: number }>(
  items: readonly T[],
  exclusions: readonly Exclusion[] | null | undefined,
): readonly T[] {
  if (!exclusions || exclusions.length === 0) return items;
  const ids = exclusionMap(exclusions);
  return items.filter((s) => !ids.has(s.questionId));
}

/** The positions of the items kept (for arrays parallel to the items: the trainer's scores). */
export function keptPositions(
  items: readonly { questionId: number }[],
  exclusions: readonly Exclusion[] | null | undefined,
): number[] | null {
  if (!exclusions || exclusions.length === 0) return null;
  const ids = exclusionMap(exclusions);
  const out: number[] = [];
  items.forEach((s, i) => !ids.has(s.questionId) && out.push(i));
  return out;
}

/** The exclusions of several owners (a run's own and those of the training runs it is a step of), each question once. */
export function mergeExclusions(...lists: ReadonlyArray<readonly Exclusion[] | null | undefined>): Exclusion[] {
  return [...exclusionMap(lists.flatMap((l) => l ?? [])).values()].sort((a, b) => a.questionId - b.questionId);
}

/** `3 questions excluded` (the metric header's line); empty for none. */
export function excludedText(n: number): string {
  return n === 0 ? '' : `${n} question${n === 1 ? '' : 's'} excluded`;
}

/** How many of the exclusions name a question present in the items (an exclusion of another dataset's id excludes nothing). */
export function excludedPresent(
  items: readonly { questionId: number }[],
  exclusions: readonly Exclusion[] | null | undefined,
): number {
  const ids = exclusionMap(exclusions);
  if (ids.size === 0) return 0;
  const present = new Set<number>();
  for (const s of items) if (ids.has(s.questionId)) present.add(s.questionId);
  return present.size;
}
