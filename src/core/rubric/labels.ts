/**
 * Human labels of rubric responses (pure): what a labeller said about one criterion of one
 * response, or about a whole response (pass / fail), as plain data; JSON Lines in and out so
 * several people can label apart and merge their files.
 *
 * A response is named by content, not by a run: the dataset file's sha256, the question's row
 * id and the sha256 of the completion text. A label therefore applies to that response in any
 * run (and any browser) that holds the same dataset and the same completion.
 */
import { WorkbenchError } from '../errors.ts';
import { describeValue, isRecord } from '../formats/questions.ts';
import { sha256Hex } from '../util/sha256.ts';

export interface HumanLabel {
  /** Who labelled (as typed by the labeller). */
  labeller: string;
  /** sha256 of the dataset file. */
  dataset: string;
  /** The question's row id. */
  question: string;
  /** The sample number in the run it was labelled in (informational; the response hash names it). */
  sample: number;
  /** sha256 of the completion text. */
  response: string;
  /** The rubric item's id, or null for the whole response. */
  criterion: string | null;
  /** Met (criterion) or pass (whole response). */
  value: boolean;
  /** When it was labelled, ISO 8601. */
  at: string;
}

export const responseHash = (completion: string): string => sha256Hex(completion);

/** One label per (labeller, dataset, question, response, criterion). */
export function labelKey(l: Pick<HumanLabel, 'labeller' | 'dataset' | 'question' | 'response' | 'criterion'>): string {
  return JSON.stringify([l.labeller, l.dataset, l.question, l.response, l.criterion]);
}

/** The item of a label without its labeller: where two labellers' labels meet. */
export function itemKey(l: Pick<HumanLabel, 'dataset' | 'question' | 'response' | 'criterion'>): string {
  return JSON.stringify([l.dataset, l.question, l.response, l.criterion]);
}

const FIELDS = ['labeller', 'dataset', 'question', 'sample', 'response', 'criterion', 'value', 'at'] as const;
const HEX64 = /^[0-9a-f]{64}$/;
const MAX_LABELLER = 200;

/** Trims a labeller's name; refuses an empty or overlong one. */
export function checkLabeller(name: string): string {
  const t = name.trim();
  if (!t) throw new WorkbenchError('BAD_OPTION', 'type your name first: every label records who labelled it');
  if (t.length > MAX_LABELLER)
    throw new WorkbenchError('BAD_OPTION', `a labeller's name has at most ${MAX_LABELLER} characters`);
  return t;
}

function parseLabel(value: unknown, where: string): HumanLabel {
  const bad = (msg: string) => new WorkbenchError('BAD_FORMAT', msg, where);
  if (!isRecord(value))
    throw bad(`expected a label object {${FIELDS.map((f) => `"${f}"`).join(', ')}}, found ${describeValue(value)}`);
  for (const k of Object.keys(value))
    if (!(FIELDS as readonly string[]).includes(k))
      throw bad(`unknown field "${k}" (a label has ${FIELDS.join(', ')})`);
  const { labeller, dataset, question, sample, response, criterion, at } = value;
  if (
    typeof labeller !== 'string' ||
    !labeller.trim() ||
    labeller.length > MAX_LABELLER ||
    labeller !== labeller.trim()
  )
    throw bad(
      `"labeller" must be a non-empty name without surrounding spaces (at most ${MAX_LABELLER} characters), found ${describeValue(labeller)}`,
    );
  if (typeof dataset !== 'string' || !HEX64.test(dataset))
    throw bad(`"dataset" must be the dataset file's sha256 (64 lowercase hex digits), found ${describeValue(dataset)}`);
  if (typeof question !== 'string' || !question)
    throw bad(`"question" must be the question's row id, found ${describeValue(question)}`);
  if (typeof sample !== 'number' || !Number.isInteger(sample) || sample < 0)
    throw bad(`"sample" must be an integer ≥ 0, found ${describeValue(sample)}`);
  if (typeof response !== 'string' || !HEX64.test(response))
    throw bad(`"response" must be the completion's sha256 (64 lowercase hex digits), found ${describeValue(response)}`);
  if (criterion !== null && (typeof criterion !== 'string' || !criterion))
    throw bad(
      `"criterion" must be a rubric item's id, or null for the whole response, found ${describeValue(criterion)}`,
    );
  if (typeof value.value !== 'boolean')
    throw bad(`"value" must be true (met / pass) or false, found ${describeValue(value.value)}`);
  if (typeof at !== 'string' || !/^\d{4}-\d\d-\d\dT/.test(at) || !Number.isFinite(Date.parse(at)))
    throw bad(`"at" must be an ISO 8601 time such as "2026-12-07T11:00:00.000Z", found ${describeValue(at)}`);
  return {
    labeller,
    dataset,
    question,
    sample,
    response,
    criterion,
    value: value.value,
    at: new Date(at).toISOString(),
  };
}

/**
 * Parses a labels file: one label object per line (blank lines ignored). The first bad line
 * is refused naming the file and line; nothing is returned then. Within the file, two labels
 * of one labeller for one item follow `mergeLabels` (the later `at` wins).
 */
export function parseLabelsJsonl(text: string, fileName: string): HumanLabel[] {
  const out: HumanLabel[] = [];
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (!line) continue;
    const where = `${fileName}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new WorkbenchError(
        'BAD_JSON',
        `not valid JSON (${err instanceof Error ? err.message : String(err)})`,
        where,
      );
    }
    out.push(parseLabel(value, where));
  }
  if (out.length === 0)
    throw new WorkbenchError('BAD_FORMAT', 'no labels: one JSON object per line, as the app exports them', fileName);
  return mergeLabels([], out).labels;
}

export function labelsToJsonl(labels: readonly HumanLabel[]): string {
  return labels.map((l) => JSON.stringify(Object.fromEntries(FIELDS.map((f) => [f, l[f]])))).join('\n') + '\n';
}

export interface LabelMerge {
  labels: HumanLabel[];
  /** Incoming labels for an item their labeller had not labelled. */
  added: number;
  /** Incoming labels later than the stored one, which they replace. */
  replaced: number;
  /** Incoming labels not later than the stored one (kept as stored). */
  ignored: number;
}

/**
 * Merges incoming labels into stored ones: one label per labeller and item; of two, the one
 * with the later `at` wins, and on equal times the stored one is kept. Other labellers'
 * labels of the same item are all kept.
 */
export function mergeLabels(stored: readonly HumanLabel[], incoming: readonly HumanLabel[]): LabelMerge {
  const map = new Map(stored.map((l) => [labelKey(l), l]));
  let added = 0;
  let replaced = 0;
  let ignored = 0;
  for (const l of incoming) {
    const k = labelKey(l);
    const old = map.get(k);
    if (!old) {
      added += 1;
      map.set(k, l);
    } else if (Date.parse(l.at) > Date.parse(old.at)) {
      replaced += 1;
      map.set(k, l);
    } else ignored += 1;
  }
  return { labels: [...map.values()], added, replaced, ignored };
}
