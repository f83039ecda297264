/** `eval`: execute predictions and gold SQL against BIRD-layout databases and score them. */
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { createNodeSqlPool } from '../../adapters/node/sql-worker-host.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { itemJson, summaryJson } from '../../core/eval/json-report.ts';
import { detailReport, officialTable, samplesNote } from '../../core/eval/report.ts';
import { evalOptionsOf } from '../../core/eval/executor.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { findingText } from '../../core/formats/pairing.ts';
import { compileRewardFormula } from '../../core/rl/reward.ts';
import { planReplay, runEvaluation } from '../../core/run/replay.ts';
import { shardItems } from '../../core/run/shard.ts';
import { runFileJson, toRunFile } from '../../core/run/export.ts';
import { toSampleRecords } from '../../core/run/run-file.ts';
import { writeAtomicWith, writeFileAtomic } from '../atomic-write.ts';
import { assertSomethingScored } from '../nothing-scored.ts';
import { checkEvalOutputs } from '../preflight-commands.ts';
import { EVAL_USAGE, parseEvalArgs, type EvalArgs } from './eval-args.ts';
import { evalRunHeader, executorName, runQuestions } from './run-out.ts';
import { readPredictionsInput, readQuestionsInput, readText } from './tabular-input.ts';
import { resolveDbRoot } from './db-root-zip.ts';
import { writeParquetFile } from '../../adapters/parquet/node-sink.ts';
import { isParquetName } from '../../adapters/parquet/read-parquet.ts';
import type { SuiteStats } from '../../core/ts/suite.ts';
import { SAMPLES_TABLE, runTableMetadata, sampleRows } from '../../core/run/tables.ts';
import { readDbFacts, type DbFacts } from '../../core/sql/db-facts.ts';
import { rewardAnnotator, rewardCounts } from '../../core/run/item-annotations.ts';
import { parseGoldOverlay } from '../../core/formats/gold-overlay.ts';
import { compareWithOverlay, overlayJson, type OverlayComparison } from '../../core/run/gold-overlay-run.ts';
import { goldIssuesReport, overlayReport, sqliteLine, versionReport } from '../../core/eval/reward-report.ts';

export const usage = EVAL_USAGE;

export async function run(argv: string[]): Promise<number> {
  const args = parseEvalArgs(argv);
  await checkEvalOutputs(args);
  await runEval(args);
  return 0;
}

/** Kept here for the commands that import it from eval.ts. */
export { readText };

async function runEval(given: EvalArgs): Promise<void> {
  // --db-root may be a zip (BIRD's dev.zip): its databases are inflated to a temporary folder.
  const root = await resolveDbRoot(given.dbRoot);
  try {
    await evaluate({ ...given, dbRoot: root.dir }, given.dbRoot);
  } finally {
    await root.cleanup();
  }
}

async function evaluate(args: EvalArgs, shownDbRoot: string): Promise<void> {
  // Checked by parseEvalArgs before any work (syntax, metrics it needs, division by zero).
  const formula = compileRewardFormula(args.reward);
  const dbRootStat = await stat(args.dbRoot).catch(() => null);
  if (!dbRootStat?.isDirectory()) {
    throw new WorkbenchError('MISSING_FILE', `not a directory: ${args.dbRoot} (expected <db-root>/<db_id>/<db_id>.sqlite)`, '--db-root');
  }
  const gold = parseGoldSql(await readText('--gold', args.gold), path.basename(args.gold));
  const questions = args.dataset ? await readQuestionsInput('--dataset', args.dataset) : null;
  const plan = planReplay(
    { predictions: await readPredictionsInput('--predictions', args.predictions), gold, questions },
    { strict: args.strict },
  );
  // A shard evaluates its databases' items; the pairing and its findings are the whole file's.
  const items = args.shard ? shardItems(plan.items, args.shard) : plan.items;
  const warnings = [...plan.findings.map(findingText), ...plan.warnings];
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);

  // Read (and check) the overlay before any SQL runs; question ids need the questions file.
  const overlay = args.goldOverlay ? parseGoldOverlay(await readText('--gold-overlay', args.goldOverlay), path.basename(args.goldOverlay)) : null;
  if (overlay?.keyedBy === 'question-id' && !questions) {
    throw new WorkbenchError('BAD_OPTION', 'this overlay names questions by question_id: give the questions file with --dataset so ids can be matched', '--gold-overlay');
  }
  // Metric ts: each database's suite as built (the seed and size are in inputs.test_suite).
  const suites: Record<string, SuiteStats & { chosen: number[] }> = {};
  const pool = createNodeSqlPool({ dbRoot: args.dbRoot, workers: args.workers ?? availableParallelism() });
  let outcome;
  let facts: DbFacts;
  let comparison: OverlayComparison | null = null;
  try {
    // The SQLite version and column types for the version scan, through the same pool.
    facts = await readDbFacts(pool, items.map((i) => i.dbId));
    const annotate = rewardAnnotator({ columnTypes: facts.columnTypes, questionOf: questions ? (i) => questions[i]?.question ?? null : undefined });
    const options = evalOptionsOf({ ...args, timeoutMs: args.timeoutS * 1000 });
    outcome = await runEvaluation(items, options, {
      executor: pool, reuse: args.reuse, annotate,
      onEvent: (e) => {
        if (e.type === 'suite-ready') suites[e.dbId] = { ...e.stats, ms: Math.round(e.stats.ms), chosen: e.chosen };
      },
    });
    if (overlay) comparison = await compareWithOverlay(items, outcome.results, overlay, options, { executor: pool, reuse: args.reuse, annotate });
  } finally {
    await pool.dispose();
  }
  const { results, summary } = outcome;
  // A shard may hold only databases that are missing here; `merge` sees the whole run.
  if (!args.shard) assertSomethingScored(results, args.dbRoot);
  process.stdout.write(officialTable(summary) + '\n');
  const note = samplesNote(summary);
  if (note) process.stdout.write(`${note} Use \`stats\` for pass@k and maj@k.\n`);
  const detail = detailReport(summary);
  if (detail) process.stdout.write('\n' + detail + '\n');
  process.stdout.write('\n' + sqliteLine(facts.sqliteVersion, executorName()) + '\n' + versionReport(results) + '\n' + goldIssuesReport(results) + '\n');
  if (comparison) process.stdout.write('\n' + overlayReport(comparison) + '\n');
  const counts = rewardCounts(results);
  if (args.out) {
    const out = {
      summary: summaryJson(summary, {
        warnings,
        pairing_findings: plan.findings.map(({ code, message }) => ({ code, message })),
        inputs: {
          predictions: args.predictions, gold: args.gold, dataset: args.dataset, db_root: shownDbRoot,
          timeout_s: args.timeoutS, read_only: args.readOnly, ves_iterations: args.vesIterations,
          ...(args.metrics.includes('ts') ? { test_suite: { seed: args.suite.seed, size: args.suite.size, candidates: args.suite.candidates, max_rows: args.suite.maxRows, sample_rows: args.suite.sampleRows } } : {}),
        },
        ...(args.metrics.includes('ts') ? { test_suites: suites } : {}),
        engine: 'sql.js (SQLite compiled to WebAssembly), Python sqlite3 semantics',
        executor: executorName(),
        sqlite_version: facts.sqliteVersion,
        version_sensitive: { count: counts.versionSensitive.length, question_ids: [...new Set(counts.versionSensitive.map((r) => r.questionId))] },
        gold_issues: { count: new Set(counts.goldIssues.map((r) => r.index)).size, by_kind: counts.goldIssueKinds },
        ...(comparison ? { gold_overlay: overlayJson(comparison) } : {}),
        reward_formula: formula.text,
        // Items whose queries ran, and items that took the verdict of an identical item (src/core/run/reuse.ts).
        executions: { items: results.length, executed: outcome.executed, reused: outcome.reused, gold_executed: outcome.goldExecuted },
        ...(args.shard ? { shard: args.shard } : {}),
      }),
      items: results.map((r, at) => ({ ...itemJson(r), ...(comparison ? { ex_corrected_gold: comparison.correctedResults[at]!.ex } : {}) })),
    };
    await writeFileAtomic(args.out, JSON.stringify(out, null, 1) + '\n');
  }
  if (args.runOut) {
    const header = {
      ...(await evalRunHeader(args, items, results)),
      executions: { executed: outcome.executed, reused: outcome.reused },
      ...(args.shard ? { shard: args.shard } : {}),
    };
    const file = toRunFile(header, toSampleRecords(items, results, formula), questions ? runQuestions(items, questions) : undefined);
    // run.parquet: the samples table (docs/formats.md), the header in the file's metadata.
    if (isParquetName(args.runOut)) {
      await writeAtomicWith(args.runOut, (temp) => writeParquetFile(temp, SAMPLES_TABLE, sampleRows(file.samples, file.questions), { metadata: runTableMetadata(SAMPLES_TABLE, file.run) }));
    } else await writeFileAtomic(args.runOut, runFileJson(file) + '\n');
  }
}

