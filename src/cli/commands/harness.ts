/**
 * `harness`: completions from an RL trainer or eval harness (verl validation generations,
 * lm-evaluation-harness --log_samples, Inspect eval logs) evaluated as runs, one per training
 * step where the file holds several. Rows are mapped to the dataset's questions (the rule per
 * row is reported on stderr, with every unmatched row); each run is then scored exactly like
 * `eval` scores a JSONL predictions file. With `--preset ID` every completion's SQL is the one
 * the preset's extraction rule takes (OmniSQL's last ```sql block, SkyRL's `<solution>`, ...)
 * instead of the default rules (or a multi-turn dump's own rule), and the run header records the
 * preset.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { writeAtomicWith, writeFileAtomic } from '../atomic-write.ts';
import { checkOutputsWithDataset, pathFlags } from '../preflight.ts';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { NodeHost } from '../node-host.ts';
import { isParquetName } from '../../core/formats/parquet-name.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { officialTable } from '../../core/eval/report.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import {
  HARNESS_FORMATS,
  mapHarnessRows,
  mappingReport,
  type HarnessFormat,
  type HarnessRow,
} from '../../core/formats/harness.ts';
import { findingText } from '../../core/formats/pairing.ts';
import { runFileJson, toRunFile } from '../../core/runfile/export.ts';
import { planReplay } from '../../core/run/replay.ts';
import { scoreRun } from '../../core/run/score-run.ts';
import { SAMPLES_TABLE, runTableMetadata, sampleRows } from '../../core/views/tables.ts';
import { runConfigOf } from './eval-args.ts';
import { evalArgsOf } from './scoring-flags.ts';
import { DATASET_FLAGS, bad, parseFlags, requireFlags, strings } from '../flags.ts';
import { checkDatabasesUnchanged, evalRunHeader, hashDatabases, runQuestions } from './run-out.ts';
import { readQuestionsInput, readText } from './tabular-input.ts';
import { resolveDbRoot } from './db-root-zip.ts';
import { assertSomethingScored } from '../nothing-scored.ts';
import type { ItemResult } from '../../core/types.ts';
import { HARNESS_USAGE } from '../usage.ts';
import { presetFingerprint } from '../../core/prompt/presets.ts';
import { presetExtraction } from '../../core/run/preset-generation.ts';
import { stripScaffold } from '../../core/formats/multi-turn-dump.ts';
import { withReplayEpisodes } from '../../core/formats/replay-episode.ts';
import { presetFlag } from './preset-flags.ts';

export const usage = HARNESS_USAGE;

/** `run.json` -> `run.step-10.json` when the file holds several steps. */
function stepFile(file: string, step: number | null, several: boolean): string {
  if (!several || step === null) return file;
  const ext = path.extname(file);
  return `${file.slice(0, file.length - ext.length)}.step-${step}${ext}`;
}

async function readRows(
  host: NodeHost,
  input: string,
  format: HarnessFormat | null,
): Promise<{ format: HarnessFormat; rows: HarnessRow[]; name: string; files: string[] }> {
  const st = await stat(input).catch(() => null);
  if (!st) throw new WorkbenchError('MISSING_FILE', `file not found: ${input}`, '--completions');
  // verl writes one <step>.jsonl per validation into trainer.validation_data_dir, TRL one
  // completions_<step>.parquet into completions/: a folder is read whole (SkyRL's metrics file aside).
  const files = st.isDirectory()
    ? (await readdir(input))
        .filter((f) => /\.(jsonl|parquet)$/i.test(f) && !/^aggregated_results\.jsonl$/i.test(f))
        .sort()
        .map((f) => path.join(input, f))
    : [input];
  if (files.length === 0)
    throw new WorkbenchError('MISSING_FILE', `no .jsonl or .parquet file in the folder ${input}`, '--completions');
  let found: HarnessFormat | null = format;
  const rows: HarnessRow[] = [];
  for (const f of files) {
    const got = await host.readHarnessFile(path.basename(f), new Blob([await readFile(f)]), found);
    found = got.format;
    rows.push(...got.rows);
  }
  return { format: found!, rows, name: path.basename(input), files };
}

export async function run(argv: string[], host: NodeHost): Promise<number> {
  const { values } = parseFlags(
    argv,
    {
      completions: { type: 'string' },
      from: { type: 'string' },
      ...DATASET_FLAGS,
      ...strings('run-out', 'timeout-s', 'workers', 'metrics', 'preset'),
    },
    usage,
  );
  requireFlags(values, ['completions', 'gold', 'dataset', 'db-root'], usage);
  if (values.from !== undefined && !(HARNESS_FORMATS as readonly string[]).includes(values.from)) {
    throw bad('--from', `unknown format ${JSON.stringify(values.from)}; use one of ${HARNESS_FORMATS.join(', ')}`);
  }
  const preset = values.preset === undefined ? null : presetFlag(values.preset);
  const evalArgs = evalArgsOf(values.completions!, values);
  await checkOutputsWithDataset(
    { gold: values.gold, dataset: values.dataset, dbRoot: values['db-root'] },
    {
      outputs: pathFlags({ '--run-out': values['run-out'] }),
      inputs: pathFlags({ '--completions': values.completions }),
    },
  );
  const gold = parseGoldSql(await readText('--gold', evalArgs.gold), path.basename(evalArgs.gold));
  const questions = await readQuestionsInput(host, '--dataset', values.dataset!);
  const { format, rows, name, files } = await readRows(
    host,
    values.completions!,
    (values.from as HarnessFormat | undefined) ?? null,
  );
  const runs = mapHarnessRows(rows, questions);
  const config = runConfigOf(evalArgs);
  const questionOf = (i: number) => questions[i]?.question ?? null;
  const root = await resolveDbRoot(host, evalArgs.dbRoot);
  const pool = host.sql.pool({ dbRoot: root.dir, workers: evalArgs.workers ?? availableParallelism() });
  const all: ItemResult[] = [];
  try {
    for (const r of runs) {
      process.stderr.write(`${mappingReport(format, name, r)}\n`);
      if (r.records.length === 0) {
        process.stderr.write(
          `warning: ${name}${r.step === null ? '' : ` step ${r.step}`}: no row matched a question; nothing to evaluate\n`,
        );
        continue;
      }
      const label = `${name}${r.step === null ? '' : ` step ${r.step}`}`;
      const plan = planReplay({ predictions: { name: label, records: r.records }, gold, questions });
      // The preset's rule takes the SQL from every completion, as its original evaluation does:
      // on the text without the chat template's tokens a trainer's decode leaves (<|im_end|>...),
      // as the original reads the model's output (SkyRL's reward: the joined chat).
      if (preset)
        plan.items = plan.items.map((it) => {
          if (it.completion === undefined) return it;
          const { sql, extraction } = presetExtraction(preset, stripScaffold(it.completion), 'last');
          return { ...it, predSql: sql, extraction };
        });
      // A multi-turn dump's samples keep their episodes (turns, the trainer's score) in the run file.
      plan.items = withReplayEpisodes(plan.items, format, r);
      for (const w of [...plan.findings.map(findingText), ...plan.warnings]) process.stderr.write(`warning: ${w}\n`);
      const hashed = values['run-out']
        ? await hashDatabases(
            root.dir,
            plan.items.map((i) => i.dbId),
          )
        : undefined;
      // The run recipe, as `eval` and the app's runs: findings (version features, gold issues) included.
      const { results, summary, records } = await scoreRun(plan.items, config, { executor: pool, questionOf });
      if (hashed) await checkDatabasesUnchanged(root.dir, hashed, evalArgs.dbRoot);
      all.push(...results);
      process.stdout.write(
        `${label} (${format}${preset ? `, preset ${preset.id}: ${preset.extraction}` : ''})\n${officialTable(summary)}\n\n`,
      );
      if (values['run-out']) {
        const out = stepFile(values['run-out'], r.step, runs.length > 1);
        // The file the step came from (verl: <dir>/<step>.jsonl) is the run's predictions file.
        const source = files.find((f) => path.basename(f) === `${r.step}.jsonl`) ?? files[0]!;
        const header = await evalRunHeader(
          { ...evalArgs, dbRoot: root.dir, predictions: source },
          plan.items,
          results,
          hashed,
        );
        header.name = label;
        if (preset)
          header.preset = { id: preset.id, fingerprint: presetFingerprint(preset), content: structuredClone(preset) };
        const file = toRunFile(header, records, runQuestions(plan.items, questions));
        if (isParquetName(out))
          await writeAtomicWith(out, (temp) =>
            host.parquet.write(temp, SAMPLES_TABLE, sampleRows(file.samples, file.questions), {
              metadata: runTableMetadata(SAMPLES_TABLE, file.run),
            }),
          );
        else await writeFileAtomic(out, runFileJson(file) + '\n');
      }
    }
  } finally {
    await pool.dispose();
    await root.cleanup();
  }
  // Tables of zeros are no result: no row matched a question, or no database could be opened.
  assertSomethingScored(
    all,
    evalArgs.dbRoot,
    `no row of ${name} matched a question of ${path.basename(values.dataset!)} (see the mapping report above): check --dataset is the dataset the completions answer, or name the format with --from`,
  );
  return 0;
}
