/**
 * `report`: a run (and optionally a second run to compare with, and a training run) as one
 * self-contained HTML file that opens from disk with no server and no network
 * (docs/report.md): the app's own screens, read-only, with the runs packed inside. The builder
 * is core/report/report-file.ts, the same as the app's "Export report" buttons.
 */
import path from 'node:path';
import { productName, readReportTemplate, zlibGzip } from '../../adapters/node/report-files.ts';
import { reportPayload } from '../../core/report/payload.ts';
import { buildReportHtml } from '../../core/report/report-file.ts';
import { parseRunFile } from '../../core/runfile/run-file.ts';
import { parseSeriesFile, toSeriesFile } from '../../core/series/file.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { checkOutputs } from '../preflight.ts';
import { bad, parseFlags, strings } from './flags.ts';
import { readText } from './tabular-input.ts';
import { REPORT_USAGE } from '../usage.ts';

export const usage = REPORT_USAGE;

const MiB = 1024 * 1024;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags(
    argv,
    {
      ...strings('run', 'compare', 'series', 'out'),
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
    ],
  });
  const template = readReportTemplate();
  const runs = [parseRunFile(await readText('--run', values.run), path.basename(values.run))];
  if (values.compare)
    runs.push(parseRunFile(await readText('--compare', values.compare), path.basename(values.compare)));
  const series = values.series
    ? toSeriesFile(parseSeriesFile(await readText('--series', values.series), path.basename(values.series)))
    : null;
  const payload = reportPayload({
    runs,
    compare: runs.length > 1,
    series,
    product: `${productName()} (CLI)`,
    createdAt: new Date().toISOString(),
  });
  const html = await buildReportHtml(template, payload, zlibGzip);
  await writeFileAtomic(values.out, html);
  const samples = runs.reduce((n, f) => n + f.samples.length, 0);
  const parts = [
    `run "${runs[0]!.run.name}"`,
    ...(runs[1] ? [`compared with "${runs[1].run.name}"`] : []),
    ...(series ? [`training run "${series.series.name}" (${series.steps.length} steps)`] : []),
  ];
  process.stdout.write(
    `wrote ${values.out}: ${(Buffer.byteLength(html) / MiB).toFixed(2)} MiB, ${samples.toLocaleString('en')} samples; ${parts.join(', ')}\n` +
      'open it in a browser from disk: no server and no network needed\n',
  );
  return 0;
}
