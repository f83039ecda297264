/**
 * Generation runs in browser storage: the run header, its plan (questions, spec) in
 * `runInputs.generation`, and every sample appended as soon as its question is scored, under
 * the run's Web Lock. A resume (after pause, a lost GPU, a reload or a closed tab) generates
 * only the (index, sample) keys not stored. The loop itself is src/core/run/generation.ts.
 */
import { transfer } from 'comlink';
import sqlWasmUrl from 'sql.js/dist/sql-wasm-browser.wasm?url';
import type { Engine } from '../../core/engine/engine.ts';
import { buildPrompt, loadDatabaseContext, type BuiltPrompt, type DatabaseContext } from '../../core/prompt/build-prompt.ts';
import { CANCEL, remainingJobs, runGeneration, type GenerationOutcome, type GenerationProgress, type GenerationSpec } from '../../core/run/generation.ts';
import type { RunConfig, RunHeader } from '../../core/run/types.ts';
import type { EvalItem } from '../../core/types.ts';
import { spawnBrowserSqlWorker } from '../browser/sql-worker-host.ts';
import { createSqlWorkerSchemaSource } from '../engines/sql-worker-schema-source.ts';
import { holdLock } from './database-bytes.ts';
import { StoreError, isAbortError, isQuotaError } from './errors.ts';
import { evalOptions, type ExecutionContext } from './run-execution.ts';
import { markUnsorted, nextBlock, sortBlocks, storedKeys } from './sample-blocks.ts';
import { SampleWriter } from './sample-writer.ts';
import type { WorkbenchIdb } from './schema.ts';
import { storeDbSource, storedDbIds } from './store-db-source.ts';
import type { DbSource } from '../sql-pool.ts';
import type { SchemaSource } from '../../core/prompt/schema-source.ts';
import type { DatasetRecord } from './workbench-store.ts';

export interface GenerationRunRequest {
  name: string;
  datasetId: string;
  /** Gold positions to ask; empty: every question with a stored database. */
  subset: { description: string; indices: number[] };
  spec: GenerationSpec;
  config: RunConfig;
}

/** Stored in `runInputs.generation`: what a resume needs without the dataset. */
export interface GenerationPlan {
  spec: GenerationSpec;
  questions: DatasetRecord['questions'];
  gold: { sql: string }[];
}

export interface GenerationHooks {
  /** Abort with reason `pause` to pause (resumable), anything else cancels. */
  signal?: AbortSignal;
  onProgress?: (p: GenerationProgress) => void;
  /** Called once the header is stored (the run's id is known). */
  onStart?: (run: RunHeader) => void;
}

export type GenerationPreviewSpec = Pick<GenerationSpec, 'template' | 'sampleRows' | 'descriptions'> & { maxTokens: number };

export interface GenerationRunResult {
  run: RunHeader;
  outcome: GenerationOutcome;
}

export interface GenerationStoreContext extends ExecutionContext {
  executorName: string;
}

const runLock = (runId: string) => `run:${runId}`;

/** The questions of `dataset` whose database is stored, by gold position. */
export async function questionsWithDatabase(idb: WorkbenchIdb, dataset: DatasetRecord): Promise<number[]> {
  const stored = await storedDbIds(idb, dataset.databases);
  return dataset.questions.flatMap((q, i) => (stored.has(q.dbId) ? [i] : []));
}

/**
 * A SQL worker of its own that reads schemas and sample rows (the prompts' SchemaSource) from
 * the stored databases; `dispose` ends it.
 */
async function openSchemaSource(dbSource: DbSource, cacheBytes: number): Promise<{ source: SchemaSource; dispose: () => void }> {
  const worker = spawnBrowserSqlWorker();
  try {
    await worker.api.init({ cacheBytes, wasmUrl: sqlWasmUrl });
  } catch (err) {
    worker.terminate();
    throw err;
  }
  const source = createSqlWorkerSchemaSource({ api: worker.api, dbSource, transferBytes: (b) => transfer(b, [b.buffer]) });
  return { source, dispose: () => worker.terminate() };
}

export async function startGenerationRun(
  ctx: GenerationStoreContext,
  dataset: DatasetRecord,
  req: GenerationRunRequest,
  engine: Engine,
  hooks: GenerationHooks = {},
): Promise<GenerationRunResult> {
  const { idb } = ctx;
  const available = new Set(await questionsWithDatabase(idb, dataset));
  const wanted = req.subset.indices.length > 0 ? req.subset.indices : [...available];
  const indices = [...new Set(wanted)].filter((i) => available.has(i)).sort((a, b) => a - b);
  if (indices.length === 0) {
    throw new StoreError('NOT_FOUND', `dataset "${dataset.name}" has no stored database for the chosen questions: nothing to generate`);
  }
  if (engine.kind !== req.spec.engine) throw new StoreError('NOT_FOUND', `the loaded engine is ${engine.kind}, the run asks for ${req.spec.engine}`);
  const now = new Date().toISOString();
  const header: RunHeader = {
    id: crypto.randomUUID(),
    name: req.name,
    createdAt: now,
    updatedAt: now,
    status: 'running',
    source: { kind: 'generation', engine: req.spec.engine, model: req.spec.model.id, template: req.spec.template.id },
    dataset: { id: dataset.id, name: dataset.name, questions: dataset.questionsFile, gold: dataset.goldFile, databases: { ...dataset.databases } },
    subset: { description: req.subset.description, indices },
    config: req.config,
    samplesPerQuestion: req.spec.params.n,
    executor: ctx.executorName,
  };
  const plan: GenerationPlan = {
    spec: req.spec,
    questions: dataset.questions,
    gold: dataset.gold.length === dataset.questions.length ? dataset.gold.map((g) => ({ sql: g.sql })) : dataset.questions.map((q) => ({ sql: q.goldSql })),
  };
  const release = await holdLock(runLock(header.id), true);
  if (!release) throw new StoreError('LOCKED', `run "${header.name}" is already being generated`);
  try {
    const tx = idb.transaction(['runs', 'runInputs'], 'readwrite');
    void tx.objectStore('runs').put(header);
    // `items` stays empty: the run's items are made as it generates (resumeRun refuses generation runs).
    void tx.objectStore('runInputs').put({ runId: header.id, items: [], generation: plan });
    await tx.done;
    hooks.onStart?.(header);
    return await execute(ctx, header, plan, engine, hooks);
  } finally {
    release();
  }
}

/** Continues a generation run with `engine` (loaded by the caller with the run's model). */
export async function resumeGenerationRun(ctx: GenerationStoreContext, runId: string, engine: Engine, hooks: GenerationHooks = {}): Promise<GenerationRunResult> {
  const { idb } = ctx;
  const run = await idb.get('runs', runId);
  if (!run) throw new StoreError('NOT_FOUND', `run ${runId} is not in browser storage (deleted?)`);
  const inputs = await idb.get('runInputs', runId);
  const plan = inputs?.generation;
  if (!plan) throw new StoreError('NOT_FOUND', `run "${run.name}" is not a generation run stored in this browser: it cannot be resumed with an engine`);
  if (engine.kind !== plan.spec.engine) {
    throw new StoreError('NOT_FOUND', `run "${run.name}" was generated with the ${plan.spec.engine} engine (${plan.spec.model.id}); load that engine and model to resume it`);
  }
  const release = await holdLock(runLock(runId), true);
  if (!release) throw new StoreError('LOCKED', `run "${run.name}" is being generated in another tab: follow it there, or close that tab and resume it here`);
  try {
    const header: RunHeader = { ...run, status: 'running', updatedAt: new Date().toISOString() };
    await idb.put('runs', header);
    hooks.onStart?.(header);
    return await execute(ctx, header, plan, engine, hooks);
  } finally {
    release();
  }
}

/** The stored plan of a generation run (spec and questions), or undefined for other runs. */
export async function generationPlan(idb: WorkbenchIdb, runId: string): Promise<GenerationPlan | undefined> {
  return (await idb.get('runInputs', runId))?.generation;
}

async function execute(ctx: GenerationStoreContext, run: RunHeader, plan: GenerationPlan, engine: Engine, hooks: GenerationHooks): Promise<GenerationRunResult> {
  const { idb } = ctx;
  const stop = new AbortController();
  const forward = () => stop.abort(hooks.signal?.reason);
  hooks.signal?.addEventListener('abort', forward, { once: true });
  if (hooks.signal?.aborted) forward();

  const done = await storedKeys(idb, run.id);
  const n = plan.spec.params.n;
  const jobs = remainingJobs({ indices: run.subset.indices, questions: plan.questions, gold: plan.gold, n }, done);
  const total = run.subset.indices.length * n;
  const doneBefore = total - jobs.reduce((k, j) => k + j.samples.length, 0);

  await markUnsorted(idb, run.id);
  let writeFailure: unknown = null;
  const writer = new SampleWriter(idb, run.id, await nextBlock(idb, run.id), {
    simulateQuotaAfterSamples: ctx.simulateQuotaAfterSamples,
    onError: (err) => {
      writeFailure = err;
      stop.abort(CANCEL);
    },
  });
  const dbSource = storeDbSource(idb, run.dataset.databases, run.dataset.name);
  const executor = ctx.createExecutor(dbSource);
  let schemas: Awaited<ReturnType<typeof openSchemaSource>> | null = null;
  const contexts = new Map<string, Promise<DatabaseContext>>();
  const spec = plan.spec;
  let outcome: GenerationOutcome = { kind: 'cancelled' };
  let failure: unknown = null;
  try {
    schemas = await openSchemaSource(dbSource, 256 * 1024 * 1024);
    const { source } = schemas;
    const rows = spec.sampleRows ?? spec.template.sampleRows;
    const descriptions = spec.descriptions ?? spec.template.descriptions;
    outcome = await runGeneration(spec, run.config, jobs, {
      engine,
      database: (dbId) => {
        let c = contexts.get(dbId);
        if (!c) contexts.set(dbId, (c = loadDatabaseContext(source, dbId, { sampleRows: rows, descriptions })));
        return c;
      },
      evaluate: async (items: EvalItem[], signal) => {
        try {
          return await executor.evaluate(items, evalOptions(run), { signal });
        } catch (err) {
          if (isAbortError(err) || signal.aborted) return [];
          throw err;
        }
      },
      store: (samples) => {
        for (const s of samples) writer.push(s);
      },
    }, {
      signal: stop.signal, doneBefore, total, onProgress: hooks.onProgress,
      // A server answers several questions at once (the OpenAI engine caps requests in flight itself).
      concurrency: engine.kind === 'openai' ? 4 : 1,
    });
  } catch (err) {
    failure = err;
  } finally {
    hooks.signal?.removeEventListener('abort', forward);
    schemas?.dispose();
    await executor.dispose().catch(() => undefined);
  }
  try {
    await writer.close();
  } catch (err) {
    failure ??= err;
  }
  failure ??= writeFailure;
  await sortBlocks(idb, run.id).catch(() => undefined);
  // Paused and GPU-lost runs stay `running` without a lock: the app lists them as interrupted, to resume.
  const status: RunHeader['status'] = failure ? 'failed' : outcome.kind === 'done' ? 'done' : outcome.kind === 'cancelled' ? 'cancelled' : 'running';
  const final: RunHeader = { ...run, status, updatedAt: new Date().toISOString() };
  await idb.put('runs', final).catch(() => undefined);
  if (failure && isQuotaError(failure)) {
    throw new StoreError(
      'QUOTA_EXCEEDED',
      `Browser storage is full: run "${run.name}" stopped after ${doneBefore + writer.written} of ${total} samples were stored. ` +
        'The stored samples are kept. Free space by deleting runs or datasets you no longer need, then resume the run.',
    );
  }
  if (failure) throw failure;
  return { run: final, outcome };
}

/**
 * The prompt of one question as a run with `spec` would build it (the Generate screen's
 * preview), with the engine's tokenizer and context window when one is loaded.
 */
export async function previewGenerationPrompt(
  idb: WorkbenchIdb,
  dataset: DatasetRecord,
  index: number,
  spec: GenerationPreviewSpec,
  engine: Engine | null,
): Promise<BuiltPrompt> {
  const q = dataset.questions[index];
  if (!q) throw new StoreError('NOT_FOUND', `dataset "${dataset.name}" has no question at position ${index}`);
  const { source, dispose } = await openSchemaSource(storeDbSource(idb, dataset.databases, dataset.name), 64 * 1024 * 1024);
  try {
    const rows = spec.sampleRows ?? spec.template.sampleRows;
    const ctx = await loadDatabaseContext(source, q.dbId, { sampleRows: rows, descriptions: spec.descriptions ?? spec.template.descriptions });
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
export async function databaseSchemas(idb: WorkbenchIdb, databases: Record<string, string>, datasetName: string): Promise<Record<string, Record<string, string[]>>> {
  const stored = await storedDbIds(idb, databases);
  const out: Record<string, Record<string, string[]>> = {};
  if (stored.size === 0) return out;
  const { source, dispose } = await openSchemaSource(storeDbSource(idb, databases, datasetName), 64 * 1024 * 1024);
  try {
    for (const dbId of stored) out[dbId] = Object.fromEntries((await source.tables(dbId)).map((t) => [t.name, t.columns]));
    return out;
  } finally {
    dispose();
  }
}
