/**
 * The run recipe: the steps around the evaluation loop, in one place, for every host (the
 * CLI's `eval`, `harness`, `batch import` and `gold-check`, the app's runs, resumes, self-test
 * and generation runs, the overlay comparison, the probe, the explorer's previews):
 *
 *   reward formula -> database facts (`readDbFacts`: SQLite version, column types)
 *   -> reward annotations (version features, gold issues) -> the executor's options
 *   (`evalOptionsOf`) -> `runEvaluation` -> sample records (`toSampleRecord`) -> summary, score.
 *
 * `scoreRun` does all of it for a list of items; `generationScorer` is the same steps for the
 * generation loop (runGeneration scores one question at a time: each database's facts are read
 * once, on its first question), and `runFormula`/`toSampleRecord` are what the loop uses to turn
 * results into records. Hosts supply the executor, the question texts, the sink and the signal.
 */
import {
  type AbortSignalLike,
  type EvalEvent,
  type EvalOptions,
  type ItemPreview,
  type SqlExecutor,
} from '../eval/executor.ts';
import { summarize, type Summary } from '../eval/summary.ts';
import { WorkbenchError } from '../errors.ts';
import { compileRewardFormula, formatReward, type RewardFormula } from '../eval/reward.ts';
import { readDbFacts, type DbFacts } from '../eval/db-facts.ts';
import type { ColumnTypes } from '../sql/version-features.ts';
import type { EvalItem, ItemResult } from '../types.ts';
import { rewardAnnotator } from './item-annotations.ts';
import { cachingExecutor, factsKey, validFacts, type VerdictCachePort } from './verdict-cache.ts';
import { runEvaluation, type EvaluationOutcome } from './replay.ts';
import type { RunConfig, RunHeader, SampleRecord } from './types.ts';

export interface ScoreRunPorts {
  executor: SqlExecutor;
  /** The question text of a gold position (the gold checks' count/list rule); absent when the dataset is unknown. */
  questionOf?: (index: number) => string | null;
  signal?: AbortSignalLike;
  onEvent?: (e: EvalEvent) => void;
  /** Samples already stored (a resumed run); they count in progress. */
  doneBefore?: number;
  /** Identical items take the verdict of the first (reuse.ts); default on. */
  reuse?: boolean;
  /** Receives each finished sample's record as it arrives (with rows, when `previewRows` > 0). */
  sink?: (record: SampleRecord, preview: ItemPreview | null) => void;
  /** Rows of each result kept for display (the explorer's preview); default 0. */
  previewRows?: number;
  /**
   * Database facts and findings (version features, gold issues); default true. Off only for
   * runs whose results are not stored as a run's samples (the probe, a preview of one sample).
   */
  findings?: boolean;
  /** Facts already read (a generation run's earlier questions); only databases not in it are read. */
  facts?: DbFacts;
  /**
   * The verdict cache (verdict-cache.ts): cacheable items whose verdict it holds are answered
   * from it, the others executed and their verdicts stored. Used once the facts have told the
   * SQLite version (never with `findings` off, which reads none).
   */
  verdictCache?: VerdictCachePort;
  now?: () => number;
}

interface ScoredRun extends EvaluationOutcome {
  /** One record per result, in the same order. */
  records: SampleRecord[];
  /** The SQLite version and column types the findings used (empty when `findings` is off). */
  facts: DbFacts;
  formula: RewardFormula;
  /** The run list's score of these results (the summary's total). */
  score: RunScore;
  /** Positions (in `items`) whose verdict came from the verdict cache. */
  fromCache: ReadonlySet<number>;
}

type RunScore = NonNullable<RunHeader['score']>;

/** The reward formula of a run's configuration (`ex` when none is given). */
export function runFormula(config: Pick<RunConfig, 'rewardFormula'>): RewardFormula {
  return compileRewardFormula(config.rewardFormula || 'ex');
}

/**
 * The executor's request for a run's settings (the one builder: hosts give the recipe their
 * `RunConfig`, never `EvalOptions`); rows are kept for display only when asked. The TS suite
 * goes with the request when the settings have one; the execution match only when it is
 * Spider's (BIRD's is the executor's default, and a request without it keys the verdict cache
 * as before).
 */
export function evalOptionsOf(config: RunConfig, previewRows = 0): EvalOptions {
  return {
    metrics: [...config.metrics],
    timeoutMs: config.timeoutMs,
    readOnly: config.readOnly,
    vesIterations: config.vesIterations,
    previewRows,
    ...(config.suite ? { suite: config.suite } : {}),
    ...(config.exRule === 'spider' ? { exRule: config.exRule } : {}),
  };
}

/** A sample's record: its result, what was asked and written, the format reward and the formula's reward. */
export function toSampleRecord(item: EvalItem, r: ItemResult, formula: RewardFormula): SampleRecord {
  const format = formatReward(r.extraction.rule);
  // The executor's identity of the database is the cache's business, not the record's.
  const { dbSha256: _executedOn, ...result } = r;
  const rec: SampleRecord = {
    ...result,
    sample: r.sample ?? item.sample ?? 0,
    sql: item.predSql,
    goldSql: item.goldSql,
    format,
    reward: formula.evaluate({ ex: r.ex, format, softF1: r.softF1, ts: r.ts }),
  };
  if (item.completion !== undefined) rec.completion = item.completion;
  if (item.meanLogprob !== undefined) rec.meanLogprob = item.meanLogprob;
  if (item.episode !== undefined) rec.episode = item.episode;
  return rec;
}

/** One sample per item. Items and results are parallel. */
export function toSampleRecords(
  items: readonly EvalItem[],
  results: readonly ItemResult[],
  formula: RewardFormula,
): SampleRecord[] {
  if (items.length !== results.length)
    throw new WorkbenchError('INTERNAL', `${items.length} items but ${results.length} results`);
  return results.map((r, i) => toSampleRecord(items[i]!, r, formula));
}

/** The score a run list shows: total EX, scored questions, samples (the dashboard's summary). */
export function scoreOfSummary(summary: Summary): RunScore {
  const total = summary.byDifficulty.total;
  return { ex: total.ex, questions: total.count, samples: total.samples };
}

/** The score of a run's stored samples (a resumed, generated or imported run). */
export function scoreOf(samples: readonly SampleRecord[], metrics: RunConfig['metrics']): RunScore {
  return scoreOfSummary(summarize(samples, metrics));
}

const NO_FACTS: DbFacts = { sqliteVersion: null, columnTypes: {} };

/**
 * `known` plus the facts of the databases of `dbIds` it lacks: remembered by the verdict cache
 * from an earlier run of the same executor, else read through the executor (and then remembered).
 */
export async function factsFor(
  executor: SqlExecutor,
  dbIds: readonly string[],
  known: DbFacts | undefined,
  signal?: AbortSignalLike,
  cache?: VerdictCachePort,
): Promise<DbFacts> {
  let unread = [...new Set(dbIds)].filter((d) => !known || !(d in known.columnTypes));
  if (known && unread.length === 0) return known;
  const columnTypes: Record<string, ColumnTypes> = { ...known?.columnTypes };
  let sqliteVersion = known?.sqliteVersion ?? null;
  /** Databases read here, whose facts are kept (under the sha256 of the bytes they were read from). */
  const toKeep = new Set<string>();
  const store = cache?.facts;
  if (cache && store) {
    const left: string[] = [];
    for (const dbId of unread) {
      // A database without a sha256 (missing, unreadable) is read as usual: its items fail the same way.
      const sha = await cache.dbSha256(dbId);
      const key = sha === null ? null : factsKey(cache.executor, sha);
      const remembered = key === null ? undefined : await store.getFacts(key).catch(() => undefined);
      if (remembered !== undefined && validFacts(remembered)) {
        columnTypes[dbId] = remembered.columnTypes;
        sqliteVersion ??= remembered.sqliteVersion;
      } else {
        left.push(dbId);
        if (key !== null) toKeep.add(dbId);
      }
    }
    unread = left;
  }
  if (unread.length === 0) return { sqliteVersion, columnTypes };
  const read = await readDbFacts(executor, unread, signal);
  // A database that could not be read (missing, failed) is absent: its items scan with unknown types.
  Object.assign(columnTypes, read.columnTypes);
  sqliteVersion ??= read.sqliteVersion;
  for (const dbId of toKeep) {
    const types = read.columnTypes[dbId];
    const readFrom = read.readFrom[dbId];
    if (read.sqliteVersion === null || !types || readFrom === undefined) continue;
    const key = factsKey(cache!.executor, readFrom);
    const facts = { sqliteVersion: read.sqliteVersion, columnTypes: types as Record<string, Record<string, string>> };
    // Facts not kept cost a read in a later run, never this run.
    await store!.putFacts(key, facts).catch(() => undefined);
  }
  return { sqliteVersion, columnTypes };
}

/**
 * Scores `items` as a run: facts, findings, evaluation, records, summary and score. A stop by
 * the signal is not an error (`cancelled`, with what finished); any other failure throws.
 */
export async function scoreRun(
  items: readonly EvalItem[],
  config: RunConfig,
  ports: ScoreRunPorts,
): Promise<ScoredRun> {
  const formula = runFormula(config);
  const findings = ports.findings ?? true;
  const facts = findings
    ? await factsFor(
        ports.executor,
        items.map((it) => it.dbId),
        ports.facts,
        ports.signal,
        ports.verdictCache,
      )
    : // Without findings nothing is read; facts the host knows still key the verdict cache.
      (ports.facts ?? NO_FACTS);
  const annotate = findings
    ? rewardAnnotator({ columnTypes: facts.columnTypes, questionOf: ports.questionOf })
    : undefined;
  // The loop hands each result (the object it returns in `results`) to the sink with its item.
  const recordOf = new Map<ItemResult, SampleRecord>();
  const sink = ports.sink;
  const cache = ports.verdictCache;
  const caching =
    cache && facts.sqliteVersion !== null
      ? cachingExecutor(ports.executor, {
          store: cache.store,
          dbSha256: cache.dbSha256,
          context: { executor: cache.executor, sqliteVersion: facts.sqliteVersion },
        })
      : null;
  const outcome = await runEvaluation(items, evalOptionsOf(config, ports.previewRows ?? 0), {
    executor: caching ?? ports.executor,
    signal: ports.signal,
    onEvent: ports.onEvent,
    doneBefore: ports.doneBefore,
    reuse: ports.reuse,
    now: ports.now,
    annotate,
    sink: (result, item, preview) => {
      const record = toSampleRecord(item, result, formula);
      recordOf.set(result, record);
      sink?.(record, preview);
    },
  });
  const records = outcome.results.map((r) => recordOf.get(r)!);
  return {
    ...outcome,
    records,
    facts,
    formula,
    score: scoreOfSummary(outcome.summary),
    fromCache: caching?.stats.hitSamples ?? new Set(),
  };
}

/**
 * The generation loop's `evaluate` port (GenerationPorts): each question's items scored by the
 * recipe, with each database's facts read once (on its first question) and the run's findings.
 */
export function generationScorer(
  config: RunConfig,
  ports: Pick<ScoreRunPorts, 'executor' | 'questionOf'>,
): {
  evaluate: (items: EvalItem[], signal?: AbortSignalLike) => Promise<ItemResult[]>;
  /** The facts read so far (the run header's SQLite version). */
  facts: () => DbFacts;
} {
  let facts: DbFacts | undefined;
  return {
    evaluate: async (items, signal) => {
      const scored = await scoreRun(items, config, { ...ports, signal, facts });
      facts = scored.facts;
      return scored.results;
    },
    facts: () => facts ?? NO_FACTS,
  };
}
