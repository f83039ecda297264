/**
 * `series`: a training run as one object. The checkpoints' dumps (verl `<step>.jsonl` folders,
 * lm-eval or Inspect logs one per checkpoint, with the step from the file name) are read with the
 * `harness` readers, each step is evaluated executing only SQL the series has not executed yet
 * (src/core/series/evaluate-step.ts), and the series' statistics (src/core/series/stats.ts) are
 * printed and written as JSON, CSV, Parquet and the shareable series file. `--watch` polls the
 * folders, evaluates each new step file once its size is stable over two polls, and rewrites the
 * outputs atomically after each step; Ctrl-C stops it cleanly. docs/series.md defines every number.
 */
import { randomUUID } from 'node:crypto';
import { readFile, readdir, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import {
  readSeriesDump,
  SERIES_DUMP_FILE,
  stepRuleText,
  trainerScoreOf,
  type DumpStep,
} from '../../adapters/harness/series-dump.ts';
import { createNodeSqlPool } from '../../adapters/node/sql-worker-host.ts';
import { writeParquetFile } from '../../adapters/parquet/node-sink.ts';
import { WorkbenchError, errorMessage } from '../../core/errors.ts';
import { evalOptionsOf } from '../../core/eval/executor.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { HARNESS_FORMATS, type HarnessFormat } from '../../core/formats/harness.ts';
import { findingText } from '../../core/formats/pairing.ts';
import { compileRewardFormula } from '../../core/eval/reward.ts';
import { toRunFile } from '../../core/runfile/export.ts';
import { planReplay } from '../../core/run/replay.ts';
import { toSampleRecords } from '../../core/run/score-run.ts';
import type { TableSchema } from '../../core/views/tables.ts';
import { evaluateSeriesStep, SeriesVerdicts } from '../../core/series/evaluate-step.ts';
import { StableFiles } from '../../core/series/folder-poll.ts';
import { seriesFileJson } from '../../core/series/file.ts';
import { withStep, type Series, type SeriesStep } from '../../core/series/model.ts';
import { BUCKETS, seriesReport, type SeriesReport, type StepStats } from '../../core/series/stats.ts';
import { compileStepPattern, type StepRule } from '../../core/series/step-name.ts';
import {
  questionStepRows,
  SERIES_QUESTION_STEPS_TABLE,
  SERIES_STEPS_TABLE,
  seriesReportJson,
  seriesTableMetadata,
  tableCsv,
} from '../../core/series/tables.ts';
import type { Question } from '../../core/types.ts';
import { writeAtomicWith, writeFileAtomic } from '../atomic-write.ts';
import { assertSomethingScored } from '../nothing-scored.ts';
import { checkOutputsWithDataset, pathFlags } from '../preflight.ts';
import { resolveDbRoot } from './db-root-zip.ts';
import type { EvalArgs } from './eval-args.ts';
import { evalArgsOf } from './scoring-flags.ts';
import { bad, parseFlags, strings, switches } from './flags.ts';
import { integerFlag } from './rl-args.ts';
import { evalRunHeader, executorName, runQuestions } from './run-out.ts';
import { openEvalCache, type EvalCache } from './eval-cache.ts';
import { readQuestionsInput, readText } from './tabular-input.ts';
import { SERIES_USAGE } from '../usage.ts';

export const usage = SERIES_USAGE;

/** The dump files of the inputs: a folder's files (and its subfolders': lm-eval writes one per checkpoint folder), hidden and temporary files left out. */
async function listFiles(
  inputs: readonly string[],
  outputs: ReadonlySet<string> = new Set(),
): Promise<Array<{ file: string; name: string }>> {
  const out: Array<{ file: string; name: string }> = [];
  for (const input of inputs) {
    const st = await stat(input).catch(() => null);
    if (!st) throw new WorkbenchError('MISSING_FILE', `file or folder not found: ${input}`, '--completions');
    if (!st.isDirectory()) {
      out.push({ file: input, name: path.basename(input) });
      continue;
    }
    const entries = (await readdir(input, { recursive: true })).map(String).sort();
    for (const rel of entries) {
      if (!SERIES_DUMP_FILE.test(rel) || rel.split(/[\\/]/).some((s) => s.startsWith('.'))) continue;
      const file = path.join(input, rel);
      // The command's own outputs may sit in the folder it reads: they are not dumps.
      if (!outputs.has(path.resolve(file)) && (await stat(file).catch(() => null))?.isFile())
        out.push({ file, name: rel });
    }
  }
  return out;
}

function pct(x: number | null): string {
  return x === null ? '-' : x.toFixed(2);
}

const COLUMNS: Array<[string, (s: StepStats, e: StepExtra | undefined) => string]> = [
  ['step', (s) => String(s.step)],
  ['questions', (s) => String(s.questions)],
  ['n', (s) => (s.nMin === s.nMax ? String(s.nMax) : `${s.nMin}-${s.nMax}`)],
  ['EX', (s) => pct(s.ex)],
  ['TS', (s) => pct(s.ts)],
  ['pass@1', (s) => pct(s.passAt1)],
  ['pass@n', (s) => pct(s.passAtN)],
  ['maj@n', (s) => pct(s.majAtN)],
  ['all-right', (s) => pct(s.allRight)],
  ['all-wrong', (s) => pct(s.allWrong)],
  ['mixed', (s) => pct(s.mixed)],
  ['groups', (s) => s.resultGroups.toFixed(2)],
  ['chars', (s) => s.completionChars.toFixed(0)],
  ['no-SQL', (s) => String(s.extractionFailures)],
  ['errors', (s) => String(s.errors)],
  ['timeouts', (s) => String(s.timeouts)],
  ['writes', (s) => String(s.writes)],
  ['EX-only', (s) => (s.exOnly === null ? '-' : String(s.exOnly))],
  ['empty', (s) => String(s.emptyResultPasses)],
  ['trainer', (s) => (s.trainerReward === null ? '-' : s.trainerReward.toFixed(4))],
  ['executed', (_s, e) => (e ? String(e.executed) : '-')],
  ['reused', (_s, e) => (e ? String(e.reused) : '-')],
  ['cached', (_s, e) => (e ? String(e.fromCache) : '-')],
];

interface StepExtra {
  executed: number;
  reused: number;
  /** Verdicts from the verdict cache across runs (`--cache`), not executed. */
  fromCache: number;
}

/** The per-step table (fixed-width columns), the bucket counts and the warnings. */
export function seriesTable(report: SeriesReport, extras: ReadonlyMap<number, StepExtra>): string {
  const rows = [COLUMNS.map(([h]) => h), ...report.steps.map((s) => COLUMNS.map(([, f]) => f(s, extras.get(s.step))))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((c, i) => c.padStart(widths[i]!)).join('  '));
  lines.push('', `questions: ${BUCKETS.map((b) => `${report.buckets[b]} ${b}`).join(', ')}`);
  for (const w of report.warnings) lines.push(`warning from step ${w.startStep} (${w.rule}): ${w.message}`);
  return lines.join('\n');
}

interface Context {
  evalArgs: EvalArgs;
  dbDir: string;
  gold: ReturnType<typeof parseGoldSql>;
  questions: Question[];
  format: HarnessFormat | null;
  rule: StepRule | undefined;
  verdicts: SeriesVerdicts;
  executor: ReturnType<typeof createNodeSqlPool>;
  /** The verdict cache across runs (`--cache DIR`, default folder; `--no-cache`: none), as `eval` uses it. */
  cache: EvalCache | null;
  signal: AbortSignal;
}

/** One step of a dump: mapped rows -> items -> verdicts (earlier steps' reused) -> the step's run and the trainer's scores. Null when stopped. */
async function evaluateStep(
  ctx: Context,
  dump: DumpStep,
  file: string,
): Promise<{ step: SeriesStep; extra: StepExtra } | null> {
  const label = dump.source;
  const plan = planReplay({
    predictions: { ...dump.predictions, name: label },
    gold: ctx.gold,
    questions: ctx.questions,
  });
  for (const w of [...plan.findings.map(findingText), ...plan.warnings]) process.stderr.write(`warning: ${w}\n`);
  const options = evalOptionsOf({ ...ctx.evalArgs, timeoutMs: ctx.evalArgs.timeoutS * 1000 });
  const ev = await evaluateSeriesStep(
    plan.items,
    options,
    {
      executor: ctx.executor,
      signal: ctx.signal,
      reuse: ctx.evalArgs.reuse,
      ...(ctx.cache ? { verdictCache: ctx.cache.port } : {}),
    },
    ctx.verdicts,
  );
  if (ev.cancelled) return null;
  // A step of whose items none could run (an empty --db-root) measured nothing: an error, not a row of zeros.
  assertSomethingScored(ev.results, ctx.evalArgs.dbRoot);
  // Kept after every step: a watch stopped by Ctrl-C loses no verdict it computed.
  await ctx.cache?.save();
  const header = await evalRunHeader({ ...ctx.evalArgs, dbRoot: ctx.dbDir, predictions: file }, plan.items, ev.results);
  header.name = label;
  header.executions = { executed: ev.executed, reused: ev.fromEarlierSteps + ev.reusedInStep, fromCache: ev.fromCache };
  const samples = toSampleRecords(plan.items, ev.results, compileRewardFormula(ctx.evalArgs.reward));
  const trainerScores = plan.items.map((it) => trainerScoreOf(dump, it.questionId, it.sample));
  // The dump's own time first (docs/series.md), else the file's modification time, in whole
  // milliseconds as a browser's File.lastModified gives it (Node's `mtime` rounds, the app's floors).
  const wallTime = dump.wallTime ?? new Date(Math.floor((await stat(file)).mtimeMs)).toISOString();
  return {
    step: {
      step: dump.step,
      wallTime,
      wallTimeSource: dump.wallTime ? 'dump' : 'file',
      source: label,
      run: toRunFile(header, samples, runQuestions(plan.items, ctx.questions)),
      trainerScores,
    },
    extra: { executed: ev.executed, reused: ev.fromEarlierSteps + ev.reusedInStep, fromCache: ev.fromCache },
  };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags(
    argv,
    {
      completions: { type: 'string', multiple: true },
      ...strings(
        'from',
        'gold',
        'dataset',
        'db-root',
        'out',
        'csv',
        'parquet',
        'series-out',
        'poll-ms',
        'step-pattern',
        'timeout-s',
        'workers',
        'metrics',
        'cache',
      ),
      ...switches('watch', 'no-cache'),
    },
    usage,
  );
  if (!values.completions?.length) throw bad('--completions', `is required\n${usage}`);
  for (const req of ['gold', 'dataset', 'db-root'] as const)
    if (!values[req]) throw bad(`--${req}`, `is required\n${usage}`);
  if (values.from !== undefined && !(HARNESS_FORMATS as readonly string[]).includes(values.from)) {
    throw bad('--from', `unknown format ${JSON.stringify(values.from)}; use one of ${HARNESS_FORMATS.join(', ')}`);
  }
  // Before any step is read or run: every output (and the companion tables) writable, none an input.
  await checkOutputsWithDataset(
    { gold: values.gold, dataset: values.dataset, dbRoot: values['db-root'] },
    {
      outputs: [
        ...pathFlags({ '--out': values.out, '--csv': values.csv, '--parquet': values.parquet }),
        { flag: '--csv', file: values.csv && companion(values.csv) },
        { flag: '--parquet', file: values.parquet && companion(values.parquet) },
        ...pathFlags({ '--series-out': values['series-out'] }),
      ],
      inputs: values.completions.map((file) => ({ flag: '--completions', file })),
    },
  );
  const pollMs = integerFlag('--poll-ms', values['poll-ms'], 1000, 100, 60_000);
  if (values['poll-ms'] !== undefined && !values.watch) throw bad('--poll-ms', 'only means something with --watch');
  const rule = values['step-pattern'] === undefined ? undefined : compileStepPattern(values['step-pattern']);
  // The evaluation flags mean what they mean for `eval` (same parser, same defaults and checks).
  const evalArgs = evalArgsOf(values.completions[0]!, values);
  const gold = parseGoldSql(await readText('--gold', evalArgs.gold), path.basename(evalArgs.gold));
  const questions = await readQuestionsInput('--dataset', values.dataset!);
  process.stderr.write(`step rule: ${stepRuleText(rule)} (verl rows carry their own "step")\n`);
  await listFiles(values.completions); // every input exists before anything starts
  const root = await resolveDbRoot(evalArgs.dbRoot);
  const executor = createNodeSqlPool({ dbRoot: root.dir, workers: evalArgs.workers ?? availableParallelism() });
  const cache = await openEvalCache({ cache: evalArgs.cache, dbRoot: root.dir }, executorName());
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  if (values.watch) process.on('SIGINT', onSignal);
  const ctx: Context = {
    evalArgs,
    dbDir: root.dir,
    gold,
    questions,
    format: (values.from as HarnessFormat | undefined) ?? null,
    rule,
    verdicts: new SeriesVerdicts(),
    executor,
    cache,
    signal: stop.signal,
  };
  const dataset = path.basename(values.dataset!);
  let series: Series = {
    id: randomUUID(),
    name: path.basename(values.completions[0]!),
    createdAt: new Date().toISOString(),
    dataset,
    stepRule: stepRuleText(rule),
    steps: [],
  };
  const extras = new Map<number, StepExtra>();
  const outputs = new Set(
    [
      values.out,
      values.csv,
      values.csv && companion(values.csv),
      values.parquet,
      values.parquet && companion(values.parquet),
      values['series-out'],
    ]
      .filter((f): f is string => typeof f === 'string' && f !== '')
      .map((f) => path.resolve(f)),
  );

  const writeOutputs = async () => {
    const report = seriesReport(series);
    if (values.out)
      await writeFileAtomic(
        values.out,
        JSON.stringify(seriesReportJson(report, { stepRule: series.stepRule, dataset }), null, 1) + '\n',
      );
    const rows = questionStepRows(report);
    if (values.csv) {
      await writeFileAtomic(values.csv, tableCsv(SERIES_STEPS_TABLE, report.steps));
      await writeFileAtomic(companion(values.csv), tableCsv(SERIES_QUESTION_STEPS_TABLE, rows));
    }
    if (values.parquet) {
      await writeParquetAtomic(values.parquet, SERIES_STEPS_TABLE, report.steps);
      await writeParquetAtomic(companion(values.parquet), SERIES_QUESTION_STEPS_TABLE, rows);
    }
    if (values['series-out']) await writeFileAtomic(values['series-out'], seriesFileJson(series));
    return report;
  };

  const addFile = async (file: string, name: string) => {
    const dump = await readSeriesDump(name, new Blob([await readFile(file)]), questions, {
      format: ctx.format,
      rule: ctx.rule,
      // An lm-eval samples file's results file beside it, for its date.
      sibling: async (n) => new Blob([await readFile(path.join(path.dirname(file), n))]),
    });
    for (const note of dump.notes) process.stderr.write(`${note}\n`);
    for (const step of dump.steps) {
      if (step.report) process.stderr.write(`${step.report}\n`);
      if (step.matched === 0) {
        process.stderr.write(`warning: ${name} step ${step.step}: no row matched a question; nothing to evaluate\n`);
        continue;
      }
      const done = await evaluateStep(ctx, step, file);
      if (!done) return;
      series = withStep(series, done.step);
      extras.set(done.step.step, done.extra);
      const report = await writeOutputs();
      if (values.watch) {
        const s = report.steps.find((x) => x.step === done.step.step)!;
        process.stdout.write(
          `step ${s.step}: EX ${pct(s.ex)}, pass@1 ${pct(s.passAt1)}, ${s.questions} questions, ${done.extra.executed} executed, ${done.extra.reused} reused, ${done.extra.fromCache} from the verdict cache (${step.source})\n`,
        );
      }
    }
  };

  try {
    if (!values.watch) {
      for (const { file, name } of await listFiles(values.completions, outputs)) await addFile(file, name);
      if (series.steps.length === 0)
        throw new WorkbenchError(
          'MISMATCH',
          'no step had a row matching a question of the dataset: nothing was evaluated',
          '--completions',
        );
    } else {
      const files = new StableFiles();
      process.stderr.write(
        `watching ${values.completions.join(', ')} every ${pollMs} ms; a file is evaluated once its size is the same at two polls; Ctrl-C stops\n`,
      );
      while (!stop.signal.aborted) {
        const listing = [];
        for (const { file, name } of await listFiles(values.completions, outputs)) {
          if (files.has(file)) continue;
          listing.push({ name: file, size: (await stat(file).catch(() => null))?.size ?? -1, label: name });
        }
        for (const file of files.poll(listing)) {
          if (stop.signal.aborted) break;
          try {
            await addFile(file, listing.find((f) => f.name === file)!.label);
          } catch (err) {
            // A bad file is reported and skipped; the series and its outputs stay as they were.
            process.stderr.write(`error: ${errorMessage(err)} (skipped; the watch goes on)\n`);
          }
        }
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, pollMs);
          stop.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
        });
      }
      process.stderr.write(
        `stopped: ${series.steps.length} step${series.steps.length === 1 ? '' : 's'} in the series\n`,
      );
    }
    process.stdout.write(`${seriesTable(seriesReport(series), extras)}\n`);
  } finally {
    process.off('SIGINT', onSignal);
    await executor.dispose();
    await root.cleanup();
  }
  return 0;
}

function writeParquetAtomic<R>(file: string, table: TableSchema<R>, rows: readonly R[]): Promise<void> {
  return writeAtomicWith(file, (temp) => writeParquetFile(temp, table, rows, { metadata: seriesTableMetadata(table) }));
}

/** `steps.csv` -> `steps.questions.csv`: the question x step table beside the step table. */
export function companion(file: string): string {
  const ext = path.extname(file);
  return `${file.slice(0, file.length - ext.length)}.questions${ext}`;
}
