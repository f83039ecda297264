/**
 * `probe`: the reward-hacking probe (src/core/probe). Runs known exploit predictions against
 * every question of a gold file whose database is present, under the official semantics and
 * read-only, and reports how many questions each exploit would win.
 */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { stat } from 'node:fs/promises';
import type { NodeHost } from '../node-host.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { readQuestionsInput } from './tabular-input.ts';
import { EXPLOITS, type ExploitId, type ProbeQuestion } from '../../core/probe/exploits.ts';
import { probeJson, probeTable } from '../../core/probe/probe-report.ts';
import { runProbe } from '../../core/probe/run-probe.ts';
import type { GoldEntry, Question } from '../../core/types.ts';
import { readText } from './eval.ts';
import { DATASET_FLAGS, bad, numberFlag, parseFlags, requireFlags, strings } from '../flags.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { checkTimerFlags, workersFlag } from '../bounds.ts';
import { checkProbeOutputs } from '../preflight-commands.ts';
import { PROBE_USAGE } from '../usage.ts';

export const usage = PROBE_USAGE;

interface ProbeArgs {
  gold: string;
  dbRoot: string;
  dataset: string | null;
  out: string | null;
  timeoutS: number;
  workers: number | null;
  exploits: ExploitId[] | undefined;
}

function parseProbeArgs(argv: string[]): ProbeArgs {
  const { values } = parseFlags(
    argv,
    {
      ...DATASET_FLAGS,
      ...strings('out', 'timeout-s', 'workers', 'exploits'),
    },
    usage,
  );
  requireFlags(values, ['gold', 'db-root'], usage);
  let exploits: ExploitId[] | undefined;
  if (values.exploits !== undefined) {
    exploits = values.exploits
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean) as ExploitId[];
    if (exploits.length === 0)
      throw bad(
        '--exploits',
        `names no exploit, so nothing would run: name at least one of ${EXPLOITS.map((e) => e.id).join(', ')}, or leave the flag out for all`,
      );
    for (const id of exploits) {
      if (!EXPLOITS.some((e) => e.id === id))
        throw bad(
          '--exploits',
          `unknown exploit ${JSON.stringify(id)}; use any of ${EXPLOITS.map((e) => e.id).join(', ')}`,
        );
    }
  }
  const timeoutS = numberFlag('--timeout-s', values['timeout-s'], 30, { min: 0, max: Infinity, minExclusive: true });
  checkTimerFlags(timeoutS, null);
  return {
    gold: values.gold!,
    dbRoot: values['db-root']!,
    dataset: values.dataset ?? null,
    out: values.out ?? null,
    timeoutS,
    workers: workersFlag(values.workers),
    exploits,
  };
}

/** Gold lines paired with the questions file by position (as `eval` pairs BIRD predictions). */
export function probeQuestions(
  gold: readonly GoldEntry[],
  questions: readonly Question[] | null,
  datasetName: string,
): ProbeQuestion[] {
  if (questions && questions.length !== gold.length) {
    throw new WorkbenchError(
      'MISMATCH',
      `${questions.length} questions for ${gold.length} gold lines: use the questions file of this gold file`,
      datasetName,
    );
  }
  return gold.map((g, index) => {
    const q = questions?.[index];
    if (q && q.dbId !== g.dbId) {
      throw new WorkbenchError(
        'MISMATCH',
        `question ${index} is about ${q.dbId} but gold line ${index + 1} about ${g.dbId}: use the questions file of this gold file`,
        datasetName,
      );
    }
    return {
      index,
      questionId: q?.questionId ?? index,
      dbId: g.dbId,
      difficulty: q?.difficulty ?? 'unknown',
      goldSql: g.sql,
      question: q ? q.question : null,
    };
  });
}

export async function run(argv: string[], host: NodeHost): Promise<number> {
  const args = parseProbeArgs(argv);
  await checkProbeOutputs(args);
  if (!(await stat(args.dbRoot).catch(() => null))?.isDirectory()) {
    throw new WorkbenchError(
      'MISSING_FILE',
      `not a directory: ${args.dbRoot} (expected <db-root>/<db_id>/<db_id>.sqlite)`,
      '--db-root',
    );
  }
  const gold = parseGoldSql(await readText('--gold', args.gold), path.basename(args.gold));
  const questions = args.dataset ? await readQuestionsInput(host, '--dataset', args.dataset) : null;
  const probe = probeQuestions(gold, questions, args.dataset ? path.basename(args.dataset) : '');
  const pool = host.sql.pool({ dbRoot: args.dbRoot, workers: args.workers ?? availableParallelism() });
  let report;
  try {
    report = await runProbe(probe, pool, { timeoutMs: args.timeoutS * 1000, exploits: args.exploits });
  } finally {
    await pool.dispose();
  }
  if (report.questions === 0) {
    const dbs = report.missingDb.databases;
    throw new WorkbenchError(
      'MISSING_FILE',
      `nothing was probed: none of the ${probe.length} question(s) has its database in ${args.dbRoot}` +
        (dbs.length ? ` (missing: ${dbs.join(', ')}; expected <db-root>/<db_id>/<db_id>.sqlite)` : ''),
      '--db-root',
    );
  }
  process.stdout.write(probeTable(report) + '\n');
  if (!questions) process.stdout.write('copy-question was not run: it needs the question texts (--dataset).\n');
  if (args.out) await writeFileAtomic(args.out, JSON.stringify(probeJson(report), null, 2) + '\n');
  return 0;
}
