/**
 * `merge`: joins the outputs of `eval --shard K/N` runs (one per shard, e.g. the tasks of a
 * Slurm array job) into the `--out` report and the `--run-out` run file of a single run.
 */
import path from 'node:path';
import { WorkbenchError } from '../../core/errors.ts';
import { summaryJson } from '../../core/eval/json-report.ts';
import { parseJsonText } from '../../core/formats/questions.ts';
import { runFileJson } from '../../core/runfile/export.ts';
import { parseRunFile } from '../../core/runfile/run-file.ts';
import { mergeReports, mergeRunFiles, type JsonReport } from '../../core/batch/shard.ts';
import type { RunFile } from '../../core/run/types.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { checkOutputs, pathFlags } from '../preflight.ts';
import { readText } from './eval.ts';
import { bad, parseFlags } from '../flags.ts';
import { MERGE_USAGE } from '../usage.ts';

export const usage = MERGE_USAGE;

function isRunFile(v: unknown): boolean {
  return typeof v === 'object' && v !== null && (v as { format?: unknown }).format === 'rlvr-workbench-run';
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { out: { type: 'string' }, 'run-out': { type: 'string' } },
    usage,
    true,
  );
  if (!values.out && !values['run-out']) throw bad('--out', `name --out, --run-out or both\n${usage}`);
  if (positionals.length === 0) throw bad('SHARD_FILE', `name the shards' files\n${usage}`);
  await checkOutputs({
    outputs: pathFlags({ '--out': values.out, '--run-out': values['run-out'] }),
    inputs: positionals.map((file) => ({ flag: 'SHARD_FILE', file })),
  });
  const reports: { file: string; report: JsonReport }[] = [];
  const runs: { file: string; run: RunFile }[] = [];
  for (const file of positionals) {
    const text = await readText('SHARD_FILE', file);
    const data = parseJsonText(text, path.basename(file));
    if (isRunFile(data)) {
      // Validated, then merged as written: the records keep their fields in the order eval wrote them.
      parseRunFile(text, path.basename(file));
      runs.push({ file, run: data as RunFile });
    } else if (typeof data === 'object' && data !== null && 'summary' in data && 'items' in data)
      reports.push({ file, report: data as JsonReport });
    else throw new WorkbenchError('BAD_FORMAT', 'is neither an eval --out report nor a run file', file);
  }
  if (values.out) {
    if (reports.length === 0) throw bad('--out', "no eval --out report among the files: name the shards' --out files");
    const merged = mergeReports(
      reports.map((r) => r.report),
      reports.map((r) => r.file),
      summaryJson,
    );
    await writeFileAtomic(values.out, JSON.stringify(merged, null, 1) + '\n');
    process.stdout.write(`merged ${reports.length} shard reports: ${merged.items.length} items -> ${values.out}\n`);
  }
  if (values['run-out']) {
    if (runs.length === 0) throw bad('--run-out', "no run file among the files: name the shards' --run-out files");
    const merged = mergeRunFiles(
      runs.map((r) => r.run),
      runs.map((r) => r.file),
    );
    await writeFileAtomic(values['run-out'], runFileJson(merged) + '\n');
    process.stdout.write(
      `merged ${runs.length} shard run files: ${merged.samples.length} samples -> ${values['run-out']}\n`,
    );
  }
  return 0;
}
