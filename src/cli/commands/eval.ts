/** `eval`: execute predictions and gold SQL against BIRD-layout databases and score them. */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { createNodeSqlPool } from '../../adapters/node/sql-worker-host.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { itemJson, summaryJson } from '../../core/eval/json-report.ts';
import { detailReport, officialTable } from '../../core/eval/report.ts';
import { summarize } from '../../core/eval/summary.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { pairPredictions, parsePredictions } from '../../core/formats/predictions.ts';
import { parseQuestions } from '../../core/formats/questions.ts';
import { EVAL_USAGE, parseEvalArgs, type EvalArgs } from './eval-args.ts';

export const usage = EVAL_USAGE;

export async function run(argv: string[]): Promise<number> {
  await runEval(parseEvalArgs(argv));
  return 0;
}

export async function readText(flag: string, file: string): Promise<string> {
  try {
    const bytes = await readFile(file);
    // Strict UTF-8: a file in another encoding is an input error, not silently mangled text.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new WorkbenchError('MISSING_FILE', `file not found: ${file}`, flag);
    if (code === 'EISDIR') throw new WorkbenchError('BAD_OPTION', `${file} is a directory; name a file`, flag);
    if (err instanceof TypeError) throw new WorkbenchError('BAD_FORMAT', `${file} is not UTF-8 text; convert it to UTF-8`, flag);
    throw err;
  }
}

async function runEval(args: EvalArgs): Promise<void> {
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
  const summary = summarize(results, args.metrics);
  process.stdout.write(officialTable(summary) + '\n');
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
      }),
      items: results.map(itemJson),
    };
    await writeFile(args.out, JSON.stringify(out, null, 1) + '\n');
  }
}

