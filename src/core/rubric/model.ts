/**
 * Rubrics as Rewards (Gunjal et al., 2025): a rubric is a list of binary criteria, each with a
 * category and a weight, checked by a judge LLM, by a programmatic SQL check, or by a regex.
 * `validateRubric` is the boundary: everything past it is a well-formed `Rubric`.
 */
import { WorkbenchError } from '../errors.ts';
import { describeValue, isRecord } from '../formats/questions.ts';
import { SQL_CHECK_NAMES, type SqlCheckName } from './sql-check-names.ts';

export type Category = 'essential' | 'important' | 'optional' | 'pitfall';
export const CATEGORIES: readonly Category[] = ['essential', 'important', 'optional', 'pitfall'];

type RubricCheck =
  { kind: 'judge' } | SqlRubricCheck | { kind: 'regex'; pattern: string; flags: string; target: 'completion' | 'sql' };

/** A programmatic check of src/core/rubric/sql-checks.ts; `expected` only for `column-count`. */
export interface SqlRubricCheck {
  kind: 'sql';
  name: SqlCheckName;
  /** `column-count`: the number of columns asked for, instead of the gold result's count. */
  expected?: number;
}

export interface RubricItem {
  /** Unique within its rubric; verdicts are stored under it. */
  id: string;
  title: string;
  description: string;
  category: Category;
  /**
   * Contribution when the criterion is met. A negative weight (pitfalls only) means the item
   * describes a fault ("Does not mention ...") and subtracts when met; a positive pitfall weight
   * means it is phrased as avoidance ("Avoids ...") and earns credit when met.
   */
  weight: number;
  check: RubricCheck;
}

export interface Rubric {
  id: string;
  title: string;
  items: RubricItem[];
}

/**
 * Default weights per category.
 * - `paper`: the RaR paper's mapping, pitfalls phrased "avoids ..." so a met pitfall earns 0.9.
 * - `rar-integers`: the released RaR-Medicine / RaR-Science datasets' integer scale (Essential 5,
 *   Important 3–4, Optional 1–2, Pitfall −1 to −2); the top of each range is used, and pitfalls
 *   describe the fault, so a met pitfall subtracts.
 */
export type WeightingName = 'paper' | 'rar-integers';
export const WEIGHTINGS: Readonly<Record<WeightingName, Readonly<Record<Category, number>>>> = {
  paper: { essential: 1.0, important: 0.7, optional: 0.3, pitfall: 0.9 },
  'rar-integers': { essential: 5, important: 4, optional: 2, pitfall: -2 },
};

export function defaultWeight(category: Category, weighting: WeightingName): number {
  return WEIGHTINGS[weighting][category];
}

/**
 * The same rubric with every weight taken from a weighting. A pitfall keeps its sign, because
 * the sign records how the item is phrased (avoidance or fault): only its magnitude changes.
 */
export function applyWeighting(rubric: Rubric, weighting: WeightingName): Rubric {
  return {
    ...rubric,
    items: rubric.items.map((item) => {
      const w = Math.abs(defaultWeight(item.category, weighting));
      return { ...item, weight: item.category === 'pitfall' && item.weight < 0 ? -w : w };
    }),
  };
}

interface ValidateOptions {
  /** Weights of items that give none (default `paper`). */
  weighting?: WeightingName;
}

const FLAG_CHARS = /^[dimsuv]*$/;

/** Throws a WorkbenchError naming the rubric and the item unless `input` is a usable rubric. */
export function validateRubric(input: unknown, options: ValidateOptions = {}, where?: string): Rubric {
  const weighting = options.weighting ?? 'paper';
  const at = (w: string) => (where ? `${where}: ${w}` : w);
  if (!isRecord(input))
    throw new WorkbenchError('BAD_FORMAT', `a rubric must be an object, found ${describeValue(input)}`, where);
  const id = typeof input.id === 'string' && input.id.trim() !== '' ? input.id : null;
  if (id === null)
    throw new WorkbenchError(
      'BAD_FORMAT',
      `the rubric needs a non-empty string "id", found ${describeValue(input.id)}`,
      where,
    );
  const rubricWhere = at(`rubric ${JSON.stringify(id)}`);
  const title = input.title === undefined ? id : input.title;
  if (typeof title !== 'string')
    throw new WorkbenchError('BAD_FORMAT', `"title" must be a string, found ${describeValue(title)}`, rubricWhere);
  if (!Array.isArray(input.items)) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `"items" must be an array of criteria, found ${describeValue(input.items)}`,
      rubricWhere,
    );
  }
  if (input.items.length === 0)
    throw new WorkbenchError('BAD_FORMAT', 'has no items; a rubric needs at least one criterion', rubricWhere);
  const seen = new Set<string>();
  const items = input.items.map((raw, i) => {
    const item = validateItem(raw, i, weighting, rubricWhere);
    if (seen.has(item.id)) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `duplicate item id ${JSON.stringify(item.id)} (item ${i + 1}); ids must be unique`,
        rubricWhere,
      );
    }
    seen.add(item.id);
    return item;
  });
  return { id, title, items };
}

function validateItem(raw: unknown, i: number, weighting: WeightingName, rubricWhere: string): RubricItem {
  const n = `item ${i + 1}`;
  if (!isRecord(raw))
    throw new WorkbenchError('BAD_FORMAT', `${n} must be an object, found ${describeValue(raw)}`, rubricWhere);
  if (raw.id !== undefined && (typeof raw.id !== 'string' || raw.id.trim() === '')) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `${n}: "id" must be a non-empty string, found ${describeValue(raw.id)}`,
      rubricWhere,
    );
  }
  // Items without an id are numbered by position (c1, c2, ...), as RaR files are.
  const id = (raw.id as string | undefined) ?? `c${i + 1}`;
  const where = `${rubricWhere} item ${JSON.stringify(id)}`;
  const bad = (msg: string) => new WorkbenchError('BAD_FORMAT', msg, where);
  if (typeof raw.title !== 'string' || raw.title.trim() === '')
    throw bad(`missing "title": every criterion needs a short title, found ${describeValue(raw.title)}`);
  const description = raw.description ?? '';
  if (typeof description !== 'string') throw bad(`"description" must be a string, found ${describeValue(description)}`);
  if (typeof raw.category !== 'string' || !(CATEGORIES as readonly string[]).includes(raw.category.toLowerCase())) {
    throw bad(`unknown category ${describeValue(raw.category)}; use one of ${CATEGORIES.join(', ')}`);
  }
  const category = raw.category.toLowerCase() as Category;
  let weight: number;
  if (raw.weight === undefined) weight = defaultWeight(category, weighting);
  else if (typeof raw.weight !== 'number' || !Number.isFinite(raw.weight))
    throw bad(`weight must be a finite number, found ${describeValue(raw.weight)}`);
  else weight = raw.weight;
  if (weight < 0 && category !== 'pitfall') {
    throw bad(
      `negative weight ${weight} on a ${category} item; only pitfall items may subtract (or make it a pitfall)`,
    );
  }
  return { id, title: raw.title, description, category, weight, check: validateCheck(raw.check, bad) };
}

function validateCheck(raw: unknown, bad: (msg: string) => WorkbenchError): RubricCheck {
  if (raw === undefined) return { kind: 'judge' };
  if (!isRecord(raw)) throw bad(`"check" must be an object like {"kind": "judge"}, found ${describeValue(raw)}`);
  switch (raw.kind) {
    case 'judge':
      return { kind: 'judge' };
    case 'sql': {
      if (typeof raw.name !== 'string' || !(SQL_CHECK_NAMES as readonly string[]).includes(raw.name)) {
        throw bad(`unknown SQL check ${describeValue(raw.name)}; use one of ${SQL_CHECK_NAMES.join(', ')}`);
      }
      const check: SqlRubricCheck = { kind: 'sql', name: raw.name as SqlCheckName };
      if (raw.expected !== undefined) {
        if (raw.name !== 'column-count') throw bad(`"expected" only applies to the column-count check`);
        if (typeof raw.expected !== 'number' || !Number.isInteger(raw.expected) || raw.expected < 1) {
          throw bad(`"expected" must be a positive integer number of columns, found ${describeValue(raw.expected)}`);
        }
        check.expected = raw.expected;
      }
      return check;
    }
    case 'regex': {
      if (typeof raw.pattern !== 'string' || raw.pattern === '')
        throw bad(`a regex check needs a non-empty "pattern", found ${describeValue(raw.pattern)}`);
      const flags = raw.flags ?? '';
      if (typeof flags !== 'string' || !FLAG_CHARS.test(flags)) {
        throw bad(
          `regex flags ${describeValue(flags)} are not allowed; use any of d, i, m, s, u, v (g and y make a test depend on the previous one)`,
        );
      }
      try {
        new RegExp(raw.pattern, flags);
      } catch (err) {
        throw bad(`the regex ${JSON.stringify(raw.pattern)} does not compile: ${(err as Error).message}`);
      }
      const target = raw.target ?? 'completion';
      if (target !== 'completion' && target !== 'sql')
        throw bad(`regex "target" must be "completion" or "sql", found ${describeValue(target)}`);
      return { kind: 'regex', pattern: raw.pattern, flags, target };
    }
    default:
      throw bad(`unknown check kind ${describeValue(raw.kind)}; use "judge", "sql" or "regex"`);
  }
}
