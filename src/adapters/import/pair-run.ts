/**
 * Predictions of a run, checked against the dataset before anything is evaluated: a file made
 * for another dataset is refused with a message instead of being scored against the wrong gold.
 */
import { createSHA256 } from 'hash-wasm';
import { WorkbenchError } from '../../core/errors.ts';
import { BIRD_SEPARATOR, pairPredictions, parsePredictions } from '../../core/formats/predictions.ts';
import type { PairJob, PairedPredictions } from '../../../workers/import.api.ts';

/** Share of BIRD prediction values whose db name must agree with the gold line at that key. */
const MIN_DB_AGREEMENT = 0.5;

function birdDbNames(text: string): Array<[number, string]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return [];
  const out: Array<[number, string]> = [];
  for (const [key, value] of Object.entries(parsed)) {
    if (!/^\d+$/.test(key) || typeof value !== 'string') continue;
    const parts = value.split(BIRD_SEPARATOR);
    if (parts.length === 2) out.push([Number(key), parts[1]!.trim()]);
  }
  return out;
}

export async function sha256Text(text: string): Promise<{ sha256: string; bytes: number }> {
  const bytes = new TextEncoder().encode(text);
  const h = await createSHA256();
  h.init();
  h.update(bytes);
  return { sha256: h.digest('hex'), bytes: bytes.length };
}

export async function pairRunPredictions(job: PairJob): Promise<PairedPredictions> {
  const { predictionsName: name, predictionsText: text, questions, gold } = job;
  const preds = parsePredictions(text, name, { fence: job.fence });
  const positional = preds.every((p) => p.questionId === null);
  if (positional) {
    const named = birdDbNames(text);
    if (named.length > 0) {
      const agree = named.filter(([k, db]) => gold[k]?.dbId === db).length;
      if (agree < named.length * MIN_DB_AGREEMENT) {
        const [k, db] = named.find(([k2, db2]) => gold[k2]?.dbId !== db2)!;
        throw new WorkbenchError(
          'MISMATCH',
          `these predictions are for another dataset: only ${agree} of ${named.length} name the database of the question ` +
            `at their position (e.g. "${k}" names ${db}, but question ${k} of this dataset is about ${gold[k]?.dbId ?? 'nothing: there is no such question'}). ` +
            'Choose the dataset these predictions were made for.',
          name,
        );
      }
    }
    if (preds.length !== gold.length) {
      throw new WorkbenchError(
        'MISMATCH',
        `${preds.length} predictions for a dataset of ${gold.length} questions: predictions are paired with questions by position, ` +
          'so they must be for this dataset and complete. Choose the dataset these predictions were made for.',
        name,
      );
    }
  }
  const { items, warnings } = pairPredictions(preds, gold, questions, name);
  return { items, warnings, ...(await sha256Text(text)) };
}
