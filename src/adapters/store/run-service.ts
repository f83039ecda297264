/**
 * The browser's run service: replay runs (a predictions file paired in the import worker by the
 * core's replay plan), resumes, the gold self-test and generation runs, each evaluated by the
 * core's loop (`runEvaluation`, `runGeneration`) inside one run session (run-session.ts).
 */
import { withSpiderHardness } from '../../core/eval/spider-hardness.ts';
import { idbSuiteCache } from './suite-cache.ts';
import { OFFICIAL_TIMEOUT_MS } from '../../core/eval/constants.ts';
import { evalOptionsOf } from '../../core/eval/executor.ts';
import { remainingItems, runEvaluation, selectItems } from '../../core/run/replay.ts';
import { toSampleRecord } from '../../core/run/run-file.ts';
import type { RunHeader } from '../../core/run/types.ts';
import { compileRewardFormula } from '../../core/rl/reward.ts';
import { WorkbenchError } from '../../core/errors.ts';
import type { EvalItem } from '../../core/types.ts';
import { readDbFacts } from '../../core/sql/db-facts.ts';
import { rewardAnnotator } from '../../core/run/item-annotations.ts';
import { attachRunOverlay, compareRunWithOverlay } from './overlay-service.ts';
import { measureRunVersionEffects } from './version-check-service.ts';
import { pairInWorker } from '../import/import-client.ts';
import { sha256Text } from '../import/pair-run.ts';
import { datasetOrThrow } from './dataset-repository.ts';
import { StoreError } from './errors.ts';
import { exportBatchFiles } from './batch-export.ts';
import { databaseSchemas, previewGenerationPrompt, resumeGenerationRun, startGenerationRun } from './generation-run.ts';
import { runOrThrow } from './run-repository.ts';
import { openRunSession, withRunLock, type StoreContext } from './run-session.ts';
import { allSamples, storedKeys } from './sample-blocks.ts';
import { withStoredScore } from './run-score.ts';
import type { WorkbenchIdb } from './schema.ts';
import { storeDbSource, storedDbIds } from './store-db-source.ts';
import type { DatasetRecord, PredictionsInput, RunHooks } from './records.ts';
import type { PairJob } from '../../../workers/import.api.ts';
import type { RunService } from './workbench-store.ts';

/** Gold self-test: EX only, the official timeout, writes allowed as in the official evaluator. */
const SELF_TEST_CONFIG: RunHeader['config'] = {
  metrics: ['ex'], timeoutMs: OFFICIAL_TIMEOUT_MS, readOnly: false, vesIterations: 0, fence: 'last', rewardFormula: 'ex',
};

/** Evaluates `items` of `run` (the caller holds its lock); `doneBefore` samples are stored already. */
async function evaluateRun(ctx: StoreContext, run: RunHeader, items: readonly EvalItem[], doneBefore: number, hooks: RunHooks): Promise<RunHeader> {
  const session = await openRunSession(ctx, run, hooks.signal);
  const formula = compileRewardFormula(run.config.rewardFormula ?? 'ex');
  const executor = ctx.createExecutor(storeDbSource(ctx.idb, run.dataset.databases, run.dataset.name), {
    suiteCache: idbSuiteCache(ctx.idb, run.dataset.databases),
  });
  let failure: unknown = null;
  let cancelled = false;
  const executions = { executed: run.executions?.executed ?? 0, reused: run.executions?.reused ?? 0 };
  let sqliteVersion = run.sqliteVersion;
  let score: RunHeader['score'];
  try {
    // SQLite version and column types for the version scan; question texts for the gold checks.
    const facts = await readDbFacts(executor, items.map((it) => it.dbId), session.signal);
    sqliteVersion = facts.sqliteVersion ?? sqliteVersion;
    const dataset = await ctx.idb.get('datasets', run.dataset.id).catch(() => undefined);
    const annotate = rewardAnnotator({ columnTypes: facts.columnTypes, questionOf: dataset ? (i) => dataset.questions[i]?.question ?? null : undefined });
    const outcome = await runEvaluation(items, evalOptionsOf(run.config), {
      executor,
      signal: session.signal,
      doneBefore,
      sink: (result, item) => session.push(toSampleRecord(item, result, formula)),
      onEvent: hooks.onEvent,
      annotate,
    });
    cancelled = outcome.cancelled;
    const total = outcome.summary.byDifficulty.total;
    // Only a run evaluated whole here knows its summary (a resume saw part of the samples).
    if (doneBefore === 0 && !cancelled) score = { ex: total.ex, questions: total.count, samples: total.samples };
    executions.executed += outcome.executed;
    executions.reused += outcome.reused;
  } catch (err) {
    failure = err;
  } finally {
    await executor.dispose().catch(() => undefined);
  }
  const status = cancelled || session.signal.aborted ? 'cancelled' : 'done';
  const finished = await session.finish(failure, status, { doneBefore, total: doneBefore + items.length }, { executions, ...(sqliteVersion ? { sqliteVersion } : {}), ...(score ? { score } : {}) });
  // A resume saw only part of the samples: the run lists' score comes from all of them, once stored.
  return doneBefore > 0 ? withStoredScore(ctx.idb, finished) : finished;
}

/** The predictions part of a pair job: text, or a Parquet file's Blob (cloned to the worker, not read here). */
function pairJobInput(p: PredictionsInput): Pick<PairJob, 'predictionsName' | 'predictionsText' | 'predictionsBlob'> {
  return 'blob' in p ? { predictionsName: p.name, predictionsBlob: p.blob } : { predictionsName: p.name, predictionsText: p.text };
}

export function createRunService(opened: Promise<WorkbenchIdb>, ctxOf: (idb: WorkbenchIdb) => StoreContext): RunService {
  const context = async () => ctxOf(await opened);

  const newHeader = (
    ctx: StoreContext,
    req: { name: string; subset: RunHeader['subset']; config: RunHeader['config'] },
    dataset: DatasetRecord,
    predictions: { name: string; sha256: string; bytes: number },
  ): RunHeader => {
    const now = new Date().toISOString();
    return {
      id: crypto.randomUUID(),
      name: req.name,
      createdAt: now,
      updatedAt: now,
      status: 'running',
      source: { kind: 'replay', predictions },
      dataset: { id: dataset.id, name: dataset.name, questions: dataset.questionsFile, gold: dataset.goldFile, databases: { ...dataset.databases } },
      subset: req.subset,
      config: req.config,
      samplesPerQuestion: 1,
      executor: ctx.executorName,
    };
  };

  /** Stores the header and the items, then evaluates them, under the run's lock. */
  const createAndEvaluate = async (ctx: StoreContext, header: RunHeader, items: EvalItem[], hooks: RunHooks) =>
    withRunLock(header.id, `run "${header.name}" is already being evaluated`, async () => {
      const tx = ctx.idb.transaction(['runs', 'runInputs'], 'readwrite');
      void tx.objectStore('runs').put(header);
      void tx.objectStore('runInputs').put({ runId: header.id, items });
      await tx.done;
      return evaluateRun(ctx, header, items, 0, hooks);
    });

  return {
    async startReplay(req, hooks = {}) {
      const ctx = await context();
      const dataset = await datasetOrThrow(ctx.idb, req.datasetId);
      const paired = await pairInWorker({
        ...pairJobInput(req.predictions),
        questions: dataset.questions,
        gold: dataset.gold,
        fence: req.config.fence,
      });
      // Spider's own rules for a Spider dataset (docs/spider-rules.md), unless the request chose.
      const exRule = req.config.exRule ?? (dataset.kind === 'spider' ? 'spider' : 'bird');
      const chosen = selectItems(paired.items, req.subset.indices);
      const items = exRule === 'spider' ? withSpiderHardness(chosen) : chosen;
      if (items.length === 0) {
        throw new WorkbenchError('MISMATCH', 'no question of the chosen subset has a prediction in this file', req.predictions.name);
      }
      const subset = { description: req.subset.description, indices: [...new Set(items.map((it) => it.index))] };
      const config = exRule === 'spider' ? { ...req.config, exRule } : req.config;
      const header = newHeader(ctx, { name: req.name, subset, config }, dataset, {
        name: req.predictions.name, sha256: paired.sha256, bytes: paired.bytes,
      });
      header.samplesPerQuestion = items.reduce((m, it) => Math.max(m, (it.sample ?? 0) + 1), 1);
      return createAndEvaluate(ctx, header, items, hooks);
    },

    async checkReplay(req) {
      const ctx = await context();
      const dataset = await datasetOrThrow(ctx.idb, req.datasetId);
      const paired = await pairInWorker({
        ...pairJobInput(req.predictions),
        questions: dataset.questions, gold: dataset.gold, fence: req.fence, strict: false,
      });
      return { findings: paired.findings, warnings: paired.warnings, samples: paired.items.length, questions: new Set(paired.items.map((it) => it.index)).size };
    },

    async resume(runId, hooks = {}) {
      const ctx = await context();
      const run = await runOrThrow(ctx.idb, runId);
      const locked = `run "${run.name}" is being evaluated in another tab: follow it there, or close that tab and resume it here`;
      return withRunLock(runId, locked, async () => {
        const inputs = await ctx.idb.get('runInputs', runId);
        if (inputs?.generation) {
          throw new StoreError('NOT_FOUND', `run "${run.name}" is a generation run: resume it from the Generate page, with its engine and model loaded`);
        }
        if (!inputs) throw new StoreError('NOT_FOUND', `run "${run.name}" was imported from a file and cannot be resumed: its predictions are not stored`);
        const remaining = remainingItems(inputs.items, await storedKeys(ctx.idb, runId));
        const header: RunHeader = { ...run, status: 'running', updatedAt: new Date().toISOString() };
        await ctx.idb.put('runs', header);
        return evaluateRun(ctx, header, remaining, inputs.items.length - remaining.length, hooks);
      });
    },

    async goldSelfTest(datasetId, hooks = {}) {
      const ctx = await context();
      const dataset = await datasetOrThrow(ctx.idb, datasetId);
      const stored = await storedDbIds(ctx.idb, dataset.databases);
      // Questions without a database cannot test their gold: they are left out, not listed as failures.
      const items: EvalItem[] = dataset.gold
        .map((g, index) => ({
          index,
          questionId: dataset.questions[index]?.questionId ?? index,
          dbId: g.dbId,
          difficulty: dataset.questions[index]?.difficulty ?? 'unknown',
          predSql: g.sql,
          goldSql: g.sql,
          extraction: { rule: 'sql-line' as const, thinkStripped: false },
        }))
        .filter((it) => stored.has(it.dbId));
      if (items.length === 0) {
        throw new StoreError('NOT_FOUND', `dataset "${dataset.name}" has no stored database: there is no gold query to test`);
      }
      const goldText = dataset.gold.map((g) => `${g.sql}\t${g.dbId}`).join('\n');
      const header = newHeader(
        ctx,
        { name: `${dataset.name}: gold self-test`, subset: { description: 'questions with a stored database', indices: items.map((it) => it.index) }, config: { ...SELF_TEST_CONFIG, ...(dataset.kind === 'spider' ? { exRule: 'spider' as const } : {}) } },
        dataset,
        { name: dataset.goldFile?.name ?? `${dataset.questionsFile.name} (SQL of the questions)`, ...(await sha256Text(goldText)) },
      );
      const run = await createAndEvaluate(ctx, header, items, hooks);
      const samples = await allSamples(ctx.idb, run.id);
      const failures = samples
        .filter((s) => s.status !== 'ok' || s.ex !== 1)
        .map((s) => ({ index: s.index, questionId: s.questionId, dbId: s.dbId, status: s.status, error: s.error, sql: s.goldSql }));
      // A gold that fails is listed as a failure above; the checks list the rest (no rows, count vs list, date).
      const goldIssues = samples
        .filter((s) => s.status !== 'missing-db' && (s.goldIssues ?? []).some((g) => g.kind !== 'gold-error'))
        .map((s) => ({ index: s.index, questionId: s.questionId, dbId: s.dbId, issues: s.goldIssues!.filter((g) => g.kind !== 'gold-error') }));
      return { run, failures, goldIssues };
    },

    async startGeneration(req, engine, hooks = {}) {
      const ctx = await context();
      return startGenerationRun(ctx, await datasetOrThrow(ctx.idb, req.datasetId), req, engine, hooks);
    },
    async resumeGeneration(runId, engine, hooks = {}) {
      return resumeGenerationRun(await context(), runId, engine, hooks);
    },
    async previewPrompt(datasetId, index, spec, engine) {
      const idb = await opened;
      return previewGenerationPrompt(idb, await datasetOrThrow(idb, datasetId), index, spec, engine);
    },
    async compareGoldOverlay(runId, overlay, signal) {
      return compareRunWithOverlay(await context(), runId, overlay, signal);
    },
    async attachGoldOverlay(runId, overlay, signal) {
      return attachRunOverlay(await context(), runId, overlay, signal);
    },
    async goldOverlay(runId) {
      return (await opened).get('overlays', runId);
    },
    async removeGoldOverlay(runId) {
      await (await opened).delete('overlays', runId);
    },
    async measureVersionEffects(runId, signal) {
      return measureRunVersionEffects(await context(), runId, signal);
    },
    async versionCheck(runId) {
      return (await opened).get('versionChecks', runId);
    },
    async databaseSchemas(runId) {
      const idb = await opened;
      const run = await runOrThrow(idb, runId);
      return databaseSchemas(idb, run.dataset.databases, run.dataset.name);
    },
    async exportBatch(datasetId, req) {
      const idb = await opened;
      return exportBatchFiles(idb, await datasetOrThrow(idb, datasetId), req);
    },
  };
}
