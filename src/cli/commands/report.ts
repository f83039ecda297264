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
import { fmtBytes, REPORT_LIMITS, type ReportLimits } from '../../core/report/limits.ts';
import { buildReport } from '../../core/report/report-file.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { terminalName } from '../../core/util/terminal-text.ts';
import { parseRunFile } from '../../core/runfile/run-file.ts';
import { parseSeriesFile, toSeriesFile } from '../../core/series/file.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { checkOutputs } from '../preflight.ts';
import { bad, parseFlags, strings } from './flags.ts';
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

export async function run(argv: string[], host: NodeHost): Promise<number> {
  const { values } = parseFlags(
    argv,
    {
      ...strings('run', 'compare', 'series', 'exclude', 'out'),
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
  const payload = reportPayload({
    runs,
    compare: runs.length > 1,
    series,
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
