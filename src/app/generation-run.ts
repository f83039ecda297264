/**
 * Generation runs: the run header, its plan (questions, spec) in the run's inputs, and every
 * sample appended as soon as its question is scored, under the run's lock (ports.ts). A resume (after pause, a lost GPU, a reload or a closed tab) generates
 * only the (index, sample) keys not stored. The loop itself is src/core/run/generation.ts.
 */
import { datasetExRule } from './ex-rule.ts';
import type { Engine } from '../core/engine/engine.ts';
import {
  buildPrompt,
  loadDatabaseContext,
  type BuiltPrompt,
  type DatabaseContext,
} from '../core/prompt/build-prompt.ts';
import {
  PAUSE,
  remainingJobs,
  runDeviceOf,
  runGeneration,
  type GenerationJob,
  type GenerationOutcome,
  type GenerationSpec,
} from '../core/run/generation.ts';
import type { BirdTablesEntry } from '../core/prompt/omnisql-schema.ts';
import { renderPresetSchema } from '../core/prompt/preset-schema.ts';
import { presetFingerprint, type PolicyPreset } from '../core/prompt/presets.ts';
import { presetEnv, runPresetGeneration, type PresetSampling } from '../core/run/preset-generation.ts';
import { presetContextProblem } from '../core/run/preset-context.ts';
import { renderPresetMessages } from '../core/prompt/presets.ts';
import { renderPlainChat } from '../core/engine/plain-template.ts';
import { generationScorer } from '../core/run/score-run.ts';
import type { RunConfig, RunHeader, SampleRecord } from '../core/run/types.ts';
import { StoreError } from './store-errors.ts';
import type {
  DatasetRecord,
  GenerationHooks,
  GenerationPlan,
  GenerationPreviewSpec,
  GenerationRunRequest,
  GenerationRunResult,
} from './records.ts';
import { newRunHeader } from './run-header.ts';
import type { AppPorts } from './ports.ts';
import { withStoredScore } from './run-score.ts';
import { WorkbenchError } from '../core/errors.ts';

export async function startGenerationRun(
  ctx: AppPorts,
  dataset: DatasetRecord,
  req: GenerationRunRequest,
  engine: Engine,
  hooks: GenerationHooks = {},
): Promise<GenerationRunResult> {
  const available = new Set(await ctx.datasets.questionsWithDatabase(dataset));
  const wanted = req.subset.indices.length > 0 ? req.subset.indices : [...available];
  const indices = [...new Set(wanted)].filter((i) => available.has(i)).sort((a, b) => a - b);
  if (indices.length === 0) {
    throw new StoreError(
      'NOT_FOUND',
      `dataset "${dataset.name}" has no stored database for the chosen questions: nothing to generate`,
    );
  }
  if (engine.kind !== req.spec.engine)
    throw new StoreError('NOT_FOUND', `the loaded engine is ${engine.kind}, the run asks for ${req.spec.engine}`);
  const preset = req.spec.preset;
  const tables = preset ? presetTables(preset, dataset, indices) : undefined;
  if (preset) await checkPresetContext(ctx, dataset, preset, tables, indices[0]!, req.spec, engine);
  const header = newRunHeader(
    {
      name: req.name,
      source: {
        kind: 'generation',
        engine: req.spec.engine,
        model: req.spec.model.id,
        template: preset ? preset.id : req.spec.template.id,
      },
      subset: { description: req.subset.description, indices },
      // Spider's own rule for a Spider dataset (docs/spider-rules.md).
      config: datasetExRule(dataset, req.config.exRule) === 'spider' ? { ...req.config, exRule: 'spider' } : req.config,
      samplesPerQuestion: req.spec.params.n,
      executor: ctx.executors.name,
    },
    dataset,
  );
  // The engine is loaded: the device it reports is the one this run starts on.
  const device = runDeviceOf(engine.device?.());
  if (device) header.device = device;
  if (preset)
    header.preset = { id: preset.id, fingerprint: presetFingerprint(preset), content: structuredClone(preset) };
  const plan: GenerationPlan = {
    spec: req.spec,
    questions: dataset.questions,
    gold:
      dataset.gold.length === dataset.questions.length
        ? dataset.gold.map((g) => ({ sql: g.sql }))
        : dataset.questions.map((q) => ({ sql: q.goldSql })),
    ...(tables ? { tables } : {}),
  };
  return ctx.sessions.withLock(header.id, `run "${header.name}" is already being generated`, async () => {
    // `items` stays empty: the run's items are made as it generates (resumeRun refuses generation runs).
    await ctx.runs.create(header, { items: [], generation: plan });
    hooks.onStart?.(header);
    return execute(ctx, header, plan, engine, hooks);
  });
}

/** Continues a generation run with `engine` (loaded by the caller with the run's model). */
export async function resumeGenerationRun(
  ctx: AppPorts,
  runId: string,
  engine: Engine,
  hooks: GenerationHooks = {},
): Promise<GenerationRunResult> {
  const run = await ctx.runs.get(runId);
  const inputs = await ctx.runs.inputs(runId);
  const plan = inputs?.generation;
  if (!plan)
    throw new StoreError(
      'NOT_FOUND',
      `run "${run.name}" is not a generation run stored in this browser: it cannot be resumed with an engine`,
    );
  if (engine.kind !== plan.spec.engine) {
    throw new StoreError(
      'NOT_FOUND',
      `run "${run.name}" was generated with the ${plan.spec.engine} engine (${plan.spec.model.id}); load that engine and model to resume it`,
    );
  }
  const locked = `run "${run.name}" is being generated in another tab: follow it there, or close that tab and resume it here`;
  return ctx.sessions.withLock(runId, locked, async () => {
    // A resume may run on another device (another machine, or the CPU after a GPU was lost).
    const device = runDeviceOf(engine.device?.());
    const header: RunHeader = {
      ...run,
      status: 'running',
      updatedAt: new Date().toISOString(),
      ...(device ? { device } : {}),
    };
    await ctx.runs.put(header);
    hooks.onStart?.(header);
    return execute(ctx, header, plan, engine, hooks);
  });
}

async function execute(
  ctx: AppPorts,
  run: RunHeader,
  plan: GenerationPlan,
  engine: Engine,
  hooks: GenerationHooks,
): Promise<GenerationRunResult> {
  const done = await ctx.runs.storedKeys(run.id);
  const n = plan.spec.params.n;
  const jobs = remainingJobs({ indices: run.subset.indices, questions: plan.questions, gold: plan.gold, n }, done);
  const total = run.subset.indices.length * n;
  const doneBefore = total - jobs.reduce((k, j) => k + j.samples.length, 0);

  const session = await ctx.sessions.open(run, hooks.signal);
  const dbSource = ctx.datasets.source(run.dataset.databases, run.dataset.name);
  const executor = ctx.executors.createExecutor(dbSource);
  let schemas: Awaited<ReturnType<AppPorts['executors']['openSchemaSource']>> | null = null;
  const contexts = new Map<string, Promise<DatabaseContext>>();
  const spec = plan.spec;
  // The recipe's steps (the version scan and gold checks; each database's facts read once),
  // and the SQLite that gave the verdicts, recorded with the run.
  const scorer = generationScorer(run.config, { executor, questionOf: (i) => plan.questions[i]?.question ?? null });
  let outcome: GenerationOutcome = { kind: 'cancelled' };
  let failure: unknown = null;
  try {
    schemas = await ctx.executors.openSchemaSource(dbSource, 256 * 1024 * 1024);
    const { source } = schemas;
    if (spec.preset) {
      outcome = await executePreset(spec.preset, {
        spec,
        config: run.config,
        plan,
        jobs,
        engine,
        executor,
        schemas,
        scorer,
        push: (s) => session.push(s),
        signal: session.signal,
        progress: (done) => hooks.onProgress?.(presetProgress(doneBefore + done, total)),
      });
    } else {
      const rows = spec.sampleRows ?? spec.template.sampleRows;
      const descriptions = spec.descriptions ?? spec.template.descriptions;
      outcome = await runGeneration(
        spec,
        run.config,
        jobs,
        {
          engine,
          database: (dbId) => {
            let c = contexts.get(dbId);
            if (!c) contexts.set(dbId, (c = loadDatabaseContext(source, dbId, { sampleRows: rows, descriptions })));
            return c;
          },
          // A stop returns what finished; the loop keeps nothing of a question it could not finish.
          evaluate: scorer.evaluate,
          store: (samples) => {
            for (const s of samples) session.push(s);
          },
        },
        {
          signal: session.signal,
          doneBefore,
          total,
          onProgress: hooks.onProgress,
          // A server answers several questions at once: as many as it has request slots (the engine caps requests in flight itself).
          concurrency: engine.concurrency ?? 1,
        },
      );
    }
  } catch (err) {
    failure = err;
  } finally {
    schemas?.dispose();
    await executor.dispose().catch(() => undefined);
  }
  // Paused and GPU-lost runs stay `running` without a lock: the app lists them as interrupted, to resume.
  const status: RunHeader['status'] =
    outcome.kind === 'done' ? 'done' : outcome.kind === 'cancelled' ? 'cancelled' : 'running';
  // The device as last reported: a server's replies name the model and build that answered.
  const device = runDeviceOf(engine.device?.());
  const sqliteVersion = scorer.facts().sqliteVersion ?? run.sqliteVersion;
  const finished = await session.finish(
    failure,
    status,
    { doneBefore, total },
    { ...(device ? { device } : {}), ...(sqliteVersion ? { sqliteVersion } : {}) },
  );
  return { run: await withStoredScore(ctx.runs, finished), outcome };
}

/**
 * The tables.json entries a preset's schema needs for the chosen questions (OmniSQL's renderer),
 * undefined for a preset that renders BIRD's CREATE TABLE; refuses, naming the preset and what
 * is missing, a preset the app cannot run on this dataset.
 */
export function presetTables(preset: PolicyPreset, dataset: DatasetRecord, indices: readonly number[]) {
  if (preset.multiTurn) {
    try {
      presetEnv(preset, true);
    } catch (err) {
      throw new StoreError(
        'NOT_FOUND',
        `${(err as Error).message}. Choose a multi-turn preset the app plays (skyrl-sql-v1, verl-text2sql-v1), or run ${preset.id}'s own trainer`,
      );
    }
  }
  if (preset.schema.renderer !== 'omnisql-ddl') return undefined;
  const dbIds = [...new Set(indices.map((i) => dataset.questions[i]!.dbId))].sort();
  const entries: BirdTablesEntry[] = [];
  for (const dbId of dbIds) {
    const entry = dataset.tables?.find((e) => e.db_id === dbId);
    if (!entry)
      throw new StoreError(
        'NOT_FOUND',
        `preset ${preset.id} renders the schema from the dataset's tables.json (OmniSQL's column comments and types), ` +
          (dataset.tables
            ? `and the tables.json imported with dataset "${dataset.name}" has no entry for database "${dbId}"`
            : `and dataset "${dataset.name}" was imported without one`) +
          ": import the dataset again with its tables.json (BIRD: dev_tables.json) beside the questions file, or choose a preset that renders BIRD's CREATE TABLE (bird-minidev-v1)",
      );
    entries.push(entry);
  }
  return entries;
}

/** The run's sampling under a preset: the spec's (the Generate screen's fields, from the preset's defaults), the preset's stops. */
function appPresetSampling(preset: PolicyPreset, params: GenerationSpec['params']): PresetSampling {
  return {
    n: params.n,
    paramsOf: (sample) => ({
      n: 1,
      temperature: params.temperature,
      topP: params.topP,
      maxTokens: params.maxTokens,
      seed: params.seed === null ? null : params.seed + sample,
      stop: [...preset.stop],
      ...(preset.stopTokenIds.length > 0 ? { stopTokenIds: [...preset.stopTokenIds] } : {}),
      logprobs: false,
    }),
  };
}

const presetProgress = (done: number, total: number) => ({
  done,
  total,
  tokensPerSecond: null,
  etaMs: null,
  tokensOut: 0,
  current: null,
  phase: 'generate' as const,
});

/** Each database's schema as the preset renders it, once per database (OmniSQL's from `tables`). */
export function presetSchemas(
  preset: PolicyPreset,
  schemas: Awaited<ReturnType<AppPorts['executors']['openSchemaSource']>>,
  tables: readonly BirdTablesEntry[] | undefined,
): (dbId: string) => Promise<string> {
  const query = schemas.query;
  const rendered = new Map<string, Promise<string>>();
  return (dbId) => {
    let r = rendered.get(dbId);
    if (!r) {
      r = renderPresetSchema(preset, dbId, {
        schemaSource: schemas.source,
        query: (id, sql) => {
          if (!query)
            throw new WorkbenchError('INTERNAL', "this app's schema reader cannot run the example-value queries");
          return query(id, sql);
        },
        tablesEntry: (id) => tables?.find((e) => e.db_id === id),
      });
      rendered.set(dbId, r);
    }
    return r;
  };
}

/**
 * Refuses, before the run is stored, a preset run whose first prompt plus its turns cannot fit
 * the loaded engine's context (preset-context.ts), counted with the engine's tokenizer on the
 * prompt as the plain template renders it (a chat template adds a few tokens per message). An
 * engine that cannot count tokens or names no context is not checked.
 */
async function checkPresetContext(
  ctx: AppPorts,
  dataset: DatasetRecord,
  preset: PolicyPreset,
  tables: readonly BirdTablesEntry[] | undefined,
  index: number,
  spec: GenerationSpec,
  engine: Engine,
): Promise<void> {
  const contextWindow = engine.contextWindow();
  if (contextWindow === null || !engine.capabilities.tokenize || !engine.countTokens) return;
  const q = dataset.questions[index]!;
  const schemas = await ctx.executors.openSchemaSource(
    ctx.datasets.source(dataset.databases, dataset.name),
    256 * 1024 * 1024,
  );
  let promptTokens: number;
  try {
    const rendered = renderPresetMessages(
      preset,
      { question: q.question, evidence: q.evidence },
      await presetSchemas(preset, schemas, tables)(q.dbId),
    );
    const messages = preset.prefill
      ? [...rendered.messages, { role: 'assistant' as const, content: preset.prefill }]
      : rendered.messages;
    promptTokens = await engine.countTokens(renderPlainChat(messages));
  } finally {
    schemas.dispose();
  }
  const problem = presetContextProblem({
    preset,
    engine: engine.kind,
    questionId: q.questionId,
    promptTokens,
    maxTokens: spec.params.maxTokens,
    contextWindow,
  });
  if (problem) throw new WorkbenchError('BAD_OPTION', problem);
}

/** A preset's generation (src/core/run/preset-generation.ts) on the run's engine, schema worker and SQL pool. */
async function executePreset(
  preset: PolicyPreset,
  a: {
    spec: GenerationSpec;
    config: RunConfig;
    plan: GenerationPlan;
    jobs: GenerationJob[];
    engine: Engine;
    executor: ReturnType<AppPorts['executors']['createExecutor']>;
    schemas: Awaited<ReturnType<AppPorts['executors']['openSchemaSource']>>;
    scorer: ReturnType<typeof generationScorer>;
    push: (s: SampleRecord) => void;
    signal: AbortSignal;
    progress: (done: number) => void;
  },
): Promise<GenerationOutcome> {
  const { executor, schemas } = a;
  const probe = executor.probe?.bind(executor);
  if (preset.multiTurn && !probe)
    throw new StoreError(
      'NOT_FOUND',
      `preset ${preset.id} is multi-turn and this app's SQL executor cannot run its probes read-only: use the app's SQL worker pool`,
    );
  const schema = presetSchemas(preset, schemas, a.plan.tables);
  const outcome = await runPresetGeneration(
    { engine: a.spec.engine, model: a.spec.model, preset, sampling: appPresetSampling(preset, a.spec.params) },
    a.config,
    a.jobs,
    {
      engine: a.engine,
      schema,
      probe: (dbId, sql, o) => probe!(dbId, sql, o),
      evaluate: a.scorer.evaluate,
      store: (samples) => {
        for (const s of samples) a.push(s);
      },
      now: () => performance.now(),
    },
    { signal: a.signal, concurrency: a.engine.concurrency ?? 1, onSample: a.progress },
  );
  // The preset loop says `cancelled` for any stop: a pause leaves the run resumable.
  return outcome.kind === 'cancelled' && a.signal.reason === PAUSE
    ? { kind: 'paused', message: 'paused by the user' }
    : outcome;
}

/**
 * The prompt of one question as a run with `spec` would build it (the Generate screen's
 * preview), with the engine's tokenizer and context window when one is loaded.
 */
export async function previewGenerationPrompt(
  ctx: AppPorts,
  dataset: DatasetRecord,
  index: number,
  spec: GenerationPreviewSpec,
  engine: Engine | null,
): Promise<BuiltPrompt> {
  const q = dataset.questions[index];
  if (!q) throw new StoreError('NOT_FOUND', `dataset "${dataset.name}" has no question at position ${index}`);
  const { source, dispose } = await ctx.executors.openSchemaSource(
    ctx.datasets.source(dataset.databases, dataset.name),
    64 * 1024 * 1024,
  );
  try {
    const rows = spec.sampleRows ?? spec.template.sampleRows;
    const ctx = await loadDatabaseContext(source, q.dbId, {
      sampleRows: rows,
      descriptions: spec.descriptions ?? spec.template.descriptions,
    });
    return await buildPrompt(spec.template, ctx, q, {
      sampleRows: rows,
      descriptions: spec.descriptions,
      budget: { contextWindow: engine?.contextWindow() ?? null, reserve: spec.maxTokens },
      countTokens: engine?.capabilities.tokenize && engine.countTokens ? (t) => engine.countTokens!(t) : undefined,
    });
  } finally {
    dispose();
  }
}

/**
 * Table -> column names of each stored database of a run (the rubric's schema-only check), read
 * by a SQL worker with the same queries as the prompts. A database that is no longer stored is
 * left out (its samples' check is then not applicable).
 */
export async function databaseSchemas(
  ctx: AppPorts,
  databases: Record<string, string>,
  datasetName: string,
): Promise<Record<string, Record<string, string[]>>> {
  const stored = await ctx.datasets.storedDbIds(databases);
  const out: Record<string, Record<string, string[]>> = {};
  if (stored.size === 0) return out;
  const { source, dispose } = await ctx.executors.openSchemaSource(
    ctx.datasets.source(databases, datasetName),
    64 * 1024 * 1024,
  );
  try {
    for (const dbId of stored)
      out[dbId] = Object.fromEntries((await source.tables(dbId)).map((t) => [t.name, t.columns]));
    return out;
  } finally {
    dispose();
  }
}
