/**
 * `report`: a run (and optionally a second run to compare with, and a training run) as one
 * self-contained HTML file that opens from disk with no server and no network
 * (docs/report.md): the app's own screens, read-only, with the runs packed inside. The builder
 * is core/report/report-file.ts, the same as the app's "Export report" buttons.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { NodeHost } from '../node-host.ts';
import { reportPayload } from '../../core/report/payload.ts';
import { fmtBytes, REPORT_LIMITS, RESULT_ROWS_BUDGET, type ReportLimits } from '../../core/report/limits.ts';
import { resultRowsText, type ResultRows } from '../../core/report/result-rows.ts';
import type { RunFile } from '../../core/run/types.ts';
import { reportResultRows, resultRowsPort } from '../../app/report-rows.ts';
import { resolveDbRoot } from './db-root-zip.ts';
import { buildReport } from '../../core/report/report-file.ts';
import { errorMessage, WorkbenchError } from '../../core/errors.ts';
import { terminalName } from '../../core/util/terminal-text.ts';
import { parseRunFile } from '../../core/runfile/run-file.ts';
import { parseSeriesFile, toSeriesFile, type SeriesFile } from '../../core/series/file.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { checkOutputs } from '../preflight.ts';
import { bad, parseFlags, strings } from '../flags.ts';
import { readText } from './tabular-input.ts';
import { excludedLine, excludeFlag } from './exclude-flags.ts';
import { excludedPresent } from '../../core/eval/exclusions.ts';
import { REPORT_USAGE } from '../usage.ts';

export const usage = REPORT_USAGE;

const MiB = 1024 * 1024;

/**
 * An input's text, its size checked before a byte is read: a file past the bound is refused
 * naming its size and the bound (never read, never called "not UTF-8").
 */
async function readInput(flag: string, file: string, limits: ReportLimits): Promise<string> {
  const st = await stat(file).catch(() => null);
  if (st?.isFile() && st.size > limits.inputBytes)
    throw new WorkbenchError(
      'TOO_LARGE',
      `${file} is ${fmtBytes(st.size)}, more than the ${fmtBytes(limits.inputBytes)} a report reads from one file: make reports of parts of the run (eval --shard K/N --run-out writes a run file of each part), or of a run of fewer samples`,
      flag,
    );
  return readText(flag, file);
}

/**
 * The result rows of the wrong samples of the runs and every step of the training run (each run
 * once: the --run file is often the last step's), run again on `--db-root` through the app's own
 * path (app/report-rows.ts: the explorer's re-execution, `collectResultRows`, the app's budget).
 * Without --db-root, or when the databases cannot be read, null, and stderr says why.
 */
async function wrongRows(
  host: NodeHost,
  dbRoot: string | undefined,
  runs: readonly RunFile[],
  series: SeriesFile | null,
): Promise<ResultRows | null> {
  if (!dbRoot) {
    process.stderr.write(
      'the report has no result rows of its wrong samples: a run file keeps verdicts and row counts, not rows; give --db-root DIR (the databases eval read) to run each wrong sample again and keep its first rows\n',
    );
    return null;
  }
  const all = [...runs];
  for (const st of series?.steps ?? []) if (!all.some((f) => f.run.id === st.run.run.id)) all.push(st.run);
  // --db-root may be a zip (BIRD's dev.zip), as for eval: its databases inflated to a temporary folder.
  const root = await resolveDbRoot(host, dbRoot);
  try {
    let failure: unknown = null;
    const rows = await reportResultRows(
      all,
      resultRowsPort({
        dbSource: () => host.sql.folder(root.dir),
        createExecutor: () => host.sql.pool({ dbRoot: root.dir, workers: 2 }),
      }),
      RESULT_ROWS_BUDGET,
      (err) => (failure = err),
    );
    process.stderr.write(
      rows
        ? `result rows: ${resultRowsText(rows)}\n`
        : `the report has no result rows of its wrong samples: the databases of --db-root ${terminalName(dbRoot)} could not be read: ${errorMessage(failure)}\n`,
    );
    return rows;
  } finally {
    await root.cleanup();
  }
}

export async function run(argv: string[], host: NodeHost): Promise<number> {
  const { values } = parseFlags(
    argv,
    {
      ...strings('run', 'compare', 'series', 'exclude', 'out', 'db-root'),
    },
    usage,
  );
  if (!values.run) throw bad('--run', `is required\n${usage}`);
  if (!values.out) throw bad('--out', `is required (the report's HTML file)\n${usage}`);
  await checkOutputs({
    outputs: [{ flag: '--out', file: values.out }],
    inputs: [
      { flag: '--run', file: values.run },
      { flag: '--compare', file: values.compare ?? null },
      { flag: '--series', file: values.series ?? null },
      { flag: '--exclude', file: values.exclude ?? null },
    ],
    inputDirs: [{ flag: '--db-root', file: values['db-root'] ?? null }],
  });
  const exclusions = await excludeFlag(values.exclude);
  const limits = REPORT_LIMITS;
  const template = host.report.readTemplate();
  const runs = [parseRunFile(await readInput('--run', values.run, limits), path.basename(values.run))];
  if (values.compare)
    runs.push(parseRunFile(await readInput('--compare', values.compare, limits), path.basename(values.compare)));
  const series = values.series
    ? toSeriesFile(parseSeriesFile(await readInput('--series', values.series, limits), path.basename(values.series)))
    : null;
  const resultRows = await wrongRows(host, values['db-root'], runs, series);
  const payload = reportPayload({
    runs,
    compare: runs.length > 1,
    series,
    resultRows,
    product: `${host.report.productName()} (CLI)`,
    createdAt: new Date().toISOString(),
    exclusions: runs.map((f) => ({ ownerId: f.run.id, list: exclusions })),
  });
  const { html, cut } = await buildReport(template, payload, host.report.gzip, 'report template', limits);
  await writeFileAtomic(values.out, html);
  const samples = runs.reduce((n, f) => n + f.samples.length, 0);
  const parts = [
    `run "${terminalName(runs[0]!.run.name)}"`,
    ...(runs[1] ? [`compared with "${terminalName(runs[1].run.name)}"`] : []),
    ...(series ? [`training run "${terminalName(series.series.name)}" (${series.steps.length} steps)`] : []),
  ];
  const excluded = excludedPresent(
    runs.flatMap((f) => f.samples),
    exclusions,
  );
  process.stderr.write(excludedLine(exclusions, values.exclude, excluded));
  process.stdout.write(
    `wrote ${terminalName(values.out)}: ${(Buffer.byteLength(html) / MiB).toFixed(2)} MiB, ${samples.toLocaleString('en')} samples; ${parts.join(', ')}\n` +
      (cut
        ? `${cut.count.toLocaleString('en')} text(s) longer than ${cut.maxChars.toLocaleString('en')} characters were cut in the report, each ending in "… (N characters more)"; the run files hold them whole\n`
        : '') +
      'open it in a browser from disk: no server and no network needed\n',
  );
  return 0;
}
