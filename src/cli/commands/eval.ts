/** `eval`: execute predictions and gold SQL against BIRD-layout databases and score them. */
import { excludedPresent, withoutExcluded } from '../../core/eval/exclusions.ts';
import { excludedLine, excludeFlag } from './exclude-flags.ts';
import { stat } from 'node:fs/promises';
import { summarize } from '../../core/eval/summary.ts';
import { checkOutputs } from '../preflight.ts';
import { expandPredictionInputs, outputStems } from './eval-files.ts';
import { openEvalCache } from './eval-cache.ts';
import type { EvalItem, ItemResult } from '../../core/types.ts';
import type { ReplayPlan } from '../../core/run/replay.ts';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { WorkbenchError } from '../../core/errors.ts';
import { itemJson, summaryJson } from '../../core/eval/json-report.ts';
import { detailReport, officialTable, samplesNote } from '../../core/eval/report.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { findingText } from '../../core/formats/pairing.ts';
import { compileRewardFormula } from '../../core/eval/reward.ts';
import { planReplay } from '../../core/run/replay.ts';
import { scoreRun } from '../../core/run/score-run.ts';
import { shardItems } from '../../core/batch/shard.ts';
import { runFileJson, toRunFile } from '../../core/runfile/export.ts';
import type { SampleRecord } from '../../core/run/types.ts';
import { writeAtomicWith, writeFileAtomic } from '../atomic-write.ts';
import { assertSomethingScored } from '../nothing-scored.ts';
import { EVAL_USAGE, parseEvalArgs, runConfigOf, type EvalArgs } from './eval-args.ts';
import { checkDatabasesUnchanged, evalRunHeader, executorName, hashDatabases, runQuestions } from './run-out.ts';
import { readPredictionsInput, readQuestionsInput, readText } from './tabular-input.ts';
import { resolveDbRoot } from './db-root-zip.ts';
import type { NodeHost } from '../node-host.ts';
import { isParquetName } from '../../core/formats/parquet-name.ts';
import type { SuiteStats } from '../../core/ts/suite.ts';
import { SAMPLES_TABLE, runTableMetadata, sampleRows } from '../../core/views/tables.ts';
import { readDbFacts, type DbFacts } from '../../core/eval/db-facts.ts';
import { rewardCounts } from '../../core/run/item-annotations.ts';
import { checkOverlayKnown, parseGoldOverlay } from '../../core/formats/gold-overlay.ts';
import { compareWithOverlay, overlayJson, type OverlayComparison } from '../../core/run/gold-overlay-run.ts';
import { goldIssuesReport, overlayReport, sqliteLine, versionReport } from '../../core/run/reward-report.ts';
import { EX_RULE_LABEL, type ExRule } from '../../core/compare/spider-ex.ts';
import { withSpiderHardness } from '../../core/sql/spider-hardness.ts';
import type { Question } from '../../core/types.ts';
import { questionsExRule } from '../../app/ex-rule.ts';
import {
  versionEffectsJson,
  versionEffectsOf,
  versionCheckHeader,
  versionSensitive,
  type VersionEffects,
} from '../../core/run/version-effects.ts';
import { checkOnOlderSqlite } from '../../app/version-check-service.ts';
import { terminalName } from '../../core/util/terminal-text.ts';

export const usage = EVAL_USAGE;

export async function run(argv: string[], host: NodeHost): Promise<number> {
  const args = parseEvalArgs(argv);
  const files = await expandPredictionInputs(args.predictionInputs);
  if (files.length > 1 && (args.out || args.runOut || args.goldOverlay)) {
    const flag = args.out ? '--out' : args.runOut ? '--run-out' : '--gold-overlay';
    throw new WorkbenchError(
      'BAD_OPTION',
      `applies to one predictions file, and --predictions gave ${files.length}: use --out-dir DIR (one report and one run file per predictions file, and a table of all)`,
      flag,
    );
  }
  const targets = await outputsOf(args, files);
  await checkOutputs({
    outputs: targets
      .flatMap((t) => [
        { flag: t.outFlag, file: t.out },
        { flag: t.outFlag === '--out' ? '--run-out' : t.outFlag, file: t.runOut },
      ])
      .concat(args.outDir ? [{ flag: '--out-dir', file: tableFile(args.outDir) }] : []),
    inputs: [
      ...files.map((file) => ({ flag: '--predictions', file })),
      { flag: '--gold', file: args.gold },
      { flag: '--dataset', file: args.dataset },
    ],
    inputDirs: [{ flag: '--db-root', file: args.dbRoot }],
  });
  await runEval(host, args, targets);
  return 0;
}

/** Kept here for the commands that import it from eval.ts. */
export { readText };

/** One predictions file and where its outputs go. */
interface Target {
  predictions: string;
  stem: string;
  out: string | null;
  runOut: string | null;
  outFlag: string;
}

const tableFile = (dir: string) => path.join(dir, 'summary.tsv');

async function outputsOf(args: EvalArgs, files: string[]): Promise<Target[]> {
  if (!args.outDir)
    return files.map((predictions) => ({
      predictions,
      stem: path.basename(predictions),
      out: args.out,
      runOut: args.runOut,
      outFlag: '--out',
    }));
  const st = await stat(args.outDir).catch(() => null);
  if (!st?.isDirectory())
    throw new WorkbenchError('MISSING_FILE', `not a folder: ${args.outDir} (create it first)`, '--out-dir');
  const stems = outputStems(files);
  return files.map((predictions, i) => ({
    predictions,
    stem: stems[i]!,
    outFlag: '--out-dir',
    out: path.join(args.outDir!, `${stems[i]}.report.json`),
    runOut: path.join(args.outDir!, `${stems[i]}.run.json`),
  }));
}

async function runEval(host: NodeHost, given: EvalArgs, targets: Target[]): Promise<void> {
  // --db-root may be a zip (BIRD's dev.zip): its databases are inflated to a temporary folder.
  const root = await resolveDbRoot(host, given.dbRoot);
  try {
    await evaluate(host, { ...given, dbRoot: root.dir }, given.dbRoot, targets);
  } finally {
    await root.cleanup();
  }
}

/** A predictions file read and paired, and its items' place in the one run of all files. */
interface FilePlan {
  target: Target;
  plan: ReplayPlan;
  items: EvalItem[];
  warnings: string[];
  from: number;
}

async function evaluate(host: NodeHost, args: EvalArgs, shownDbRoot: string, targets: Target[]): Promise<void> {
  // Read and checked before any item runs: a bad line is refused naming the file and the line.
  const exclusions = await excludeFlag(args.exclude ?? undefined);
  // Checked by parseEvalArgs before any work (syntax, metrics it needs, division by zero).
  const formula = compileRewardFormula(args.reward);
  const dbRootStat = await stat(args.dbRoot).catch(() => null);
  if (!dbRootStat?.isDirectory()) {
    throw new WorkbenchError(
      'MISSING_FILE',
      `not a directory: ${args.dbRoot} (expected <db-root>/<db_id>/<db_id>.sqlite)`,
      '--db-root',
    );
  }
  const pool = host.sql.pool({
    dbRoot: args.dbRoot,
    workers: args.workers ?? availableParallelism(),
  });
  try {
    const cache = await openEvalCache(host, args, executorName());
    // The workers start (sql.js compiles) while the inputs are read; not with a filled verdict
    // cache, where a run may need none.
    if (!cache || cache.empty) pool.warm();
    const gold = parseGoldSql(await readText('--gold', args.gold), path.basename(args.gold));
    // Without a verdict cache (which may know them), the databases' facts for the version scan
    // are read by the workers while this thread reads the predictions; the recipe takes them as
    // read. Every database the gold names (a run of one shard reads its own, in the recipe).
    const earlyFacts = !cache && !args.shard ? readDbFacts(pool, [...new Set(gold.map((g) => g.dbId))]) : null;
    earlyFacts?.catch(() => undefined); // awaited below, unless reading the inputs failed first
    const questions = args.dataset ? await readQuestionsInput(host, '--dataset', args.dataset) : null;
    const exRule = args.exRule ?? (await datasetRule(args.gold, questions));
    const several = targets.length > 1;
    const plans: FilePlan[] = [];
    let from = 0;
    for (const target of targets) {
      const plan = planReplay(
        { predictions: await readPredictionsInput(host, '--predictions', target.predictions), gold, questions },
        { strict: args.strict },
      );
      // A shard evaluates its databases' items; the pairing and its findings are the whole file's.
      const shardOf = args.shard ? shardItems(plan.items, args.shard) : plan.items;
      // Spider's rule groups by Spider's hardness: a question without a level gets its gold's.
      const items = exRule === 'spider' ? withSpiderHardness(shardOf) : shardOf;
      const warnings = [...plan.findings.map(findingText), ...plan.warnings];
      for (const w of warnings)
        process.stderr.write(`warning: ${several ? `${terminalName(target.predictions)}: ` : ''}${w}\n`);
      plans.push({ target, plan, items, warnings, from });
      from += items.length;
    }
    const allItems = plans.flatMap((p) => p.items);

    // Read (and check) the overlay before any SQL runs; question ids need the questions file.
    const overlay = args.goldOverlay
      ? parseGoldOverlay(await readText('--gold-overlay', args.goldOverlay), path.basename(args.goldOverlay))
      : null;
    if (overlay?.keyedBy === 'question-id' && !questions) {
      throw new WorkbenchError(
        'BAD_OPTION',
        'this overlay names questions by question_id: give the questions file with --dataset so ids can be matched',
        '--gold-overlay',
      );
    }
    if (overlay) {
      const known =
        overlay.keyedBy === 'question-id'
          ? new Set(questions!.map((q) => q.questionId))
          : new Set(gold.map((_, i) => i));
      checkOverlayKnown(overlay, known, path.basename(overlay.keyedBy === 'question-id' ? args.dataset! : args.gold));
    }
    // Metric ts: each database's suite as built (the seed and size are in inputs.test_suite).
    const suites: Record<string, SuiteStats & { chosen: number[] }> = {};
    const dbIds = allItems.map((i) => i.dbId);
    // The run files record the databases as they were before the run, and check them after it.
    const hashed = targets.some((t) => t.runOut) ? await hashDatabases(args.dbRoot, dbIds) : undefined;
    const config = runConfigOf(args, exRule);
    const questionOf = questions ? (i: number) => questions[i]?.question ?? null : undefined;
    // The run recipe over every file's items: each gold executed once per question and worker,
    // identical predictions once (reuse.ts), verdicts from the cache where it has them. The
    // SQLite version and column types for the version scan come from the cache when it knows
    // them (a fully cached run opens no database), else the recipe reads them through the pool.
    const readFacts = earlyFacts ? await earlyFacts : undefined;
    const outcome = await scoreRun(allItems, config, {
      executor: pool,
      ...(readFacts ? { facts: readFacts } : {}),
      ...(cache ? { verdictCache: cache.port } : {}),
      reuse: args.reuse,
      questionOf,
      onEvent: (e) => {
        if (e.type === 'suite-ready') {
          if (e.stats.warning && !suites[e.dbId])
            process.stderr.write(`warning: test suite of ${e.dbId}: ${e.stats.warning}\n`);
          suites[e.dbId] = { ...e.stats, ms: Math.round(e.stats.ms), chosen: e.chosen };
        }
      },
    });
    const facts = outcome.facts;
    const options = { metrics: config.metrics };
    const comparison = overlay
      ? await compareWithOverlay(plans[0]!.items, outcome.results, overlay, config, {
          executor: pool,
          reuse: args.reuse,
          questionOf,
          facts,
        })
      : null;
    await pool.dispose();
    await cache?.save();
    if (outcome.results.length !== allItems.length)
      throw new WorkbenchError('INTERNAL', `${allItems.length - outcome.results.length} item(s) did not finish`);
    // Version effects measured: the flagged items again on the older SQLite (sql.js 1.8.0), by
    // the app's version check, through the verdict cache under that engine's own name
    // (docs/version-effects.md), so a run seen before starts no worker for them. One worker: the
    // flagged items are few (about 19 of a mini-dev file's 140), and a second would compile
    // sql.js 1.8's wasm and open the databases again for a handful of them.
    const effects =
      args.versionCheck && versionSensitive(outcome.results).length > 0
        ? await checkOnOlderSqlite(
            allItems,
            outcome.results,
            config,
            {
              open: () => host.sql.pool({ dbRoot: args.dbRoot, workers: 1, engine: 'legacy' }),
              reuse: args.reuse,
              ...(cache ? { verdictCache: { ...cache.port, executor: executorName('sql.js-1.8') } } : {}),
            },
            facts.sqliteVersion,
          )
        : null;
    // The check's verdicts and facts (kept under sql.js 1.8.0's name) are saved too: the save
    // above ran before them, and a run seen before then re-ran every flagged item.
    if (effects) await cache?.save();
    const allResults = effects?.results ?? outcome.results;
    const allRecords = effects ? withChecks(outcome.records, allResults) : outcome.records;
    // Before anything is written: a database replaced during the run makes its results unreliable.
    if (hashed) await checkDatabasesUnchanged(args.dbRoot, hashed, shownDbRoot);
    const hits = outcome.fromCache;
    const fromCache = (p: FilePlan) => {
      let n = 0;
      for (let i = p.from; i < p.from + p.items.length; i++) if (hits.has(i)) n++;
      return n;
    };
    // A shard may hold only databases that are missing here; `merge` sees the whole run.
    if (!args.shard) assertSomethingScored(outcome.results, args.dbRoot);
    const shared = {
      files: plans.length,
      items: allItems.length,
      executed: outcome.executed - hits.size,
      reused: outcome.reused,
      gold_executed: outcome.goldExecuted,
      from_cache: hits.size,
    };
    const rows: string[][] = [];
    for (const p of plans) {
      const results = allResults.slice(p.from, p.from + p.items.length);
      const records = allRecords.slice(p.from, p.from + p.items.length);
      const fileEffects =
        effects && several ? versionEffectsOf(results, options.metrics, effects.mainVersion) : effects;
      // Excluded questions count in no metric (their results stay in the run file, unchanged).
      const summary =
        several || exclusions.length
          ? summarize(withoutExcluded(results, exclusions), options.metrics)
          : outcome.summary;
      if (exclusions.length)
        process.stderr.write(excludedLine(exclusions, args.exclude!, excludedPresent(results, exclusions)));
      const cached = fromCache(p);
      // Items whose queries ran, items that took the verdict of an identical item (src/core/run/reuse.ts), verdicts from the cache.
      const executions = several
        ? { items: results.length, from_cache: cached, shared_run: shared }
        : {
            items: results.length,
            executed: shared.executed,
            reused: outcome.reused,
            gold_executed: outcome.goldExecuted,
            from_cache: cached,
          };
      if (!several) printReport(summary, results, facts, comparison, exRule, fileEffects);
      rows.push(tableRow(p.target, summary, results, cached));
      await writeOutputs(host, args, shownDbRoot, p, results, summary, {
        formula,
        warnings: p.warnings,
        suites,
        facts,
        comparison,
        effects: fileEffects,
        exRule,
        executions,
        // A run file of a shared run counts the shared run's executions (its items may have been reused from another file).
        runExecutions: { executed: shared.executed, reused: outcome.reused, fromCache: cached },
        questions,
        records,
        hashed,
      });
    }
    if (several || args.outDir) {
      const table = [TABLE_HEAD, ...rows].map((r) => r.join('\t')).join('\n') + '\n';
      process.stdout.write(table);
      process.stdout.write(`EX rule: ${EX_RULE_LABEL[exRule]}\n`);
      process.stdout.write(`${sqliteLine(facts.sqliteVersion, executorName())}\n`);
      if (effects) process.stdout.write(`${versionReport(allResults, effects).split('\n')[0]}\n`);
      process.stdout.write(
        `${plans.length} file(s), ${allItems.length} items: ${shared.executed} executed, ${shared.reused} reused, ${shared.from_cache} from the verdict cache, gold executed ${shared.gold_executed} times\n`,
      );
      if (args.outDir) await writeFileAtomic(tableFile(args.outDir), table);
    }
  } finally {
    await pool.dispose();
  }
}

/**
 * The EX rule of a run without --ex-rule (the app's rule for question files): Spider's for a
 * Spider dataset (its questions carry Spider's levels, or, without --dataset, Spider's
 * tables.json lies beside the gold file: looked up here, only then).
 */
async function datasetRule(goldFile: string, questions: readonly Question[] | null): Promise<ExRule> {
  if (questions) return questionsExRule(questions);
  const tables = await stat(path.join(path.dirname(goldFile), 'tables.json')).catch(() => null);
  return questionsExRule(null, null, tables?.isFile() ?? false);
}

/** The records with each re-run sample's check (records and results are parallel). */
function withChecks(records: readonly SampleRecord[], results: readonly ItemResult[]): SampleRecord[] {
  return records.map((r, i) => (results[i]!.versionCheck ? { ...r, versionCheck: results[i]!.versionCheck } : r));
}

const TABLE_HEAD = [
  'predictions',
  'questions',
  'samples',
  'ex',
  'soft_f1',
  'errors',
  'timeouts',
  'missing_db',
  'from_cache',
];

const pct = (x: number | null) => (x === null ? '' : x.toFixed(2));

function tableRow(
  t: Target,
  summary: ReturnType<typeof summarize>,
  results: readonly ItemResult[],
  cached: number,
): string[] {
  const total = summary.byDifficulty.total;
  return [
    // A tab or line break in a file name would shift the table's columns or forge a row.
    terminalName(t.predictions),
    String(total.count),
    String(total.samples),
    pct(total.ex),
    pct(total.softF1),
    String(total.errors),
    String(total.timeouts),
    String(results.filter((r) => r.status === 'missing-db').length),
    String(cached),
  ];
}

function printReport(
  summary: ReturnType<typeof summarize>,
  results: readonly ItemResult[],
  facts: DbFacts,
  comparison: OverlayComparison | null,
  exRule: ExRule,
  effects: VersionEffects | null,
): void {
  // The official layout first (the official evaluator's printout), then which rule scored it.
  process.stdout.write(officialTable(summary) + '\n');
  process.stdout.write(`EX rule: ${EX_RULE_LABEL[exRule]}\n`);
  const note = samplesNote(summary);
  if (note) process.stdout.write(`${note} Use \`stats\` for pass@k and maj@k.\n`);
  const detail = detailReport(summary);
  if (detail) process.stdout.write('\n' + detail + '\n');
  process.stdout.write(
    '\n' +
      sqliteLine(facts.sqliteVersion, executorName()) +
      '\n' +
      versionReport(results, effects ?? undefined) +
      '\n' +
      goldIssuesReport(results) +
      '\n',
  );
  if (comparison) process.stdout.write('\n' + overlayReport(comparison) + '\n');
}

interface OutputFacts {
  formula: ReturnType<typeof compileRewardFormula>;
  warnings: string[];
  suites: Record<string, SuiteStats & { chosen: number[] }>;
  facts: DbFacts;
  comparison: OverlayComparison | null;
  /** The version check of this file's items (null: not measured). */
  effects: VersionEffects | null;
  exRule: ExRule;
  executions: Record<string, unknown>;
  runExecutions: { executed: number; reused: number; fromCache: number };
  questions: Awaited<ReturnType<typeof readQuestionsInput>> | null;
  /** The recipe's sample records of this file's items. */
  records: SampleRecord[];
  /** The databases' sha256 taken before the run (run files only). */
  hashed: Awaited<ReturnType<typeof hashDatabases>> | undefined;
}

/** The report (`--out`) and the run file (`--run-out`) of one predictions file. */
async function writeOutputs(
  host: NodeHost,
  args: EvalArgs,
  shownDbRoot: string,
  p: FilePlan,
  results: ItemResult[],
  summary: ReturnType<typeof summarize>,
  o: OutputFacts,
): Promise<void> {
  const { target, plan, items } = p;
  const { comparison, facts, formula, questions, effects } = o;
  const counts = rewardCounts(results);
  if (target.out) {
    const out = {
      summary: summaryJson(summary, {
        warnings: o.warnings,
        pairing_findings: plan.findings.map(({ code, message }) => ({ code, message })),
        inputs: {
          predictions: target.predictions,
          gold: args.gold,
          dataset: args.dataset,
          db_root: shownDbRoot,
          timeout_s: args.timeoutS,
          read_only: args.readOnly,
          ves_iterations: args.vesIterations,
          ...(args.metrics.includes('ts')
            ? {
                test_suite: {
                  seed: args.suite.seed,
                  size: args.suite.size,
                  candidates: args.suite.candidates,
                  max_rows: args.suite.maxRows,
                  sample_rows: args.suite.sampleRows,
                },
              }
            : {}),
        },
        ...(args.metrics.includes('ts')
          ? {
              test_suites: Object.fromEntries(
                Object.entries(o.suites).filter(([db]) => items.some((i) => i.dbId === db)),
              ),
            }
          : {}),
        engine: 'sql.js (SQLite compiled to WebAssembly), Python sqlite3 semantics',
        executor: executorName(),
        sqlite_version: facts.sqliteVersion,
        version_sensitive: {
          count: counts.versionSensitive.length,
          question_ids: [...new Set(counts.versionSensitive.map((r) => r.questionId))],
        },
        ...(effects ? { version_effects: versionEffectsJson(effects) } : {}),
        gold_issues: { count: new Set(counts.goldIssues.map((r) => r.index)).size, by_kind: counts.goldIssueKinds },
        ...(comparison ? { gold_overlay: overlayJson(comparison) } : {}),
        reward_formula: formula.text,
        ex_rule: o.exRule,
        executions: o.executions,
        ...(args.shard ? { shard: args.shard } : {}),
      }),
      items: results.map((r, at) => ({
        ...itemJson(r),
        // Never scored (database missing): null against either gold, as itemJson's ex.
        ...(comparison
          ? { ex_corrected_gold: r.status === 'missing-db' ? null : comparison.correctedResults[at]!.ex }
          : {}),
      })),
    };
    await writeFileAtomic(target.out, JSON.stringify(out, null, 1) + '\n');
  }
  if (target.runOut) {
    const header = {
      ...(await evalRunHeader(
        { ...args, exRule: o.exRule, predictions: target.predictions },
        items,
        results,
        o.hashed,
      )),
      executor: executorName(),
      executions: o.runExecutions,
      // The SQLite that gave the verdicts, as the app's runs record it (the report's provenance shows it).
      ...(facts.sqliteVersion ? { sqliteVersion: facts.sqliteVersion } : {}),
      ...(effects
        ? {
            versionCheck: {
              ...versionCheckHeader(
                effects.otherVersion,
                effects.differing.map((r) => r.versionCheck!),
              ),
              checked: effects.checked,
            },
          }
        : {}),
      ...(args.shard ? { shard: args.shard } : {}),
    };
    const file = toRunFile(header, o.records, questions ? runQuestions(items, questions) : undefined);
    // run.parquet: the samples table (docs/formats.md), the header in the file's metadata.
    if (isParquetName(target.runOut)) {
      await writeAtomicWith(target.runOut, (temp) =>
        host.parquet.write(temp, SAMPLES_TABLE, sampleRows(file.samples, file.questions), {
          metadata: runTableMetadata(SAMPLES_TABLE, file.run),
        }),
      );
    } else await writeFileAtomic(target.runOut, runFileJson(file) + '\n');
  }
}
