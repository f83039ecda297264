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
import { copyResult, planReuse, shareable } from './reuse.ts';

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
  const preds =
    'records' in inputs.predictions
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

interface EvaluationPorts {
  executor: SqlExecutor;
  /** Receives each finished sample with its item (and rows, when options.previewRows > 0). */
  sink?: (result: ItemResult, item: EvalItem, preview: ItemPreview | null) => void;
  signal?: AbortSignalLike;
  /** Progress and executor events; `done`/`total` count from `doneBefore`. */
  onEvent?: (e: EvalEvent) => void;
  /** Samples already stored before this call (a resumed run); they count in `done` and `total`. */
  doneBefore?: number;
  /** Identical items take the verdict of the first (reuse.ts); default on. */
  reuse?: boolean;
  now?: () => number;
  /** Adds per-item findings that do not change the score (version features, gold checks: item-annotations.ts). */
  annotate?: (result: ItemResult, item: EvalItem) => ItemResult;
}

export interface EvaluationOutcome {
  /** Results in item order; only those finished when the signal stopped the run. */
  results: ItemResult[];
  summary: Summary;
  /** The signal stopped the evaluation before every item finished. */
  cancelled: boolean;
  elapsedMs: number;
  /** Items whose queries were executed, and items that took the verdict of an identical one. */
  executed: number;
  reused: number;
  /** Gold queries executed (an item whose gold came from an earlier one on the pristine database, or whose prediction failed, ran none). */
  goldExecuted: number;
}

/**
 * Evaluates `items` with the executor and summarises them. Identical items are executed once
 * (reuse.ts) unless `ports.reuse` is false. A stop by the signal is not an error: the outcome
 * says `cancelled` and holds what finished. Any other failure throws.
 */
export async function runEvaluation(
  items: readonly EvalItem[],
  options: EvalOptions,
  ports: EvaluationPorts,
): Promise<EvaluationOutcome> {
  const now = ports.now ?? (() => Date.now());
  const started = now();
  const doneBefore = ports.doneBefore ?? 0;
  const total = doneBefore + items.length;
  // Items are told apart by position (a probe repeats (index, sample) across exploits): the
  // executor sees each item with its position as `sample`, and results get their identity back.
  const tagged = items.map((it, i) => ({ ...it, sample: i }));
  const finished: Array<ItemResult | undefined> = new Array(items.length);
  let count = 0;
  const plan = planReuse(tagged, options, ports.reuse ?? true);
  const again: EvalItem[] = [];
  let executed = 0;
  let reused = 0;
  let goldExecuted = 0;
  const deliver = (result: ItemResult, at: number, preview: ItemPreview | null) => {
    const item = items[at]!;
    const copied = copyResult(result, item);
    const own = ports.annotate ? ports.annotate(copied, item) : copied;
    finished[at] = own;
    count++;
    ports.sink?.(own, item, preview);
    ports.onEvent?.({ type: 'item', result: own, preview, done: doneBefore + count, total });
  };
  const settle = (result: ItemResult, preview: ItemPreview | null, copies: boolean) => {
    const at = result.sample!;
    if (finished[at]) return;
    executed++;
    if (!result.goldReused && (result.goldRowCount !== null || result.error?.startsWith('gold: '))) goldExecuted++;
    deliver(result, at, preview);
    // The key under which this item's duplicates wait, if it is a reusable first item (planReuse).
    const key = copies ? plan.keyOf.get(tagged[at]!) : undefined;
    const dups = key === undefined ? undefined : plan.waiting.get(key);
    if (!dups) return;
    plan.waiting.delete(key!);
    if (!shareable(result)) return void again.push(...dups);
    for (const d of dups) {
      reused++;
      deliver(result, d.sample!, preview);
    }
  };
  const execOptions: EvalOptions = { ...options, reuse: ports.reuse ?? true };
  const pass = async (batch: readonly EvalItem[], copies: boolean) => {
    const out = await ports.executor.evaluate(batch, execOptions, {
      signal: ports.signal,
      onEvent: (e) => {
        if (e.type === 'item') return settle(e.result, e.preview, copies);
        // The executor saw positions as sample numbers: a started item gets its own back.
        ports.onEvent?.(e.type === 'item-started' ? { ...e, sample: items[e.sample]?.sample ?? 0 } : e);
      },
    });
    // An executor that reports no item events (a test double) still has its results settled.
    for (const r of out) settle(r, null, copies);
  };
  let cancelled = false;
  try {
    if (plan.first.length > 0) await pass(plan.first, true);
    if (again.length > 0) await pass(again, false);
  } catch (err) {
    if (!isCancellation(err) && !ports.signal?.aborted) throw err;
    cancelled = true;
  }
  const results = finished.filter((r): r is ItemResult => r !== undefined);
  if (results.length < items.length && ports.signal?.aborted) cancelled = true;
  return {
    results,
    summary: summarize(results, options.metrics),
    cancelled,
    elapsedMs: now() - started,
    executed,
    reused,
    goldExecuted,
  };
}
