/** `eval`: execute predictions and gold SQL against BIRD-layout databases and score them. */
import { readFile, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { createNodeSqlPool } from '../../adapters/node/sql-worker-host.ts';
import { WorkbenchError, isWorkbenchError } from '../../core/errors.ts';
import { decodeUtf8File } from '../../adapters/utf8-text.ts';
import { itemJson, summaryJson } from '../../core/eval/json-report.ts';
import { detailReport, officialTable } from '../../core/eval/report.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { pairPredictions, parsePredictions } from '../../core/formats/predictions.ts';
import { parseQuestions } from '../../core/formats/questions.ts';
import { checkFormulaMetrics, compileRewardFormula } from '../../core/rl/reward.ts';
import { samplesPerQuestion, summarizeSamples } from '../../core/rl/sample-summary.ts';
import { toRunFile } from '../../core/run/export.ts';
import { toSampleRecords } from '../../core/run/run-file.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { assertSomethingScored } from '../nothing-scored.ts';
import { checkEvalOutputs } from '../preflight-commands.ts';
import { EVAL_USAGE, parseEvalArgs, type EvalArgs } from './eval-args.ts';
import { evalRunHeader, executorName, runQuestions } from './run-out.ts';

export const usage = EVAL_USAGE;

export async function run(argv: string[]): Promise<number> {
  const args = parseEvalArgs(argv);
  await checkEvalOutputs(args);
  await runEval(args);
  return 0;
}

export async function readText(flag: string, file: string): Promise<string> {
  try {
    const bytes = await readFile(file);
    // Strict UTF-8: a file in another encoding is an input error, not silently mangled text.
    return decodeUtf8File(bytes, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new WorkbenchError('MISSING_FILE', `file not found: ${file}`, flag);
    if (code === 'EISDIR') throw new WorkbenchError('BAD_OPTION', `${file} is a directory; name a file`, flag);
    if (isWorkbenchError(err)) throw new WorkbenchError(err.code, `${err.message}`, flag);
    throw err;
  }
}

async function runEval(args: EvalArgs): Promise<void> {
  // A bad formula fails before any work, with the formula and the position in the message.
  const formula = (() => {
    try {
      const f = compileRewardFormula(args.reward);
      checkFormulaMetrics(f, args.metrics);
      return f;
    } catch (err) {
      throw new WorkbenchError('BAD_OPTION', (err as Error).message, '--reward');
    }
  })();
  const dbRootStat = await stat(args.dbRoot).catch(() => null);
  if (!dbRootStat?.isDirectory()) {
    throw new WorkbenchError('MISSING_FILE', `not a directory: ${args.dbRoot} (expected <db-root>/<db_id>/<db_id>.sqlite)`, '--db-root');
  }
  const goldName = path.basename(args.gold);
  const gold = parseGoldSql(await readText('--gold', args.gold), goldName);
  const questions = args.dataset ? parseQuestions(await readText('--dataset', args.dataset), path.basename(args.dataset)) : null;
  const preds = parsePredictions(await readText('--predictions', args.predictions), path.basename(args.predictions));
  const { items, warnings } = pairPredictions(preds, gold, questions, path.basename(args.predictions));
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);

  const pool = createNodeSqlPool({ dbRoot: args.dbRoot, workers: args.workers ?? availableParallelism() });
  let results;
  try {
    results = await pool.evaluate(items, {
      metrics: args.metrics,
      timeoutMs: args.timeoutS * 1000,
      readOnly: args.readOnly,
      vesIterations: args.vesIterations,
      previewRows: 0,
    });
  } finally {
    await pool.dispose();
  }
  assertSomethingScored(results, args.dbRoot);
  const summary = summarizeSamples(results, args.metrics);
  const n = samplesPerQuestion(results);
  process.stdout.write(officialTable(summary) + '\n');
  if (n.max > 1) {
    const nText = n.min === n.max ? `n = ${n.max}` : `n = ${n.min} to ${n.max}`;
    process.stdout.write(
      `${nText} samples per question (${results.length} samples): each score is the mean over a question's samples ` +
        `(mean EX = expected single-sample EX), averaged over the ${n.questions} questions; count = questions. ` +
        'Use `stats` for pass@k and maj@k.\n',
    );
  }
  const detail = detailReport(summary);
  if (detail) process.stdout.write('\n' + detail + '\n');
  if (args.out) {
    const out = {
      summary: summaryJson(summary, {
        warnings,
        inputs: {
          predictions: args.predictions, gold: args.gold, dataset: args.dataset, db_root: args.dbRoot,
          timeout_s: args.timeoutS, read_only: args.readOnly, ves_iterations: args.vesIterations,
        },
        engine: 'sql.js (SQLite compiled to WebAssembly), Python sqlite3 semantics',
        executor: executorName(),
        samples_per_question: { min: n.min, max: n.max },
        reward_formula: formula.text,
      }),
      items: results.map(itemJson),
    };
    await writeFileAtomic(args.out, JSON.stringify(out, null, 1) + '\n');
  }
  if (args.runOut) {
    const header = await evalRunHeader(args, items, results);
    const file = toRunFile(header, toSampleRecords(items, results, formula), questions ? runQuestions(items, questions) : undefined);
    await writeFileAtomic(args.runOut, JSON.stringify(file, null, 1) + '\n');
  }
}

