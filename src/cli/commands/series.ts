/**
 * `series`: a training run as one object. The checkpoints' dumps (verl `<step>.jsonl` folders,
 * lm-eval or Inspect logs one per checkpoint, with the step from the file name) are read with the
 * `harness` readers, each step is scored by the app's series step (src/app/series-step.ts, as the
 * app's series service scores it: only SQL the series has not executed yet runs), and the series' statistics (src/core/series/stats.ts) are
 * printed and written as JSON, CSV, Parquet and the shareable series file, from one report built
 * once (the work is linear in steps). `--watch` polls the folders, evaluates each step file once
 * its size and modification time are the same at two polls (and a JSON file parses), reads a file
 * again whenever it changes (a step already scored is replaced, with a warning naming the file),
 * and rewrites the outputs atomically once per poll that changed the series; Ctrl-C stops it
 * cleanly. Step files are listed by series-files.ts (links never followed). docs/series.md
 * defines every number.
 */
import { excludedPresent, type Exclusion } from '../../core/eval/exclusions.ts';
import { excludedLine, excludeFlag } from './exclude-flags.ts';
import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { stepRuleText, type DumpStep } from '../../core/series/dump-step.ts';
import { pairDumpStep } from '../../app/pair-dump-step.ts';
import { WorkbenchError, errorMessage } from '../../core/errors.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { HARNESS_FORMATS, type HarnessFormat } from '../../core/formats/harness.ts';
import { toRunFile } from '../../core/runfile/export.ts';
import type { RunConfig } from '../../core/run/types.ts';
import type { ExRule } from '../../core/compare/spider-ex.ts';
import { questionsExRule } from '../../app/ex-rule.ts';
import { scoreSeriesStep } from '../../app/series-step.ts';
import type { TableSchema } from '../../core/views/tables.ts';
import { SeriesVerdicts } from '../../core/series/evaluate-step.ts';
import { pollPause, StableFiles } from '../../core/series/folder-poll.ts';
import { seriesFileJson } from '../../core/series/file.ts';
import type { Series, SeriesStep } from '../../core/series/model.ts';
import { BUCKETS, seriesReport, type Bucket, type SeriesReport, type StepStats } from '../../core/series/stats.ts';
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
import type { NodeHost } from '../node-host.ts';
import { runConfigOf, type EvalArgs } from './eval-args.ts';
import { evalArgsOf } from './scoring-flags.ts';
import { listStepFiles } from './series-files.ts';
import { bad, parseFlags, strings, switches } from '../flags.ts';
import { integerFlag } from './rl-args.ts';
import { evalRunHeader, executorName, runQuestions } from './run-out.ts';
import { openEvalCache, type EvalCache } from './eval-cache.ts';
import { readQuestionsInput, readText } from './tabular-input.ts';
import { SERIES_USAGE } from '../usage.ts';

export const usage = SERIES_USAGE;

/** How the bucket line names each bucket (the JSON keeps the ids). */
const BUCKET_WORDS: Record<Bucket, string> = {
  unstable: 'unstable',
  always: 'always',
  never: 'never',
  learned: 'learned',
  forgotten: 'forgotten',
  unearned: 'solved only by unearned passes',
};

function pct(x: number | null): string {
  return x === null ? '-' : x.toFixed(2);
}

const COLUMNS: Array<[string, (s: StepStats, e: StepExtra | undefined) => string]> = [
  ['step', (s) => String(s.step)],
  ['questions', (s) => String(s.questions)],
  ['n', (s) => (s.nMin === s.nMax ? String(s.nMax) : `${s.nMin}-${s.nMax}`)],
  ['EX', (s) => pct(s.ex)],
  ['earned', (s) => pct(s.earned)],
  ['TS', (s) => pct(s.ts)],
  ['pass@1', (s) => pct(s.passAt1)],
  ['pass@n', (s) => pct(s.passAtN)],
  ['pass^n', (s) => pct(s.passHatN)],
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
  // The trainer passed and EX failed / the reverse (TRAINER_PASS_THRESHOLD, docs/series.md).
  ['disagree', (s) => (s.trainerScored === null ? '-' : `${s.trainerRightExWrong}/${s.trainerWrongExRight}`)],
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
  lines.push('', `questions: ${BUCKETS.map((b) => `${report.buckets[b]} ${BUCKET_WORDS[b]}`).join(', ')}`);
  const best = report.best;
  if (best) {
    lines.push(
      `best step by earned score: step ${best.step}, earned ${pct(best.earned)} (95% bootstrap interval ${pct(best.ciLow)} to ${pct(best.ciHigh)}, ${best.resamples} resamples), EX ${pct(best.ex)}`,
    );
    if (best.byEx) lines.push(`best step by EX: ${best.byEx.message}`);
  }
  for (const w of report.warnings) lines.push(`warning from step ${w.startStep} (${w.rule}): ${w.message}`);
  return lines.join('\n');
}

interface Context {
  evalArgs: EvalArgs;
  /** The run's settings as every step is scored (the evaluation flags, the reward formula). */
  config: RunConfig;
  /** The dataset's EX rule: Spider's for a Spider question file (docs/spider-rules.md). */
  exRule: ExRule;
  dbDir: string;
  gold: ReturnType<typeof parseGoldSql>;
  questions: Question[];
  format: HarnessFormat | null;
  rule: StepRule | undefined;
  verdicts: SeriesVerdicts;
  executor: ReturnType<NodeHost['sql']['pool']>;
  host: NodeHost;
  /** The verdict cache across runs (`--cache DIR`, default folder; `--no-cache`: none), as `eval` uses it. */
  cache: EvalCache | null;
  signal: AbortSignal;
}

/**
 * One step of a dump: mapped rows -> items (the app's pairDumpStep) -> the app's step scoring (earlier
 * steps' verdicts reused; the same use case as the app's series service) -> the step's run and
 * the trainer's scores. Null when stopped.
 */
async function stepOfDump(
  ctx: Context,
  dump: DumpStep,
  file: string,
): Promise<{ step: SeriesStep; extra: StepExtra } | null> {
  const label = dump.source;
  const paired = pairDumpStep(dump, { gold: ctx.gold, questions: ctx.questions });
  for (const w of paired.warnings) process.stderr.write(`warning: ${w}\n`);
  const scored = await scoreSeriesStep(
    paired.items,
    ctx.config,
    ctx.exRule,
    {
      executor: ctx.executor,
      questionOf: (i) => ctx.questions[i]?.question ?? null,
      signal: ctx.signal,
      reuse: ctx.evalArgs.reuse,
      ...(ctx.cache ? { verdictCache: ctx.cache.port } : {}),
    },
    ctx.verdicts,
  );
  if (scored.cancelled) return null;
  const { items, results } = scored;
  // A step of whose items none could run (an empty --db-root) measured nothing: an error, not a row of zeros.
  assertSomethingScored(results, ctx.evalArgs.dbRoot);
  const header = await evalRunHeader(
    { ...ctx.evalArgs, exRule: scored.config.exRule ?? null, dbRoot: ctx.dbDir, predictions: file },
    items,
    results,
  );
  header.name = label;
  header.executions = scored.executions;
  // The trainer's scores and reward columns, paired by the same sample order as the items.
  const { trainerScores, trainerRewards } = paired;
  // The dump's own time first (docs/series.md), else the file's modification time, in whole
  // milliseconds as a browser's File.lastModified gives it (Node's `mtime` rounds, the app's floors).
  const wallTime = dump.wallTime ?? new Date(Math.floor((await stat(file)).mtimeMs)).toISOString();
  return {
    step: {
      step: dump.step,
      wallTime,
      wallTimeSource: dump.wallTime ? 'dump' : 'file',
      source: label,
      run: toRunFile(header, scored.records, runQuestions(items, ctx.questions)),
      trainerScores,
      ...(trainerRewards ? { trainerRewards } : {}),
    },
    extra: scored.executions,
  };
}

/** What a test may replace in `run` (the command itself passes none). */
export interface SeriesRunHooks {
  /** Stops the run as Ctrl-C does (SIGINT aborts it too). */
  stop?: AbortController;
  /** Called after each poll of `--watch` (1, 2, ...), once its files are evaluated and the outputs written. */
  afterPoll?: (poll: number) => void | Promise<void>;
  /** Builds the series' report (the statistics of every step); a test counts its calls. */
  seriesReport?: (series: Series, exclusions?: readonly Exclusion[]) => SeriesReport;
}

export async function run(argv: string[], host: NodeHost, hooks: SeriesRunHooks = {}): Promise<number> {
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
        'exclude',
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
  const questions = await readQuestionsInput(host, '--dataset', values.dataset!);
  // Questions left out of every step's numbers (checked before any step is read).
  const exclusions = await excludeFlag(values.exclude);
  process.stderr.write(`step rule: ${stepRuleText(rule)} (verl rows carry their own "step")\n`);
  await listStepFiles(values.completions); // every input exists before anything starts
  const root = await resolveDbRoot(host, evalArgs.dbRoot);
  const executor = host.sql.pool({ dbRoot: root.dir, workers: evalArgs.workers ?? availableParallelism() });
  const cache = await openEvalCache(host, { cache: evalArgs.cache, dbRoot: root.dir }, executorName());
  const stop = hooks.stop ?? new AbortController();
  const onSignal = () => stop.abort();
  if (values.watch) process.on('SIGINT', onSignal);
  const ctx: Context = {
    evalArgs,
    host,
    config: runConfigOf(evalArgs),
    exRule: questionsExRule(questions, evalArgs.exRule),
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
    // Carried into --series-out (and so into `report --series`), whose numbers honour them.
    ...(exclusions.length ? { exclusions } : {}),
  };
  const extras = new Map<number, StepExtra>();
  // Neither the outputs nor the gold and dataset files are steps, even in a folder the command reads.
  const notSteps = new Set(
    [
      values.out,
      values.csv,
      values.csv && companion(values.csv),
      values.parquet,
      values.parquet && companion(values.parquet),
      values['series-out'],
      values.gold,
      values.dataset,
    ]
      .filter((f): f is string => typeof f === 'string' && f !== '')
      .map((f) => path.resolve(f)),
  );
  const buildReport = hooks.seriesReport ?? seriesReport;
  /** The steps so far by number, and the step numbers each file gave (a file re-read replaces its own). */
  const steps = new Map<number, SeriesStep>();
  const stepsOfFile = new Map<string, number[]>();
  const seriesNow = (): Series => ({ ...series, steps: [...steps.values()].sort((a, b) => a.step - b.step) });

  /** Every output from one report of the whole series: once per run, or once per poll that changed the series. */
  const writeOutputs = async (): Promise<SeriesReport> => {
    series = seriesNow();
    const report = buildReport(series, exclusions);
    if (exclusions.length) {
      const present = excludedPresent(
        series.steps.flatMap((s) => s.run.samples),
        exclusions,
      );
      process.stderr.write(excludedLine(exclusions, values.exclude, present));
    }
    if (values.out)
      await writeFileAtomic(
        values.out,
        JSON.stringify(seriesReportJson(report, { stepRule: series.stepRule, dataset, exclusions }), null, 1) + '\n',
      );
    const rows = questionStepRows(report);
    if (values.csv) {
      await writeFileAtomic(values.csv, tableCsv(SERIES_STEPS_TABLE, report.steps));
      await writeFileAtomic(companion(values.csv), tableCsv(SERIES_QUESTION_STEPS_TABLE, rows));
    }
    if (values.parquet) {
      await writeParquetAtomic(host, values.parquet, SERIES_STEPS_TABLE, report.steps);
      await writeParquetAtomic(host, companion(values.parquet), SERIES_QUESTION_STEPS_TABLE, rows);
    }
    if (values['series-out']) await writeFileAtomic(values['series-out'], seriesFileJson(series));
    return report;
  };

  /**
   * The steps of one file, evaluated; nothing is added to the series here (a file's steps are
   * added together or not at all). Null when stopped.
   */
  const readFileSteps = async (
    file: string,
    name: string,
  ): Promise<Array<{ step: SeriesStep; extra: StepExtra }> | null> => {
    const bytes = await readFile(file);
    // Under --watch, a JSON file that does not parse is not complete yet (a BIRD file half written).
    if (values.watch && /\.json$/i.test(name)) {
      try {
        JSON.parse(new TextDecoder().decode(bytes).replace(/^\uFEFF/, ''));
      } catch (err) {
        throw new WorkbenchError(
          'BAD_JSON',
          `not complete JSON yet (${errorMessage(err)}): read again once the file changes`,
          file,
        );
      }
    }
    const dump = await ctx.host.readSeriesDump(name, new Blob([bytes]), questions, {
      format: ctx.format,
      rule: ctx.rule,
      // An lm-eval samples file's results file beside it, for its date.
      sibling: async (n) => new Blob([await readFile(path.join(path.dirname(file), n))]),
    });
    for (const note of dump.notes) process.stderr.write(`${note}\n`);
    const out: Array<{ step: SeriesStep; extra: StepExtra }> = [];
    for (const step of dump.steps) {
      if (step.report) process.stderr.write(`${step.report}\n`);
      if (step.matched === 0) {
        process.stderr.write(`warning: ${name} step ${step.step}: no row matched a question; nothing to evaluate\n`);
        continue;
      }
      const done = await stepOfDump(ctx, step, file);
      if (!done) return null;
      out.push(done);
    }
    return out;
  };

  /** Adds a file's steps, in place of the steps it gave before when it is read again; a step another file gave is refused. */
  const commit = (file: string, got: ReadonlyArray<{ step: SeriesStep; extra: StepExtra }>) => {
    const own = new Set(stepsOfFile.get(file) ?? []);
    for (const { step } of got) {
      const had = steps.get(step.step);
      if (had && !own.has(step.step))
        throw new WorkbenchError(
          'MISMATCH',
          `step ${step.step} is already in the series (from ${had.source}); each step is evaluated once`,
          step.source,
        );
      if (step.trainerScores.length !== step.run.samples.length)
        throw new WorkbenchError(
          'INTERNAL',
          `step ${step.step}: ${step.trainerScores.length} trainer scores for ${step.run.samples.length} samples`,
        );
      if (step.trainerRewards && step.trainerRewards.length !== step.run.samples.length)
        throw new WorkbenchError(
          'INTERNAL',
          `step ${step.step}: ${step.trainerRewards.length} trainer reward entries for ${step.run.samples.length} samples`,
        );
    }
    for (const s of own) {
      steps.delete(s);
      extras.delete(s);
    }
    for (const { step, extra } of got) {
      steps.set(step.step, step);
      extras.set(step.step, extra);
    }
    stepsOfFile.set(
      file,
      got.map((g) => g.step.step),
    );
  };

  let report: SeriesReport | null = null;
  try {
    if (!values.watch) {
      const listing = await listStepFiles(values.completions, notSteps);
      for (const line of listing.refused) process.stderr.write(`warning: ${line}\n`);
      for (const { file, name } of listing.files) {
        const got = await readFileSteps(file, name);
        if (got) commit(file, got);
      }
      if (steps.size === 0)
        throw new WorkbenchError(
          'MISMATCH',
          'no step had a row matching a question of the dataset: nothing was evaluated',
          '--completions',
        );
      report = await writeOutputs();
    } else {
      const files = new StableFiles();
      const noted = new Set<string>();
      process.stderr.write(
        `watching ${values.completions.join(', ')} every ${pollMs} ms; a file is evaluated once its size and modification time are the same at two polls (and, for JSON, it parses); a file that changes afterwards is read again; Ctrl-C stops\n`,
      );
      for (let poll = 1; !stop.signal.aborted; poll++) {
        const listing = await listStepFiles(values.completions, notSteps);
        for (const line of listing.refused) {
          if (!noted.has(line)) process.stderr.write(`warning: ${line}\n`);
          noted.add(line);
        }
        const byName = new Map(listing.files.map((f) => [f.file, f]));
        const added: Array<{ step: SeriesStep; extra: StepExtra; source: string }> = [];
        for (const file of files.poll(listing.files.map((f) => ({ ...f, name: f.file })))) {
          if (stop.signal.aborted) {
            files.release(file);
            break;
          }
          const rescore = stepsOfFile.has(file);
          if (rescore)
            process.stderr.write(
              `warning: ${file} changed after step${stepsOfFile.get(file)!.length === 1 ? '' : 's'} ${stepsOfFile.get(file)!.join(', ')} ${stepsOfFile.get(file)!.length === 1 ? 'was' : 'were'} scored: read again; its steps are replaced by what it holds now\n`,
            );
          try {
            const got = await readFileSteps(file, byName.get(file)!.name);
            if (!got) {
              files.release(file);
              break;
            }
            commit(file, got);
            for (const g of got) added.push({ ...g, source: g.step.source });
          } catch (err) {
            // A bad file is reported and skipped; the series and its outputs stay as they were; it is read again once it changes.
            process.stderr.write(
              `error: ${errorMessage(err)} (skipped; read again once the file changes; the watch goes on)\n`,
            );
          }
        }
        if (added.length > 0) {
          await ctx.cache?.save();
          report = await writeOutputs();
          for (const { step, extra, source } of added) {
            const s = report.steps.find((x) => x.step === step.step);
            if (!s) continue;
            process.stdout.write(
              `step ${s.step}: EX ${pct(s.ex)}, pass@1 ${pct(s.passAt1)}, ${s.questions} questions, ${extra.executed} executed, ${extra.reused} reused, ${extra.fromCache} from the verdict cache (${source})\n`,
            );
          }
        }
        await hooks.afterPoll?.(poll);
        if (stop.signal.aborted) break;
        await pollPause(pollMs, stop.signal, REAL_TIMER);
      }
      process.stderr.write(`stopped: ${steps.size} step${steps.size === 1 ? '' : 's'} in the series\n`);
    }
    process.stdout.write(`${seriesTable(report ?? buildReport(seriesNow()), extras)}\n`);
  } finally {
    process.off('SIGINT', onSignal);
    // Verdicts computed are kept, also when a step failed or the watch was stopped.
    await ctx.cache
      ?.save()
      .catch((err) => process.stderr.write(`warning: the verdict cache was not saved: ${errorMessage(err)}\n`));
    await executor.dispose();
    await root.cleanup();
  }
  return 0;
}

/** Node's timer for the pause between two polls. */
const REAL_TIMER = {
  start(ms: number, fire: () => void) {
    const t = setTimeout(fire, ms);
    return () => clearTimeout(t);
  },
};

function writeParquetAtomic<R>(host: NodeHost, file: string, table: TableSchema<R>, rows: readonly R[]): Promise<void> {
  return writeAtomicWith(file, (temp) =>
    host.parquet.write(temp, table, rows, { metadata: seriesTableMetadata(table) }),
  );
}

/** `steps.csv` -> `steps.questions.csv`: the question x step table beside the step table. */
export function companion(file: string): string {
  const ext = path.extname(file);
  return `${file.slice(0, file.length - ext.length)}.questions${ext}`;
}
