import type { ExRule } from '../../core/compare/spider-ex.ts';
import { OFFICIAL_TIMEOUT_S, OFFICIAL_VES_ITERATIONS } from '../../core/eval/constants.ts';
import { METRICS, type MetricName } from '../../core/eval/executor.ts';
import { WorkbenchError } from '../../core/errors.ts';
import {
  checkFormulaFinite,
  checkFormulaMetrics,
  compileRewardFormula,
  DEFAULT_REWARD_FORMULA,
} from '../../core/eval/reward.ts';
import { checkTimerFlags, workersFlag } from '../bounds.ts';
import { parseShard, type Shard } from '../../core/batch/shard.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig } from '../../core/run/types.ts';
import { DEFAULT_SUITE_SPEC, type SuiteSpec } from '../../core/ts/suite.ts';
import { bad, numberFlag, parseFlags, strings, switches } from '../flags.ts';
import { EVAL_USAGE } from '../usage.ts';

export interface EvalArgs {
  /** The first predictions input (the only one of a one-file run). */
  predictions: string;
  /** Every `--predictions` as given (files, folders, globs; eval-files.ts expands them). */
  predictionInputs: string[];
  /** `--out-dir DIR`: one report and one run file per predictions file, and a table of all (needed with several files). */
  outDir: string | null;
  /** `--cache DIR` (default: the user's cache folder) or null for `--no-cache` (src/core/run/verdict-cache.ts). */
  cache: string | null | 'default';
  gold: string;
  dbRoot: string;
  dataset: string | null;
  timeoutS: number;
  workers: number | null;
  readOnly: boolean;
  metrics: MetricName[];
  out: string | null;
  vesIterations: number;
  /** Run file (header + one record per sample) for `stats` and `compare`; `.parquet`: the samples table for DuckDB/pandas. */
  runOut: string | null;
  /** Reward per sample, stored with the run (`ex`, `format`, `soft_f1`, numbers, + - * / and parentheses). */
  reward: string;
  /** Pairing findings (src/core/formats/pairing.ts) are errors instead of warnings. */
  strict: boolean;
  /** Execute identical items once (src/core/run/reuse.ts); `--no-reuse` executes every item. */
  reuse: boolean;
  /** `--shard K/N`: evaluate only shard K of N (src/core/batch/shard.ts). */
  shard: Shard | null;
  /** `--gold-overlay FILE`: corrected golds (JSON/JSONL `{question_id, SQL}` or a gold .sql) scored beside the official ones. */
  goldOverlay: string | null;
  /** Metric ts: the test suite's seed and size (`--ts-seed`, `--ts-size`; docs/test-suite.md). */
  suite: SuiteSpec;
  /** `--ex-rule bird|spider`: the execution match of EX (docs/spider-rules.md); null: by dataset (Spider's for a Spider dataset). */
  exRule: ExRule | null;
  /** Re-run the version-sensitive items on the older SQLite engine (default on; `--no-version-check` skips it; docs/version-effects.md). */
  versionCheck: boolean;
  /** `--exclude FILE`: questions left out of every metric (JSONL, src/core/eval/exclusions.ts); null without it. */
  exclude: string | null;
}

export { EVAL_USAGE };

/** R-VES timing repetitions: the official 100, up to 100 times more. */
const MAX_VES_ITERATIONS = 10_000;

export function parseEvalArgs(argv: string[]): EvalArgs {
  const { values } = parseFlags(
    argv,
    {
      predictions: { type: 'string', multiple: true },
      ...strings(
        'out-dir',
        'cache',
        'engine',
        'gold',
        'db-root',
        'dataset',
        'timeout-s',
        'workers',
        'metrics',
        'ves-iterations',
        'out',
        'run-out',
        'reward',
        'shard',
        'gold-overlay',
        'ts-seed',
        'ts-size',
        'ex-rule',
        'exclude',
      ),
      ...switches('no-cache', 'read-only', 'strict', 'no-reuse', 'no-version-check'),
    },
    EVAL_USAGE,
  );
  // Before anything else: a command line written for the removed engine is told so first.
  engineFlag(values.engine);
  for (const req of ['predictions', 'gold', 'db-root'] as const) {
    const v = values[req];
    if (!v || (Array.isArray(v) && v.length === 0)) throw bad(`--${req}`, `is required\n${EVAL_USAGE}`);
  }
  const metrics = (values.metrics ?? 'ex,soft-f1')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  for (const m of metrics) {
    if (!(METRICS as readonly string[]).includes(m))
      throw bad(
        '--metrics',
        `unknown metric ${JSON.stringify(m)}; use a comma-separated list of ${METRICS.join(', ')}`,
      );
  }
  if (metrics.length === 0) throw bad('--metrics', `name at least one of ${METRICS.join(', ')}`);
  const args: EvalArgs = {
    predictions: values.predictions![0]!,
    predictionInputs: [...values.predictions!],
    outDir: values['out-dir'] ?? null,
    cache: values['no-cache'] ? null : (values.cache ?? 'default'),
    gold: values.gold!,
    dbRoot: values['db-root']!,
    dataset: values.dataset ?? null,
    timeoutS: numberFlag('--timeout-s', values['timeout-s'], OFFICIAL_TIMEOUT_S, {
      min: 0,
      max: Infinity,
      minExclusive: true,
    }),
    workers: workersFlag(values.workers),
    readOnly: values['read-only'] ?? false,
    metrics: [...new Set(metrics)] as MetricName[],
    out: values.out ?? null,
    vesIterations: numberFlag('--ves-iterations', values['ves-iterations'], OFFICIAL_VES_ITERATIONS, {
      min: 1,
      max: MAX_VES_ITERATIONS,
      integer: true,
    }),
    runOut: values['run-out'] ?? null,
    reward: values.reward ?? DEFAULT_REWARD_FORMULA,
    strict: values.strict ?? false,
    reuse: !(values['no-reuse'] ?? false),
    shard: values.shard === undefined ? null : parseShard(values.shard),
    goldOverlay: values['gold-overlay'] ?? null,
    suite: suiteFlags(values['ts-seed'], values['ts-size']),
    exRule: exRuleFlag(values['ex-rule']),
    versionCheck: !(values['no-version-check'] ?? false),
    exclude: values.exclude ?? null,
  };
  if (args.goldOverlay && args.shard) {
    throw bad(
      '--gold-overlay',
      'cannot be combined with --shard (merge does not join overlay comparisons): run the overlay on the whole run',
    );
  }
  if (values['no-cache'] && values.cache !== undefined)
    throw bad('--cache', 'cannot be combined with --no-cache: give one of them');
  if (args.predictionInputs.length > 1 && (args.out || args.runOut)) {
    throw bad(
      args.out ? '--out' : '--run-out',
      'names one file, and several --predictions were given: use --out-dir DIR (one report and one run file per predictions file, and a table of all)',
    );
  }
  if (args.goldOverlay && args.predictionInputs.length > 1) {
    throw bad('--gold-overlay', 'applies to one predictions file: run the overlay once per file');
  }
  if ((values['ts-seed'] !== undefined || values['ts-size'] !== undefined) && !args.metrics.includes('ts')) {
    throw bad(
      values['ts-seed'] !== undefined ? '--ts-seed' : '--ts-size',
      'applies to metric ts only: add ts to --metrics (e.g. --metrics ex,ts)',
    );
  }
  checkTimerFlags(args.timeoutS, args.metrics.includes('r-ves') ? { iterations: args.vesIterations } : null);
  // A bad formula fails here, before any file is read: syntax, a metric it needs, a division by zero.
  try {
    const formula = compileRewardFormula(args.reward);
    checkFormulaMetrics(formula, args.metrics);
    checkFormulaFinite(formula);
  } catch (err) {
    throw new WorkbenchError('BAD_OPTION', (err as Error).message, '--reward');
  }
  return args;
}

/**
 * The run's settings these flags give: the one settings type the recipe scores with and the run
 * file records (`run.config`). `exRule` is the rule the run is scored by (by default the flag's;
 * `eval` passes the dataset's when `--ex-rule` is not given); only Spider's is written, BIRD's is
 * the default. The TS suite is a setting only with metric ts.
 */
export function runConfigOf(args: EvalArgs, exRule: ExRule | null = args.exRule): RunConfig {
  return {
    ...DEFAULT_RUN_CONFIG,
    metrics: args.metrics,
    timeoutMs: args.timeoutS * 1000,
    readOnly: args.readOnly,
    vesIterations: args.vesIterations,
    rewardFormula: args.reward,
    ...(args.metrics.includes('ts') ? { suite: args.suite } : {}),
    ...(exRule === 'spider' ? { exRule } : {}),
  };
}

/**
 * `--engine`: sql.js, the only engine (the app's). `native` (better-sqlite3) was removed: it
 * could not be contained (docs/cli-speed.md, "Why there is no native engine").
 */
function engineFlag(v: string | undefined): void {
  if (v === undefined || v === 'sql.js') return;
  if (v === 'native')
    throw bad(
      '--engine',
      'native (better-sqlite3) was removed because it cannot be contained: it has no authorizer to refuse ATTACH (which ' +
        "writes files and checkpoints a database's -wal), no memory bound, and a runaway query in it cannot be stopped; " +
        'leave out --engine to use sql.js, the only engine (docs/cli-speed.md, "Why there is no native engine")',
    );
  throw bad('--engine', `expected sql.js (the only engine, the app's), got ${JSON.stringify(v)}`);
}

function exRuleFlag(v: string | undefined): ExRule | null {
  if (v === undefined) return null;
  if (v === 'bird' || v === 'spider') return v;
  throw bad(
    '--ex-rule',
    `expected bird (BIRD's set equality) or spider (test-suite-sql-eval's exec match), got ${JSON.stringify(v)}`,
  );
}

function suiteFlags(seed: string | undefined, size: string | undefined): SuiteSpec {
  const spec = { ...DEFAULT_SUITE_SPEC };
  if (seed !== undefined) {
    const n = Number(seed);
    if (!/^\d+$/.test(seed.trim()) || n > 0xffffffff)
      throw bad('--ts-seed', `expected an integer from 0 to 4294967295, got ${JSON.stringify(seed)}`);
    spec.seed = n;
  }
  if (size !== undefined) {
    spec.size = numberFlag('--ts-size', size, spec.size, { min: 1, max: spec.candidates, integer: true });
    if (spec.size > spec.candidates)
      throw bad(
        '--ts-size',
        `at most ${spec.candidates} (the candidate databases distillation keeps them from), got ${spec.size}`,
      );
  }
  return spec;
}
