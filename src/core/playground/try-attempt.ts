/**
 * One attempt at one question, with every signal the product computes for a sample: the
 * official verdict (EX, Soft-F1, R-VES, TS with its counterexample) through the same loop and
 * annotations as a run, the verdict under read-only evaluation when the SQL writes, what a write
 * changed (census.ts), the rubric's programmatic checks, the reward formula, the probe's exploit
 * class and the explanation of the verdict. Pure orchestration over the SqlExecutor port, so
 * the browser playground and a test in Node run the same code.
 */
import {
  type AbortSignalLike,
  type EvalEvent,
  type ItemPreview,
  type MetricName,
  type SqlExecutor,
} from '../eval/executor.ts';
import { WorkbenchError, errorMessage } from '../errors.ts';
import { checkFormulaMetrics, compileRewardFormula, type RewardFormula } from '../eval/reward.ts';
import { BIRD_RUBRIC } from '../rubric/bird-rubric.ts';
import { executionFacts, runSqlCheck, type CheckOutcome } from '../rubric/sql-checks.ts';
import { isWord, tokenizeSql } from '../sql/sql-tokens.ts';
import { spiderOrderMatters, spiderQueryText } from '../sql/spider-text.ts';
import type { ExRule } from '../compare/spider-ex.ts';
import { readDbFacts, type DbFacts } from '../eval/db-facts.ts';
import { evalOptionsOf, scoreRun, toSampleRecord } from '../run/score-run.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig, type SampleRecord } from '../run/types.ts';
import type { OverlayItemRecord } from '../run/overlay-record.ts';
import type { SuiteSpec } from '../ts/suite.ts';
import type { ProbeQuestion } from '../probe/exploits.ts';
import type { EvalItem, ItemResult } from '../types.ts';
import { attemptFlags, type AttemptFlags } from './attempt-flags.ts';
import {
  countCensusSql,
  diffCensus,
  readCountCensus,
  readSchemaCensus,
  SCHEMA_CENSUS_SQL,
  type Census,
  type DbChange,
} from './census.ts';
import { explainVerdict, type Explanation } from './explain.ts';

/** A question as the playground shows it: what the probe needs of it, and its evidence. */
export interface PlaygroundQuestion extends ProbeQuestion {
  evidence: string;
}

export interface AttemptRequest {
  question: PlaygroundQuestion;
  sql: string;
  /** `ex` and `soft-f1` always run; add `ts` and `r-ves` to have them. */
  metrics: readonly MetricName[];
  timeoutMs: number;
  /** R-VES repetitions (official 100); used only with `r-ves`. */
  vesIterations: number;
  /** The reward formula (src/core/rl/reward.ts), e.g. `ex` or `0.9 * ex + 0.1 * format`. */
  formula: string;
  suite?: SuiteSpec;
  /** First rows of each side kept for the tables and the explanation. */
  previewRows: number;
  /** Read what a write changed (two more executions of the SQL); default true, off for the tour's scan. */
  census?: boolean;
  /**
   * The execution match of EX (docs/spider-rules.md): the one a run on the question's dataset
   * uses (the run's own when the playground was opened from a run's item). Default BIRD's.
   */
  exRule?: ExRule;
  /**
   * The corrected gold of the question under the run's overlay (corrected-gold.ts), when it
   * changes the official one: the attempt is scored against it too, through the same recipe.
   */
  correctedGoldSql?: string | null;
}

/** The attempt's verdict against the corrected gold (EX and Soft-F1, as a run's overlay stores them). */
type CorrectedVerdict = Pick<OverlayItemRecord, 'goldSql' | 'ex' | 'softF1' | 'status' | 'error' | 'goldRowCount'>;

interface RubricCheckOutcome {
  id: string;
  title: string;
  category: string;
  outcome: CheckOutcome;
}

export interface AttemptReport {
  /** The official verdict as a run would store it (`reward` from the formula, or 0 when it failed). */
  record: SampleRecord;
  preview: ItemPreview | null;
  /** The verdict with writes refused; null when the SQL does not write (the verdict would be the same). */
  readOnly: ItemResult | null;
  /** What the SQL changed before the gold ran; null when it does not write. */
  changes: DbChange[] | null;
  flags: AttemptFlags;
  explanation: Explanation;
  rubric: RubricCheckOutcome[];
  /** The formula's value, or null with `formulaError` when the formula is invalid or needs a metric that did not run. */
  reward: number | null;
  formulaError: string | null;
  sqliteVersion: string | null;
  /** The EX rule the verdict was given under. */
  exRule: ExRule;
  /** The metrics that ran (EX and Soft-F1 always; TS and R-VES when asked). */
  metrics: MetricName[];
  /** The verdict against the run's corrected gold; null when no overlay corrects this question. */
  corrected: CorrectedVerdict | null;
}

interface AttemptHooks {
  signal?: AbortSignalLike;
  onEvent?: (e: EvalEvent) => void;
  /** Facts of the question's database read before (the playground keeps them per database). */
  facts?: DbFacts;
}

const itemOf = (q: PlaygroundQuestion, predSql: string, sample = 0): EvalItem => ({
  index: q.index,
  questionId: q.questionId,
  dbId: q.dbId,
  difficulty: q.difficulty,
  predSql,
  goldSql: q.goldSql,
  extraction: { rule: 'sql-field', thinkStripped: false },
  sample,
});

/** Rows of a census kept: all of them (a database's tables, or one count per table). */
const CENSUS_ROWS = 100_000;

/** Runs census items (prediction, then a census as "gold") and returns each item's gold rows. */
async function censusRows(
  executor: SqlExecutor,
  q: PlaygroundQuestion,
  pairs: readonly { pred: string; census: string }[],
  timeoutMs: number,
  signal?: AbortSignalLike,
) {
  const items = pairs.map((p, i) => ({ ...itemOf(q, p.pred, i), goldSql: p.census }));
  const rows: (unknown[][] | null)[] = pairs.map(() => null);
  await executor.evaluate(
    items,
    // EX only, every row of the census kept; each census runs (no item shares another's verdict).
    {
      ...evalOptionsOf({ ...DEFAULT_RUN_CONFIG, metrics: ['ex'], timeoutMs, vesIterations: 0 }, CENSUS_ROWS),
      reuse: false,
    },
    {
      signal,
      onEvent: (e) => {
        if (e.type === 'item' && e.preview && e.result.status === 'ok') rows[e.result.sample ?? 0] = e.preview.goldRows;
      },
    },
  );
  return rows;
}

async function censusOf(
  executor: SqlExecutor,
  q: PlaygroundQuestion,
  pred: string,
  timeoutMs: number,
  signal?: AbortSignalLike,
): Promise<Census | null> {
  const [schemaRows] = await censusRows(executor, q, [{ pred, census: SCHEMA_CENSUS_SQL }], timeoutMs, signal);
  if (!schemaRows) return null;
  const schema = readSchemaCensus(schemaRows as never);
  const tables = schema.filter((o) => o.type === 'table').map((o) => ({ db: o.db, name: o.name }));
  const countSql = countCensusSql(tables);
  const [countRows] = countSql ? await censusRows(executor, q, [{ pred, census: countSql }], timeoutMs, signal) : [[]];
  return { schema, counts: readCountCensus((countRows ?? []) as never) };
}

function schemaOf(facts: DbFacts, dbId: string): Record<string, string[]> | null {
  const types = facts.columnTypes[dbId];
  if (!types) return null;
  return Object.fromEntries(Object.entries(types).map(([t, cols]) => [t, Object.keys(cols)]));
}

export async function tryAttempt(
  executor: SqlExecutor,
  req: AttemptRequest,
  hooks: AttemptHooks = {},
): Promise<AttemptReport> {
  const q = req.question;
  const metrics: MetricName[] = ['ex', 'soft-f1', ...req.metrics.filter((m) => m === 'ts' || m === 'r-ves')];
  const facts = hooks.facts ?? (await readDbFacts(executor, [q.dbId], hooks.signal));
  const item = itemOf(q, req.sql);
  let preview: ItemPreview | null = null;
  const exRule: ExRule = req.exRule ?? 'bird';
  // The run recipe, as a run scores a sample: findings from the database's facts, rows for the tables.
  const config: RunConfig = {
    ...DEFAULT_RUN_CONFIG,
    metrics,
    timeoutMs: req.timeoutMs,
    readOnly: false,
    vesIterations: metrics.includes('r-ves') ? req.vesIterations : 0,
    ...(req.suite ? { suite: req.suite } : {}),
    ...(exRule === 'spider' ? { exRule } : {}),
  };
  const questionOf = () => q.question;
  const { results } = await scoreRun([item], config, {
    executor,
    signal: hooks.signal,
    onEvent: hooks.onEvent,
    questionOf,
    facts,
    previewRows: req.previewRows,
    reuse: false,
    sink: (_record, p) => void (preview = p),
  });
  const result = results[0];
  if (!result) throw new WorkbenchError('INTERNAL', 'the SQL worker returned no result for the attempt');

  let reward: number | null = null;
  let formulaError: string | null = null;
  let formula: RewardFormula;
  try {
    formula = compileRewardFormula(req.formula);
    checkFormulaMetrics(formula, metrics);
    reward = toSampleRecord(item, result, formula).reward;
  } catch (err) {
    formulaError = errorMessage(err);
    formula = compileRewardFormula('ex');
  }
  const record = toSampleRecord(item, result, formula);
  if (reward === null) record.reward = 0;

  const tables = new Set(Object.keys(facts.columnTypes[q.dbId] ?? {}));
  const flags = attemptFlags({ sql: req.sql, question: q.question, tables, result });
  let readOnly: ItemResult | null = null;
  let changes: DbChange[] | null = null;
  if (flags.writes.length > 0 || result.mutatedDb) {
    const ro = await scoreRun(
      [item],
      { ...config, metrics: ['ex'], readOnly: true, vesIterations: 0 },
      { executor, signal: hooks.signal, questionOf, facts, reuse: false },
    );
    readOnly = ro.results[0] ?? null;
    if (req.census ?? true) {
      const before = await censusOf(executor, q, 'SELECT 1', req.timeoutMs, hooks.signal);
      const after = await censusOf(executor, q, req.sql, req.timeoutMs, hooks.signal);
      changes = before && after ? diffCensus(before, after) : null;
    }
  }

  let corrected: CorrectedVerdict | null = null;
  const correctedGold = req.correctedGoldSql ?? null;
  if (correctedGold !== null && correctedGold !== q.goldSql) {
    // As a run's overlay is scored (core/run/gold-overlay-run.ts): the same recipe and rule, EX and Soft-F1.
    const c = await scoreRun(
      [{ ...item, goldSql: correctedGold }],
      { ...config, metrics: ['ex', 'soft-f1'], vesIterations: 0 },
      { executor, signal: hooks.signal, questionOf, facts, reuse: false, findings: false },
    );
    const cr = c.results[0];
    if (cr)
      corrected = {
        goldSql: correctedGold,
        ex: cr.ex,
        softF1: cr.softF1,
        status: cr.status,
        error: cr.error,
        goldRowCount: cr.goldRowCount,
      };
  }

  // Spider's rule compares in order exactly when its normalised gold text has `order by`.
  const goldOrdered =
    exRule === 'spider'
      ? spiderOrderMatters(spiderQueryText(q.goldSql))
      : tokenizeSql(q.goldSql).some((t, i, all) => isWord(t, 'ORDER') && isWord(all[i + 1], 'BY'));
  const explanation = explainVerdict(result, preview, {
    goldOrdered,
    sqlEmpty: req.sql.trim() === '',
    rule: exRule,
  });
  const execution = executionFacts(result);
  const schema = schemaOf(facts, q.dbId);
  const rubric = BIRD_RUBRIC.items.flatMap((c) =>
    c.check.kind === 'sql'
      ? [
          {
            id: c.id,
            title: c.title,
            category: c.category,
            outcome: runSqlCheck(c.check, { sql: req.sql, execution, schema, evidence: q.evidence }),
          },
        ]
      : [],
  );
  return {
    record,
    preview,
    readOnly,
    changes,
    flags,
    explanation,
    rubric,
    reward,
    formulaError,
    sqliteVersion: facts.sqliteVersion,
    exRule,
    metrics,
    corrected,
  };
}
