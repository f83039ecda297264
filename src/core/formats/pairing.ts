/**
 * The pairing policy shared by the CLI and the app. Positional files (BIRD JSON, `.sql`) are
 * paired as the official evaluator pairs them: value k with gold line k, in file order. That
 * pairing is kept exactly (nothing that scores changes its score), but three things that make
 * it score the wrong answers are reported as findings: a file with another count than the gold,
 * values that name other databases than the gold lines they are paired with, and BIRD keys
 * that are not "0".."n-1" in file order (e.g. keys sorted as strings). The CLI prints findings
 * as warnings (`--strict` makes them errors); the app shows them before a run and refuses to
 * start one while there are any.
 */
import { WorkbenchError } from '../errors.ts';
import type { GoldEntry, Prediction } from '../types.ts';

type PairingFindingCode = 'count-mismatch' | 'other-dataset' | 'key-order';

export interface PairingFinding {
  code: PairingFindingCode;
  /** File the finding is about. */
  file: string;
  /** What is wrong, with counts, and what to do. */
  message: string;
}

/** Share of BIRD values whose database name must agree with the gold line at their position. */
const MIN_DB_AGREEMENT = 0.5;

function countFinding(preds: readonly Prediction[], gold: readonly GoldEntry[], file: string): PairingFinding | null {
  if (preds.length === gold.length) return null;
  const n = Math.min(preds.length, gold.length);
  const dropped =
    preds.length > gold.length
      ? `the ${preds.length - n} predictions beyond the ${n} gold lines were dropped`
      : `only ${n} predictions for ${gold.length} gold lines: the last ${gold.length - n} gold questions were dropped and the scores are over ${n} questions`;
  return {
    code: 'count-mismatch',
    file,
    message:
      `${preds.length} predictions for a dataset of ${gold.length} questions: predictions are paired with questions by position, so ${dropped} ` +
      '(the official evaluator drops them silently). Check that the predictions were made for this dataset and are complete.',
  };
}

function dbFinding(preds: readonly Prediction[], gold: readonly GoldEntry[], file: string): PairingFinding | null {
  const named = preds.filter((p) => p.dbName !== undefined);
  if (named.length === 0) return null;
  const disagree = named.filter((p) => gold[p.position]?.dbId !== p.dbName);
  const agree = named.length - disagree.length;
  if (agree >= named.length * MIN_DB_AGREEMENT) return null;
  const first = disagree[0]!;
  return {
    code: 'other-dataset',
    file,
    message:
      `these predictions are for another dataset: only ${agree} of ${named.length} name the database of the question at their position ` +
      `(e.g. "${first.key ?? first.position}" names ${first.dbName}, but question ${first.position} of this dataset is about ` +
      `${gold[first.position]?.dbId ?? 'nothing: there is no such question'}). Choose the dataset these predictions were made for.`,
  };
}

function keyOrderFinding(preds: readonly Prediction[], file: string): PairingFinding | null {
  const keyed = preds.filter((p) => p.key !== undefined);
  if (keyed.length === 0) return null;
  const off = keyed.filter((p) => p.key !== String(p.position));
  if (off.length === 0) return null;
  const first = off[0]!;
  const numeric = keyed.every((p) => /^\d+$/.test(p.key!));
  const sortedAsText = numeric && keyed.every((p, i) => i === 0 || keyed[i - 1]!.key! < p.key!);
  return {
    code: 'key-order',
    file,
    message:
      `${off.length} of ${keyed.length} keys are not at their own position: the value at position ${first.position} has key "${first.key}"` +
      (sortedAsText ? ' (the keys look sorted as text: "0", "1", "10", "100", ...)' : '') +
      '. The official evaluator ignores the keys and pairs values with gold lines in file order, so these values are scored ' +
      'against other questions. Write the file with its keys in numeric order (Python: json.dump({str(i): preds[i] for i in range(len(preds))}, f)).',
  };
}

/** What is suspicious about pairing `preds` with `gold` by position; empty for files that name their questions. */
export function pairingFindings(
  preds: readonly Prediction[],
  gold: readonly GoldEntry[],
  file: string,
): PairingFinding[] {
  if (preds.some((p) => p.questionId !== null)) return [];
  return [keyOrderFinding(preds, file), dbFinding(preds, gold, file), countFinding(preds, gold, file)].filter(
    (f): f is PairingFinding => f !== null,
  );
}

/** The findings as one error (the app's refusal, the CLI's `--strict`). */
export function findingsError(findings: readonly PairingFinding[]): WorkbenchError {
  const file = findings[0]?.file;
  const text = findings.map((f) => f.message).join(' Also: ');
  return new WorkbenchError('MISMATCH', text, file);
}

/** A finding as a one-line warning that names the file. */
export function findingText(f: PairingFinding): string {
  return `${f.file}: ${f.message}`;
}
