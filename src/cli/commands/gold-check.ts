/**
 * `gold-check`: the gold self-test with the gold checks of src/core/eval/gold-checks.ts. Every
 * gold query is run as its own prediction (as the app's self-test on the dataset page); the
 * report lists golds that fail, return no rows, answer a count with a list (or a list with a
 * count) or depend on the date. `eval` prints the same checks for the golds of its run.
 */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { stat } from 'node:fs/promises';
import type { NodeHost } from '../node-host.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { goldIssuesReport } from '../../core/run/reward-report.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { OFFICIAL_TIMEOUT_MS } from '../../core/eval/constants.ts';
import { rewardCounts } from '../../core/run/item-annotations.ts';
import { scoreRun } from '../../core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG } from '../../core/run/types.ts';
import type { EvalItem } from '../../core/types.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { assertSomethingScored } from '../nothing-scored.ts';
import { checkOutputsWithDataset, pathFlags } from '../preflight.ts';
import { workersFlag } from '../bounds.ts';
import { DATASET_FLAGS, parseFlags, requireFlags } from '../flags.ts';
import { readQuestionsInput, readText } from './tabular-input.ts';
import { GOLD_CHECK_USAGE } from '../usage.ts';

export const usage = GOLD_CHECK_USAGE;

/**
 * What each item executes before its gold: a query that reads nothing and writes nothing, so the
 * gold runs as the gold (a failing gold is a \`gold: ...\` error, the gold-error check of eval)
 * on a pristine database.
 */
const NEUTRAL_PREDICTION = 'SELECT 1';

export async function run(argv: string[], host: NodeHost): Promise<number> {
  const { values } = parseFlags(
    argv,
    {
      ...DATASET_FLAGS,
      workers: { type: 'string' },
      out: { type: 'string' },
    },
    usage,
  );
  requireFlags(values, ['gold', 'db-root'], usage);
  // Before any gold runs: an --out that cannot be written fails now, naming the flag.
  await checkOutputsWithDataset(
    { gold: values.gold, dataset: values.dataset, dbRoot: values['db-root'] },
    { outputs: pathFlags({ '--out': values.out }), inputs: [] },
  );
  const dbRoot = values['db-root']!;
  if (!(await stat(dbRoot).catch(() => null))?.isDirectory()) {
    throw new WorkbenchError(
      'MISSING_FILE',
      `not a directory: ${dbRoot} (expected <db-root>/<db_id>/<db_id>.sqlite)`,
      '--db-root',
    );
  }
  const gold = parseGoldSql(await readText('--gold', values.gold!), path.basename(values.gold!));
  const questions = values.dataset ? await readQuestionsInput(host, '--dataset', values.dataset) : null;
  const items: EvalItem[] = gold.map((g, index) => ({
    index,
    questionId: questions?.[index]?.questionId ?? index,
    dbId: g.dbId,
    difficulty: questions?.[index]?.difficulty ?? 'unknown',
    predSql: NEUTRAL_PREDICTION,
    goldSql: g.sql,
    extraction: { rule: 'sql-line', thinkStripped: false },
  }));
  const pool = host.sql.pool({ dbRoot, workers: workersFlag(values.workers) ?? availableParallelism() });
  let results;
  try {
    // The run recipe with the self-test's settings: EX only, the official timeout, writes allowed.
    ({ results } = await scoreRun(
      items,
      { ...DEFAULT_RUN_CONFIG, metrics: ['ex'], timeoutMs: OFFICIAL_TIMEOUT_MS, readOnly: false, vesIterations: 0 },
      {
        executor: pool,
        questionOf: questions ? (i) => questions[i]?.question ?? null : undefined,
      },
    ));
  } finally {
    await pool.dispose();
  }
  assertSomethingScored(
    results,
    dbRoot,
    `${values.gold} holds no gold line: give the gold file (one SQL<TAB>db_id per line)`,
  );
  const scored = results.filter((r) => r.status !== 'missing-db');
  const missing = results.length - scored.length;
  process.stdout.write(
    `gold queries checked: ${scored.length}${missing ? ` (${missing} left out: database missing)` : ''}\n`,
  );
  process.stdout.write(goldIssuesReport(scored) + '\n');
  if (values.out) {
    const counts = rewardCounts(scored);
    await writeFileAtomic(
      values.out,
      JSON.stringify(
        {
          checked: scored.length,
          missing_db: missing,
          by_kind: counts.goldIssueKinds,
          items: counts.goldIssues.map((r) => ({
            index: r.index,
            question_id: r.questionId,
            db_id: r.dbId,
            gold_rows: r.goldRowCount,
            issues: r.goldIssues,
          })),
        },
        null,
        1,
      ) + '\n',
    );
  }
  const failing = scored.filter((r) => r.goldIssues?.some((g) => g.kind === 'gold-error')).length;
  if (failing > 0)
    process.stderr.write(
      `${failing} gold quer${failing === 1 ? 'y fails' : 'ies fail'}: every prediction for ${failing === 1 ? 'it' : 'them'} scores 0; fix or drop ${failing === 1 ? 'it' : 'them'} (listed above as "gold fails")\n`,
    );
  return failing > 0 ? 1 : 0;
}
