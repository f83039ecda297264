/**
 * `batch`: generation on a cluster through batch files. `batch export` writes a generation
 * plan as an OpenAI batch input JSONL (src/core/batch/batch.ts) plus its plan file; `batch import`
 * reads the output JSONL of vLLM's run_batch, SGLang or OpenAI's Batch API back, scores it as a
 * generation run (src/core/batch/batch-engine.ts) and writes the run file.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NodeHost } from '../node-host.ts';
import { WorkbenchError, errorMessage } from '../../core/errors.ts';
import { summarize } from '../../core/eval/summary.ts';
import { officialTable } from '../../core/eval/report.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { parseQuestions } from '../../core/formats/questions.ts';
import { loadDatabaseContext, type DatabaseContext } from '../../core/prompt/build-prompt.ts';
import { findTemplate, BUILTIN_TEMPLATES } from '../../core/prompt/templates.ts';
import { checkFormulaMetrics, compileRewardFormula } from '../../core/eval/reward.ts';
import {
  batchLineText,
  batchPlanJson,
  batchRequests,
  makeBatchPlan,
  checkPlanFitsDataset,
  parseBatchPlan,
  planCustomIds,
  withPromptHashes,
  presetBatchRequests,
  presetBatchSpec,
  BATCH_ENGINE,
  type BatchPlan,
} from '../../core/batch/batch.ts';
import type { BirdTablesEntry } from '../../core/prompt/omnisql-schema.ts';
import type { PolicyPreset } from '../../core/prompt/presets.ts';
import {
  checkTablesCover,
  needsTables,
  openPresetSchemas,
  presetFlag,
  readTables,
  tablesFile,
  type PresetSchemas,
} from './preset-flags.ts';
import { bad } from '../flags.ts';
import { BatchOutputReader, batchCoverage, coverageText, mergeBatchOutputs } from '../../core/batch/batch-output.ts';
import { forEachLine } from './line-input.ts';
import { runBatchImport } from '../../core/batch/batch-engine.ts';
import { generationScorer } from '../../core/run/score-run.ts';
import { runFileJson, toRunFile } from '../../core/runfile/export.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig, type RunHeader, type SampleRecord } from '../../core/run/types.ts';
import type { GoldEntry, Question } from '../../core/types.ts';
import {
  BATCH_USAGE,
  MAX_BATCH_N,
  parseBatchExportArgs,
  parseBatchImportArgs,
  type BatchExportArgs,
  type BatchImportArgs,
} from './batch-args.ts';
import { readText } from './eval.ts';
import { checkDatabasesUnchanged, executorName, fileRef, hashDatabases, sha256File } from './run-out.ts';
import { writeFileAtomic, writeStreamAtomic } from '../atomic-write.ts';
import { checkOutputsWithDataset, pathFlags } from '../preflight.ts';

export const usage = BATCH_USAGE;

export async function run(argv: string[], host: NodeHost): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'export') {
    const args = parseBatchExportArgs(rest);
    await checkOutputsWithDataset(args, {
      outputs: pathFlags({ '--out': args.out, '--plan-out': args.planOut }),
      inputs: pathFlags({ '--tables': args.tables }),
    });
    await runExport(host, args);
  } else if (sub === 'import') {
    const args = parseBatchImportArgs(rest);
    await checkOutputsWithDataset(args, {
      outputs: pathFlags({ '--run-out': args.runOut, '--missing-out': args.missingOut }),
      inputs: [
        { flag: '--plan', file: args.plan },
        ...args.outputs.map((file) => ({ flag: '--output', file })),
        ...pathFlags({ '--tables': args.tables }),
      ],
    });
    await runImport(host, args);
  } else
    throw new WorkbenchError(
      'BAD_OPTION',
      `expected "batch export" or "batch import", found ${JSON.stringify(sub ?? '')}\n${BATCH_USAGE}`,
    );
  return 0;
}

async function readDataset(args: {
  dataset: string;
  gold: string;
  dbRoot: string;
}): Promise<{ questions: Question[]; gold: GoldEntry[] }> {
  if (!existsSync(args.dbRoot))
    throw new WorkbenchError(
      'MISSING_FILE',
      `not a directory: ${args.dbRoot} (expected <db-root>/<db_id>/<db_id>.sqlite)`,
      '--db-root',
    );
  const questions = parseQuestions(await readText('--dataset', args.dataset), path.basename(args.dataset));
  const gold = parseGoldSql(await readText('--gold', args.gold), path.basename(args.gold));
  if (gold.length !== questions.length) {
    throw new WorkbenchError(
      'MISMATCH',
      `${path.basename(args.gold)} has ${gold.length} gold queries but ${path.basename(args.dataset)} has ${questions.length} questions: name the gold file of this dataset`,
      '--gold',
    );
  }
  return { questions, gold };
}

/** Schema contexts read by one SQL worker (the same queries as the app's prompts), one per database. */
async function openSchemas(host: NodeHost, dbRoot: string, plan: Pick<BatchPlan, 'spec'>) {
  const { source, dispose } = await host.sql.openSchemaReader(dbRoot, { descriptions: true });
  const spec = plan.spec;
  const contexts = new Map<string, Promise<DatabaseContext>>();
  const database = (dbId: string) => {
    let c = contexts.get(dbId);
    if (!c) {
      c = loadDatabaseContext(source, dbId, {
        sampleRows: spec.sampleRows ?? spec.template.sampleRows,
        descriptions: spec.descriptions ?? spec.template.descriptions,
      });
      contexts.set(dbId, c);
    }
    return c;
  };
  return { database, dispose };
}

/** The schema texts of a preset plan's databases (tables.json read and checked when the preset needs it). */
async function presetSchemas(
  host: NodeHost,
  preset: PolicyPreset,
  args: { tables: string | null; dataset: string; dbRoot: string },
  dbIds: Iterable<string>,
): Promise<PresetSchemas> {
  let entries: BirdTablesEntry[] = [];
  if (needsTables(preset)) {
    const tables = await tablesFile(preset, args);
    entries = await readTables(tables);
    checkTablesCover(preset, entries, tables, dbIds);
  }
  return openPresetSchemas(host, preset, args.dbRoot, entries);
}

async function runExport(host: NodeHost, args: BatchExportArgs): Promise<void> {
  if (args.preset !== null) return runPresetExport(host, args, presetFlag(args.preset));
  const template = findTemplate(args.template);
  if (!template)
    throw new WorkbenchError(
      'BAD_OPTION',
      `unknown template ${JSON.stringify(args.template)}; use one of ${BUILTIN_TEMPLATES.map((t) => t.id).join(', ')}`,
      '--template',
    );
  const { questions } = await readDataset(args);
  const indices = await exportIndices(host, args, questions);
  const plan = makeBatchPlan({
    spec: {
      model: { id: args.model },
      template,
      ...(args.sampleRows !== null ? { sampleRows: args.sampleRows } : {}),
      ...(args.descriptions !== null ? { descriptions: args.descriptions } : {}),
      params: {
        n: args.n,
        temperature: args.temperature,
        topP: args.topP,
        maxTokens: args.maxTokens,
        seed: args.seed,
        stop: [...template.stop],
        logprobs: args.logprobs,
      },
    },
    contextWindow: args.contextWindow,
    dataset: {
      name: path.basename(args.dataset),
      questions: await fileRef(args.dataset),
      gold: await fileRef(args.gold),
    },
    indices,
    questions,
  });
  const schemas = await openSchemas(host, args.dbRoot, plan);
  try {
    // Streamed to the file line by line: --n 100000 costs disk, not memory.
    const exported = await writeStreamAtomic(args.out, (write) =>
      batchRequests(plan, questions, schemas.database, undefined, (line) => write(batchLineText(line))),
    );
    const { count, tooLong } = exported;
    await writeFileAtomic(args.planOut, batchPlanJson(withPromptHashes(plan, exported)));
    for (const t of tooLong)
      process.stderr.write(
        `warning: ${t.customId} left out: its prompt needs ${t.tokens} tokens, the context window leaves ${t.limit}\n`,
      );
    process.stdout.write(
      `wrote ${count} requests (${plan.indices.length} questions x ${plan.spec.params.n} samples${tooLong.length ? `, ${tooLong.length} too long` : ''}) to ${args.out}\nplan: ${args.planOut}\n`,
    );
  } finally {
    schemas.dispose();
  }
}

/** The questions of the dataset whose database is under --db-root (the first --limit of them), warning about the rest. */
async function exportIndices(host: NodeHost, args: BatchExportArgs, questions: readonly Question[]): Promise<number[]> {
  const db = host.sql.folder(args.dbRoot);
  const present = new Map<string, boolean>();
  for (const q of questions) if (!present.has(q.dbId)) present.set(q.dbId, await db.has(q.dbId));
  const absent = [...present].filter(([, p]) => !p).map(([id]) => id);
  let indices = questions.flatMap((q, i) => (present.get(q.dbId) ? [i] : []));
  if (args.limit !== null) indices = indices.slice(0, args.limit);
  if (absent.length > 0) {
    process.stderr.write(
      `warning: ${questions.length - questions.filter((q) => present.get(q.dbId)).length} questions left out: no database under ${args.dbRoot} for ${absent.join(', ')}\n`,
    );
  }
  return indices;
}

/** `batch export --preset ID`: the preset's messages, sampling, stops and prefill in every request. */
async function runPresetExport(host: NodeHost, args: BatchExportArgs, preset: PolicyPreset): Promise<void> {
  let made: ReturnType<typeof presetBatchSpec>;
  try {
    made = presetBatchSpec(preset, {
      ...(args.nGiven ? { n: args.n } : {}),
      selfConsistency: args.selfConsistency,
      seed: args.seed,
      logprobs: args.logprobs,
    });
  } catch (err) {
    if (err instanceof WorkbenchError) throw err;
    throw bad(args.selfConsistency ? '--self-consistency' : '--preset', errorMessage(err));
  }
  if (made.params.n > MAX_BATCH_N)
    throw bad(
      '--n',
      `preset ${preset.id} asks for ${made.params.n} samples per question; a batch takes at most ${MAX_BATCH_N}`,
    );
  const { questions } = await readDataset(args);
  const indices = await exportIndices(host, args, questions);
  const plan = makeBatchPlan({
    spec: { model: { id: args.model }, template: made.template, params: made.params },
    contextWindow: null,
    dataset: {
      name: path.basename(args.dataset),
      questions: await fileRef(args.dataset),
      gold: await fileRef(args.gold),
    },
    indices,
    questions,
    preset: made.preset,
  });
  const schemas = await presetSchemas(
    host,
    preset,
    args,
    plan.indices.map((i) => questions[i]!.dbId),
  );
  try {
    const exported = await writeStreamAtomic(args.out, (write) =>
      presetBatchRequests(plan, questions, schemas.schema, undefined, (line) => write(batchLineText(line))),
    );
    await writeFileAtomic(args.planOut, batchPlanJson(withPromptHashes(plan, exported)));
    process.stdout.write(
      `wrote ${exported.count} requests (${plan.indices.length} questions x ${plan.spec.params.n} samples) to ${args.out}\n` +
        `preset: ${preset.id} (${made.preset.fingerprint})${args.selfConsistency ? ', its self-consistency setting' : ''}\nplan: ${args.planOut}\n`,
    );
  } finally {
    schemas.dispose();
  }
}

async function runImport(host: NodeHost, args: BatchImportArgs): Promise<void> {
  const formula = (() => {
    try {
      const f = compileRewardFormula(args.reward);
      checkFormulaMetrics(f, args.metrics);
      return f;
    } catch (err) {
      throw new WorkbenchError('BAD_OPTION', (err as Error).message, '--reward');
    }
  })();
  const plan = parseBatchPlan(await readText('--plan', args.plan), path.basename(args.plan));
  if (args.tables !== null && !(plan.preset && needsTables(plan.preset.content)))
    throw bad(
      '--tables',
      `${path.basename(args.plan)} was not made under a preset that renders the schema from tables.json${plan.preset ? ` (${plan.preset.id} does not)` : ''}: leave --tables out`,
    );
  const { questions, gold } = await readDataset(args);
  checkPlanFitsDataset(plan, questions.length, path.basename(args.plan));
  const datasetSha = await sha256File(args.dataset);
  if (plan.dataset.questions && plan.dataset.questions.sha256 !== datasetSha) {
    throw new WorkbenchError(
      'MISMATCH',
      `the plan was exported from ${plan.dataset.questions.name} (sha256 ${plan.dataset.questions.sha256.slice(0, 12)}…), not this file (${datasetSha.slice(0, 12)}…)`,
      '--dataset',
    );
  }
  // The databases the run reads, hashed before it (the run file records these) and checked after it.
  const hashed = args.runOut
    ? await hashDatabases(
        args.dbRoot,
        plan.indices.map((i) => questions[i]!.dbId),
      )
    : undefined;
  // Streamed line by line: a batch output file may be larger than one string can hold.
  const outputs = [];
  for (const file of args.outputs) {
    const reader = new BatchOutputReader(path.basename(file));
    await forEachLine('--output', file, (line) => reader.line(line));
    outputs.push(reader.finish());
  }
  const output = mergeBatchOutputs(outputs);
  for (const p of output.problems) process.stderr.write(`warning: ${p}\n`);
  const coverage = batchCoverage(plan, output);
  const total = planCustomIds(plan).length;
  process.stderr.write(`${coverageText(coverage, total)}\n`);
  if (coverage.missing.length > 0) process.stderr.write(`missing: ${coverage.missing.join(' ')}\n`);
  if (coverage.failed.length > 0) process.stderr.write(`failed: ${coverage.failed.join(' ')}\n`);

  const config: RunConfig = {
    ...DEFAULT_RUN_CONFIG,
    metrics: args.metrics,
    timeoutMs: args.timeoutS * 1000,
    rewardFormula: formula.text,
  };
  const schemas = await openSchemas(host, args.dbRoot, plan);
  const pool = host.sql.pool({ dbRoot: args.dbRoot, workers: args.workers ?? availableParallelism() });
  const samples: SampleRecord[] = [];
  let disposePreset = () => {};
  try {
    const preset = plan.preset
      ? await presetSchemas(
          host,
          plan.preset.content,
          args,
          plan.indices.map((i) => questions[i]!.dbId),
        )
      : null;
    if (preset) disposePreset = preset.dispose;
    const outcome = await runBatchImport(
      plan,
      { questions, gold, output, files: args.outputs.map((f) => path.basename(f)).join(', ') },
      config,
      {
        ...(preset ? { schema: preset.schema } : {}),
        database: schemas.database,
        // The run recipe's steps, as the app's generation runs: findings included.
        evaluate: generationScorer(config, { executor: pool, questionOf: (i) => questions[i]?.question ?? null })
          .evaluate,
        store: (s) => samples.push(...s),
      },
    );
    if (outcome.kind !== 'done') throw new WorkbenchError('INTERNAL', `the import stopped: ${outcome.kind}`);
    // Before anything is written: a database replaced during the run makes its verdicts unreliable.
    if (hashed) await checkDatabasesUnchanged(args.dbRoot, hashed);
    if (args.missingOut) {
      const redo = new Set([...coverage.missing, ...coverage.failed]);
      const { count } = await writeStreamAtomic(args.missingOut, (write) =>
        preset
          ? presetBatchRequests(plan, questions, preset.schema, redo, (line) => write(batchLineText(line)))
          : batchRequests(plan, questions, schemas.database, redo, (line) => write(batchLineText(line))),
      );
      process.stderr.write(`wrote the ${count} missing and failed requests to ${args.missingOut}\n`);
    }
  } finally {
    disposePreset();
    schemas.dispose();
    await pool.dispose();
  }
  process.stdout.write(officialTable(summarize(samples, config.metrics)) + '\n');
  if (args.runOut) {
    const header = await importRunHeader(args, plan, samples, config, hashed!);
    const byIndex = new Set(plan.indices);
    const runQs = questions.flatMap((q, index) =>
      byIndex.has(index)
        ? [{ index, questionId: q.questionId, dbId: q.dbId, question: q.question, evidence: q.evidence }]
        : [],
    );
    await writeFileAtomic(args.runOut, runFileJson(toRunFile(header, samples, runQs)) + '\n');
  }
}

function deviceOfSamples(samples: readonly SampleRecord[]): Pick<RunHeader, 'device'> {
  const g = samples.find((s) => s.generation?.device)?.generation;
  if (!g?.device) return {};
  return {
    device: { device: g.device, reason: g.deviceReason ?? null, ...(g.deviceDetail ? { detail: g.deviceDetail } : {}) },
  };
}

async function importRunHeader(
  args: BatchImportArgs,
  plan: BatchPlan,
  samples: readonly SampleRecord[],
  config: RunConfig,
  hashed: ReadonlyMap<string, string>,
): Promise<RunHeader> {
  const databases: Record<string, string> = {};
  for (const db of [...new Set(samples.filter((s) => s.status !== 'missing-db').map((s) => s.dbId))].sort()) {
    // Hashed before the run and checked after it (checkDatabasesUnchanged).
    databases[db] = hashed.get(db) ?? (await sha256File(path.join(args.dbRoot, db, `${db}.sqlite`)));
  }
  const now = new Date().toISOString();
  const name = path.basename(args.dataset);
  return {
    id: randomUUID(),
    name: `${path.basename(args.outputs[0]!)} (batch)`,
    createdAt: now,
    updatedAt: now,
    status: 'done',
    source: { kind: 'generation', engine: BATCH_ENGINE, model: plan.spec.model.id, template: plan.spec.template.id },
    dataset: { id: name, name, questions: await fileRef(args.dataset), gold: await fileRef(args.gold), databases },
    subset: { description: `batch plan ${path.basename(args.plan)}`, indices: [...plan.indices] },
    config,
    samplesPerQuestion: plan.spec.params.n,
    executor: executorName(),
    // The batch engine's device, as every sample recorded it (src/core/batch/batch-engine.ts).
    ...deviceOfSamples(samples),
    ...(plan.preset
      ? {
          preset: {
            id: plan.preset.id,
            fingerprint: plan.preset.fingerprint,
            content: structuredClone(plan.preset.content),
          },
        }
      : {}),
  };
}
