/** `stats`: pass@k, maj@k, best-of-n and GRPO group statistics of a run file (or an eval --out report). */
import path from 'node:path';
import { WorkbenchError, isWorkbenchError } from '../../core/errors.ts';
import { readQuestionsInput, readRunInput } from './tabular-input.ts';
import { frontierJsonl, promptStatsCsv, promptStatsJson } from '../../core/rl/exports.ts';
import { mulberry32 } from '../../core/util/rng.ts';
import { computeRunStats } from '../../core/rl/run-stats.ts';
import { statsJson, statsTable } from '../../core/rl/stats-report.ts';
import type { RunQuestion } from '../../core/run/types.ts';
import type { NodeHost } from '../node-host.ts';
import { promptStatsTable, runTableMetadata } from '../../core/views/tables.ts';
import { integerFlag, kList } from './rl-args.ts';
import { bad, parseFlags, strings } from '../flags.ts';
import { writeAtomicWith, writeFileAtomic } from '../atomic-write.ts';
import { checkStatsOutputs } from '../preflight-commands.ts';
import { STATS_USAGE } from '../usage.ts';

export const usage = STATS_USAGE;

export async function run(argv: string[], host: NodeHost): Promise<number> {
  const { values } = parseFlags(
    argv,
    {
      ...strings('run', 'k', 'seed', 'out', 'csv', 'prompts-json', 'parquet', 'frontier-jsonl', 'dataset'),
    },
    usage,
  );
  if (!values.run) throw bad('--run', `is required\n${usage}`);
  const ks = kList(values.k);
  const seed = integerFlag('--seed', values.seed, 0, 0, 0xffffffff);
  await checkStatsOutputs(values);

  const runFile = await readRunInput(host, '--run', values.run);
  // The question texts --frontier-jsonl needs are read (or found missing) before the statistics are computed.
  let questions: RunQuestion[] | undefined = runFile.questions;
  if (values['frontier-jsonl']) {
    if (values.dataset) {
      const parsed = await readQuestionsInput(host, '--dataset', values.dataset);
      questions = parsed.map((q, index) => ({
        index,
        questionId: q.questionId,
        dbId: q.dbId,
        question: q.question,
        evidence: q.evidence,
      }));
    }
    if (!questions) {
      throw bad(
        '--frontier-jsonl',
        'needs the question texts, which this run file does not hold: add --dataset FILE (the questions file of the run)',
      );
    }
  }
  let stats;
  try {
    stats = computeRunStats(runFile.samples, { ks, rng: mulberry32(seed) });
  } catch (err) {
    if (isWorkbenchError(err) && err.where === 'k') throw bad('--k', err.message.replace(/^k: /, ''));
    if (isWorkbenchError(err)) throw new WorkbenchError(err.code, err.message, path.basename(values.run));
    throw err;
  }
  const meta = {
    runName: runFile.run.name,
    runId: runFile.run.id,
    rewardFormula: runFile.run.config.rewardFormula,
    seed,
  };
  process.stdout.write(statsTable(stats, meta) + '\n');

  if (values.out) await writeFileAtomic(values.out, JSON.stringify(statsJson(stats, meta), null, 1) + '\n');
  if (values.csv) await writeFileAtomic(values.csv, promptStatsCsv(stats.prompts, stats.ks));
  if (values['prompts-json'])
    await writeFileAtomic(
      values['prompts-json'],
      JSON.stringify(promptStatsJson(stats.prompts, stats.ks), null, 1) + '\n',
    );
  if (values.parquet) {
    const table = promptStatsTable(stats.ks);
    await writeAtomicWith(values.parquet, (temp) =>
      host.parquet.write(temp, table, stats.prompts, { metadata: runTableMetadata(table, runFile.run) }),
    );
  }
  if (values['frontier-jsonl'] && questions) {
    try {
      await writeFileAtomic(values['frontier-jsonl'], frontierJsonl(stats.prompts, questions));
    } catch (err) {
      if (isWorkbenchError(err))
        throw new WorkbenchError(err.code, err.message, values.dataset ? '--dataset' : '--frontier-jsonl');
      throw err;
    }
    const n = stats.prompts.filter((p) => p.frontier).length;
    process.stderr.write(`wrote ${n} frontier prompt(s) to ${values['frontier-jsonl']}\n`);
  }
  return 0;
}
