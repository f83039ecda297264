/**
 * RubricHub (Li et al., 2026, arXiv 2601.08430; the released `sojuL/RubricHub_v1` Parquet
 * shards, ~110k rubrics) as rows of a rubric dataset. Its rows are verl-style:
 *
 *   {"data_source": "...", "ability": "...", "prompt": [{"role": "user", "content": "..."}],
 *    "reward_model": {"ground_truth": "...", "rubrics": [{"criterion": "...", "points": 5}]},
 *    "Rubrics": [{"criterion": "...", "points": 5}]}
 *
 * (layout as read by the public OpenReward environment EnvCommons/RubricHub `rubrichub.py`:
 * the flat `Rubrics` list first, else `reward_model.rubrics`; the prompt is the messages'
 * contents joined by a blank line, or a plain string; `ground_truth` is the reference and may
 * be empty). Each criterion becomes a judge criterion whose title is the criterion text and
 * whose weight is its points; the category comes from the points as for RaR data without a
 * prefix: negative = pitfall, else on the integer scale ≥ 5 essential, 3–4 important, below 3
 * optional. Errors name the file and line (or Parquet row).
 */
import { WorkbenchError } from '../errors.ts';
import { describeValue, isRecord } from '../formats/questions.ts';
import type { SourceRecord } from '../formats/records.ts';
import { validateRubric, type Category } from './model.ts';
import type { RarRow } from './rar-dataset.ts';

/** A row in RubricHub's layout: a `prompt` and a rubric list, no RaR `question`. */
export function isRubricHubRecord(value: unknown): boolean {
  return (
    isRecord(value) &&
    value.question === undefined &&
    value.prompt !== undefined &&
    (Array.isArray(value.Rubrics) || isRecord(value.reward_model))
  );
}

function category(points: number, integerScale: boolean): Category {
  if (points < 0) return 'pitfall';
  if (integerScale) return points >= 5 ? 'essential' : points >= 3 ? 'important' : 'optional';
  return points >= 0.85 ? 'essential' : points >= 0.5 ? 'important' : 'optional';
}

export function rubricHubFromRecords(records: readonly SourceRecord[], fileName: string): RarRow[] {
  const rows: RarRow[] = [];
  const ids = new Set<string>();
  for (const { value, line, where } of records) {
    const bad = (msg: string) => new WorkbenchError('BAD_FORMAT', `RubricHub row: ${msg}`, where);
    if (!isRecord(value))
      throw bad(`expected an object {"prompt", "reward_model": {"rubrics"}}, found ${describeValue(value)}`);
    let question: string;
    if (typeof value.prompt === 'string') question = value.prompt;
    else if (Array.isArray(value.prompt)) {
      const parts = value.prompt.map((m, i) => {
        if (!isRecord(m) || typeof m.content !== 'string')
          throw bad(`"prompt" message ${i + 1} must be {"role", "content": string}, found ${describeValue(m)}`);
        return m.content;
      });
      question = parts.join('\n\n');
    } else throw bad(`"prompt" must be a string or a list of messages, found ${describeValue(value.prompt)}`);
    if (question.trim() === '') throw bad('"prompt" is empty');
    const rm = value.reward_model;
    if (rm !== undefined && rm !== null && !isRecord(rm))
      throw bad(`"reward_model" must be an object {"ground_truth", "rubrics"}, found ${describeValue(rm)}`);
    const flat = Array.isArray(value.Rubrics) && value.Rubrics.length > 0 ? value.Rubrics : null;
    const list: unknown = flat ?? (isRecord(rm) ? rm.rubrics : undefined);
    if (!Array.isArray(list) || list.length === 0)
      throw bad(
        `no rubric: "Rubrics" or "reward_model.rubrics" must be a non-empty list of {"criterion", "points"}, found ${describeValue(list)}`,
      );
    const ref = isRecord(rm) ? rm.ground_truth : undefined;
    if (ref !== undefined && ref !== null && typeof ref !== 'string')
      throw bad(`"reward_model.ground_truth" must be a string, found ${describeValue(ref)}`);
    const points = list.map((c) => (isRecord(c) && typeof c.points === 'number' ? c.points : 0));
    const integerScale = points.some((p) => Math.abs(p) > 1);
    const items = list.map((c, i) => {
      const at = `rubric item ${i + 1}`;
      if (!isRecord(c)) throw bad(`${at} must be an object {"criterion", "points"}, found ${describeValue(c)}`);
      if (typeof c.criterion !== 'string' || c.criterion.trim() === '')
        throw bad(`${at}: "criterion" must be a non-empty string, found ${describeValue(c.criterion)}`);
      if (typeof c.points !== 'number' || !Number.isFinite(c.points) || c.points === 0)
        throw bad(`${at}: "points" must be a non-zero number, found ${describeValue(c.points)}`);
      return {
        id: `c${i + 1}`,
        title: c.criterion.trim(),
        description: '',
        category: category(c.points, integerScale),
        weight: c.points,
      };
    });
    if (value.id !== undefined && typeof value.id !== 'string' && typeof value.id !== 'number')
      throw bad(`"id" must be a string or a number, found ${describeValue(value.id)}`);
    const id = value.id === undefined ? `${fileName}:${line}` : String(value.id);
    if (ids.has(id)) throw bad(`duplicate id ${JSON.stringify(id)}`);
    ids.add(id);
    const rubric = validateRubric({ id, title: question.slice(0, 80), items }, {}, where);
    rows.push({
      index: rows.length,
      line,
      id,
      question,
      referenceAnswer: typeof ref === 'string' && ref.trim() !== '' ? ref : null,
      rubric,
    });
  }
  return rows;
}
