/**
 * RaR-style rubric datasets (ScaleAI RaR-Medicine / RaR-Science layout), one JSON object per
 * line: `question`, optional `reference_answer`, `rubric: [{title, description, weight}]`, and
 * an optional `id`. Other fields (`question_source`, `rubric_count`, ...) are ignored.
 *
 * Category of a criterion, in order:
 * 1. an explicit `category` field (essential | important | optional | pitfall);
 * 2. a prefix "Essential Criteria:", "Important Criteria:", "Optional Criteria:" or
 *    "Pitfall Criteria:" at the start of the title, or of the description (the released datasets
 *    put it there: `{"title": "Answer", "description": "Essential Criteria: ..."}`); the prefix
 *    stays in the text the judge reads;
 * 3. the weight: negative -> pitfall; on the integer scale (any |weight| > 1 in the rubric)
 *    >= 5 essential, 3–4 important, below 3 optional; on the paper's scale (every |weight| <= 1)
 *    >= 0.85 essential, >= 0.5 important, else optional (a positive "avoids ..." pitfall at 0.9
 *    cannot be told from an essential item by its weight: give it a prefix or a category).
 * Criteria ids are c1, c2, ... in rubric order.
 */
import { WorkbenchError } from '../errors.ts';
import { describeValue, isRecord } from '../formats/questions.ts';
import { jsonLineRecords, type SourceRecord } from '../formats/records.ts';
import { CATEGORIES, validateRubric, type Category, type Rubric } from './model.ts';
import { isRubricHubRecord, rubricHubFromRecords } from './rubrichub.ts';

export interface RarRow {
  /** 0-based position among the dataset's rows. */
  index: number;
  /** 1-based line in the file. */
  line: number;
  /** The row's `id`, or `<file>:<line>`. */
  id: string;
  question: string;
  referenceAnswer: string | null;
  rubric: Rubric;
}

const PREFIX = /^\s*(essential|important|optional|pitfall)\s+criteri(?:a|on)\s*:/i;

function categoryFromPrefix(text: string): Category | null {
  const m = PREFIX.exec(text);
  return m ? (m[1]!.toLowerCase() as Category) : null;
}

export function categoryFromWeight(weight: number, integerScale: boolean): Category {
  if (weight < 0) return 'pitfall';
  if (integerScale) return weight >= 5 ? 'essential' : weight >= 3 ? 'important' : 'optional';
  return weight >= 0.85 ? 'essential' : weight >= 0.5 ? 'important' : 'optional';
}

export function parseRarJsonl(text: string, fileName: string): RarRow[] {
  return rarFromRecords(jsonLineRecords(text, fileName), fileName);
}

/**
 * Rows of a RaR dataset from records: JSONL lines or the rows of a released Parquet split
 * (`data/train-*.parquet`: `rubric` a list of {description, title, weight: int64} structs).
 * A row without an `id` gets `<file>:<line or row>`.
 */
export function rarFromRecords(records: readonly SourceRecord[], fileName: string): RarRow[] {
  // RubricHub's released layout (prompt messages, reward_model.rubrics with points): rubrichub.ts.
  if (records.length > 0 && isRubricHubRecord(records[0]!.value)) return rubricHubFromRecords(records, fileName);
  const rows: RarRow[] = [];
  const ids = new Set<string>();
  for (const { value, line, where } of records) {
    const bad = (msg: string) => new WorkbenchError('BAD_FORMAT', msg, where);
    if (!isRecord(value))
      throw bad(`expected an object {"question", "reference_answer", "rubric"}, found ${describeValue(value)}`);
    if (typeof value.question !== 'string' || value.question.trim() === '')
      throw bad(`"question" must be a non-empty string, found ${describeValue(value.question)}`);
    const ref = value.reference_answer;
    if (ref !== undefined && ref !== null && typeof ref !== 'string')
      throw bad(`"reference_answer" must be a string, found ${describeValue(ref)}`);
    if (value.id !== undefined && typeof value.id !== 'string' && typeof value.id !== 'number')
      throw bad(`"id" must be a string or a number, found ${describeValue(value.id)}`);
    const id = value.id === undefined ? `${fileName}:${line}` : String(value.id);
    if (ids.has(id)) throw bad(`duplicate id ${JSON.stringify(id)}`);
    ids.add(id);
    if (!Array.isArray(value.rubric))
      throw bad(`"rubric" must be an array of {title, description, weight}, found ${describeValue(value.rubric)}`);
    const weights = value.rubric.map((c) => (isRecord(c) && typeof c.weight === 'number' ? c.weight : 0));
    const integerScale = weights.some((w) => Math.abs(w) > 1);
    const items = value.rubric.map((c, i) => {
      if (!isRecord(c)) throw bad(`rubric item ${i + 1} must be an object, found ${describeValue(c)}`);
      if (typeof c.weight !== 'number' || !Number.isFinite(c.weight))
        throw bad(`rubric item ${i + 1}: weight must be a finite number, found ${describeValue(c.weight)}`);
      let category: Category | null = null;
      if (c.category !== undefined) {
        if (typeof c.category !== 'string' || !(CATEGORIES as readonly string[]).includes(c.category.toLowerCase())) {
          throw bad(
            `rubric item ${i + 1}: unknown category ${describeValue(c.category)}; use one of ${CATEGORIES.join(', ')}`,
          );
        }
        category = c.category.toLowerCase() as Category;
      }
      category ??=
        (typeof c.title === 'string' ? categoryFromPrefix(c.title) : null) ??
        (typeof c.description === 'string' ? categoryFromPrefix(c.description) : null) ??
        categoryFromWeight(c.weight, integerScale);
      return { id: `c${i + 1}`, title: c.title, description: c.description ?? '', category, weight: c.weight };
    });
    const rubric: Rubric = validateRubric({ id, title: value.question.slice(0, 80), items }, {}, where);
    rows.push({
      index: rows.length,
      line,
      id,
      question: value.question,
      referenceAnswer: (ref as string | null | undefined) ?? null,
      rubric,
    });
  }
  if (rows.length === 0)
    throw new WorkbenchError(
      'BAD_FORMAT',
      'no rows: a RaR dataset needs one JSON object per line (or one Parquet row per question)',
      fileName,
    );
  return rows;
}
