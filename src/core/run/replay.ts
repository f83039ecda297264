/**
 * Replay runs, the pure part: the one place that sequences parse -> pair -> evaluate ->
 * summarise. `planReplay` parses a predictions file and pairs it with the gold under the shared
 * pairing policy (src/core/formats/pairing.ts); `runEvaluation` sends items through the
 * SqlExecutor port, hands every finished sample to a sink as it arrives, and summarises the
 * results with the one summary of src/core/eval/summary.ts. The CLI, the app's runs, the gold
 * self-test, the probe, the explorer's previews and the bench all call these two; the hosts
 * only supply the executor, the sink and the signal. `runGeneration` (generation.ts) is the
 * twin for runs whose SQL comes from an engine.
 */
import type { AbortSignalLike, EvalEvent, EvalOptions, ItemPreview, SqlExecutor } from '../eval/executor.ts';
import { summarize, type Summary } from '../eval/summary.ts';
import { findingsError, pairingFindings, type PairingFinding } from '../formats/pairing.ts';
import { pairPredictions, parsePredictions } from '../formats/predictions.ts';
import { predictionsFromRecords } from '../formats/prediction-records.ts';
import type { SourceRecord } from '../formats/records.ts';
import type { EvalItem, GoldEntry, ItemResult, Question } from '../types.ts';
import { sampleKey } from '../eval/constants.ts';
import { isCancellation } from '../errors.ts';

export interface ReplayInputs {
  /** A predictions file's text, or the records of a tabular file (Parquet rows) in the JSONL columns. */
  predictions: { name: string; text: string } | { name: string; records: readonly SourceRecord[] };
  gold: readonly GoldEntry[];
  /** The questions file (question ids, difficulties); null pairs by gold line. */
  questions: readonly Question[] | null;
  /** Which fenced block extraction takes from completions. */
  fence?: 'first' | 'last';
}

export interface ReplayPlan {
  items: EvalItem[];
  /** Notes that do not change what is scored (questions without a prediction...). */
  warnings: string[];
  /** What is suspicious about the pairing (see pairing.ts); the scores stand as official. */
  findings: PairingFinding[];
}

/**
 * Parses and pairs a predictions file. With `strict`, any pairing finding is an error (the
 * CLI's `--strict`, and the app, which refuses to start a run on such a file).
 */
export function planReplay(inputs: ReplayInputs, options: { strict?: boolean } = {}): ReplayPlan {
  const { name } = inputs.predictions;
  const extract = { fence: inputs.fence };
  const preds = 'records' in inputs.predictions
    ? predictionsFromRecords(inputs.predictions.records, name, extract)
    : parsePredictions(inputs.predictions.text, name, extract);
  const gold = [...inputs.gold];
  const findings = pairingFindings(preds, gold, name);
  if (options.strict && findings.length > 0) throw findingsError(findings);
  const { items, warnings } = pairPredictions(preds, gold, inputs.questions ? [...inputs.questions] : null, name);
  return { items, warnings, findings };
}

/** Items of `items` whose gold position is in `indices`; every item when `indices` is empty. */
export function selectItems(items: readonly EvalItem[], indices: readonly number[]): EvalItem[] {
  if (indices.length === 0) return [...items];
  const wanted = new Set(indices);
  return items.filter((it) => wanted.has(it.index));
}

/** Items of `items` whose sample is not in `stored` (a resumed run). */
export function remainingItems(items: readonly EvalItem[], stored: ReadonlySet<string>): EvalItem[] {
  return items.filter((it) => !stored.has(sampleKey(it)));
}

export interface EvaluationPorts {
  executor: SqlExecutor;
  /** Receives each finished sample with its item (and rows, when options.previewRows > 0). */
  sink?: (result: ItemResult, item: EvalItem, preview: ItemPreview | null) => void;
  signal?: AbortSignalLike;
  /** Progress and executor events; `done`/`total` count from `doneBefore`. */
  onEvent?: (e: EvalEvent) => void;
  /** Samples already stored before this call (a resumed run); they count in `done` and `total`. */
  doneBefore?: number;
  now?: () => number;
}

export interface EvaluationOutcome {
  /** Results in item order; only those finished when the signal stopped the run. */
  results: ItemResult[];
  summary: Summary;
  /** The signal stopped the evaluation before every item finished. */
  cancelled: boolean;
  elapsedMs: number;
}


/**
 * Evaluates `items` with the executor and summarises them. A stop by the signal is not an
 * error: the outcome says `cancelled` and holds what finished. Any other failure throws.
 */
export async function runEvaluation(items: readonly EvalItem[], options: EvalOptions, ports: EvaluationPorts): Promise<EvaluationOutcome> {
  const now = ports.now ?? (() => Date.now());
  const started = now();
  const doneBefore = ports.doneBefore ?? 0;
  const total = doneBefore + items.length;
  const itemOf = new Map(items.map((it) => [sampleKey(it), it]));
  const finished = new Map<string, ItemResult>();
  let cancelled = false;
  let results: ItemResult[] = [];
  if (items.length > 0) {
    try {
      results = await ports.executor.evaluate(items, options, {
        signal: ports.signal,
        onEvent: (e) => {
          if (e.type !== 'item') return ports.onEvent?.(e);
          const key = sampleKey(e.result);
          finished.set(key, e.result);
          ports.sink?.(e.result, itemOf.get(key)!, e.preview);
          ports.onEvent?.({ ...e, done: doneBefore + e.done, total });
        },
      });
    } catch (err) {
      if (!isCancellation(err) && !ports.signal?.aborted) throw err;
      cancelled = true;
      results = items.flatMap((it) => finished.get(sampleKey(it)) ?? []);
    }
  }
  if (ports.signal?.aborted && results.length < items.length) cancelled = true;
  return { results, summary: summarize(results, options.metrics), cancelled, elapsedMs: now() - started };
}
