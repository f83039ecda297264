/**
 * The run service: replay runs (a predictions file paired off the page's thread by the core's
 * replay plan), resumes, the gold self-test and generation runs, each evaluated by the core's
 * run recipe (`scoreRun`, core/run/score-run.ts) or generation loop (`runGeneration`) inside one
 * run session. Everything outside the core comes through the ports (ports.ts).
 */
import { OFFICIAL_TIMEOUT_MS } from '../core/eval/constants.ts';
import { remainingItems, selectItems } from '../core/run/replay.ts';
import { scoreRun, type ScoreRunPorts } from '../core/run/score-run.ts';
import type { RunHeader } from '../core/run/types.ts';
import { WorkbenchError } from '../core/errors.ts';
import type { EvalItem } from '../core/types.ts';
import { StoreError } from './store-errors.ts';
import type { DatasetRecord, PairJob, PredictionsInput, RunHooks } from './records.ts';
import { exportBatchFiles } from './batch-export.ts';
import { databaseSchemas, previewGenerationPrompt, resumeGenerationRun, startGenerationRun } from './generation-run.ts';
import { attachRunOverlay, compareRunWithOverlay } from './overlay-service.ts';
import { measureRunVersionEffects } from './version-check-service.ts';
import type { AppPorts, RunService } from './ports.ts';
import { newRunHeader } from './run-header.ts';
import { withStoredScore } from './run-score.ts';
import { datasetExRule, underRule } from './ex-rule.ts';

/** Gold self-test: EX only, the official timeout, writes allowed as in the official evaluator. */
const SELF_TEST_CONFIG: RunHeader['config'] = {
  metrics: ['ex'],
  timeoutMs: OFFICIAL_TIMEOUT_MS,
  readOnly: false,
  vesIterations: 0,
  fence: 'last',
  rewardFormula: 'ex',
};

/** The predictions "file" of a dataset's scratch run: the attempts saved from the playground. */
const PLAYGROUND_SOURCE = 'playground attempts';

/** The scratch run's settings: EX, Soft-F1 and TS, the official timeout, writes allowed as officially. */
const PLAYGROUND_CONFIG: RunHeader['config'] = {
  metrics: ['ex', 'soft-f1', 'ts'],
  timeoutMs: OFFICIAL_TIMEOUT_MS,
  readOnly: false,
  vesIterations: 0,
  fence: 'last',
  rewardFormula: 'ex',
};

/**
 * The verdict cache for a run's recipe, when the app has one: the run's databases are named by
 * the sha256 they are stored under (the dataset's db_id -> sha256), so nothing is hashed again.
 */
export function verdictCacheOf(
  ports: Pick<AppPorts, 'executors' | 'verdicts'>,
  config: Pick<RunHeader['config'], 'verdictCache'>,
  databases: Readonly<Record<string, string>>,
): Pick<ScoreRunPorts, 'verdictCache'> {
  const executor = ports.executors.verdictExecutor;
  if (!ports.verdicts || !executor || config.verdictCache === false) return {};
  return {
    verdictCache: {
      store: ports.verdicts,
      facts: ports.verdicts,
      executor,
      dbSha256: async (dbId) => (Object.hasOwn(databases, dbId) ? databases[dbId]! : null),
    },
  };
}

/** Evaluates `items` of `run` (the caller holds its lock); `doneBefore` samples are stored already. */
async function evaluateRun(
  ports: AppPorts,
  run: RunHeader,
  items: readonly EvalItem[],
  doneBefore: number,
  hooks: RunHooks,
): Promise<RunHeader> {
  const session = await ports.sessions.open(run, hooks.signal);
  const executor = ports.executors.createExecutor(ports.datasets.source(run.dataset.databases, run.dataset.name), {
    suiteCache: ports.datasets.suiteCache(run.dataset.databases),
  });
  let failure: unknown = null;
  let cancelled = false;
  const executions = {
    executed: run.executions?.executed ?? 0,
    reused: run.executions?.reused ?? 0,
    fromCache: run.executions?.fromCache ?? 0,
  };
  let sqliteVersion = run.sqliteVersion;
  let score: RunHeader['score'];
  try {
    // Question texts for the gold checks; the recipe reads the SQLite version and column types.
    const dataset = await ports.datasets.get(run.dataset.id).catch(() => undefined);
    const outcome = await scoreRun(items, run.config, {
      executor,
      questionOf: dataset ? (i) => dataset.questions[i]?.question ?? null : undefined,
      signal: session.signal,
      doneBefore,
      sink: (record) => session.push(record),
      onEvent: hooks.onEvent,
      ...verdictCacheOf(ports, run.config, run.dataset.databases),
    });
    sqliteVersion = outcome.facts.sqliteVersion ?? sqliteVersion;
    cancelled = outcome.cancelled;
    // Only a run evaluated whole here knows its summary (a resume saw part of the samples).
    if (doneBefore === 0 && !cancelled) score = outcome.score;
    // `executed` counts what ran: a verdict from the cache is counted apart (as the CLI's run files).
    executions.executed += outcome.executed - outcome.fromCache.size;
    executions.reused += outcome.reused;
    executions.fromCache += outcome.fromCache.size;
  } catch (err) {
    failure = err;
  } finally {
    await executor.dispose().catch(() => undefined);
  }
  const status = cancelled || session.signal.aborted ? 'cancelled' : 'done';
  const finished = await session.finish(
    failure,
    status,
    { doneBefore, total: doneBefore + items.length },
    { executions, ...(sqliteVersion ? { sqliteVersion } : {}), ...(score ? { score } : {}) },
  );
  // A resume saw only part of the samples: the run lists' score comes from all of them, once stored.
  return doneBefore > 0 ? withStoredScore(ports.runs, finished) : finished;
}

/** The predictions part of a pair job: text, or a Parquet file's Blob (cloned to the worker, not read here). */
function pairJobInput(p: PredictionsInput): Pick<PairJob, 'predictionsName' | 'predictionsText' | 'predictionsBlob'> {
  return 'blob' in p
    ? { predictionsName: p.name, predictionsBlob: p.blob }
    : { predictionsName: p.name, predictionsText: p.text };
}

/** The run service over `ports` (given once the store is open). */
export function createRunService(opened: AppPorts | Promise<AppPorts>): RunService {
  const context = async () => opened;

  const newHeader = (
    ctx: AppPorts,
    req: { name: string; subset: RunHeader['subset']; config: RunHeader['config'] },
    dataset: DatasetRecord,
    predictions: { name: string; sha256: string; bytes: number },
  ): RunHeader =>
    newRunHeader(
      {
        ...req,
        source: { kind: 'replay', predictions },
        samplesPerQuestion: 1,
        executor: ctx.executors.name,
      },
      dataset,
    );

  /** Stores the header and the items, then evaluates them, under the run's lock. */
  const createAndEvaluate = async (ctx: AppPorts, header: RunHeader, items: EvalItem[], hooks: RunHooks) =>
    ctx.sessions.withLock(header.id, `run "${header.name}" is already being evaluated`, async () => {
      await ctx.runs.create(header, { items });
      return evaluateRun(ctx, header, items, 0, hooks);
    });

  /** A predictions file paired with a stored dataset's questions and gold. */
  const pairWithDataset = async (
    datasetId: string,
    predictions: PredictionsInput,
    options: Pick<PairJob, 'fence' | 'strict'>,
  ) => {
    const ctx = await context();
    const dataset = await ctx.datasets.get(datasetId);
    const paired = await ctx.pairing.pair({
      ...pairJobInput(predictions),
      questions: dataset.questions,
      gold: dataset.gold,
      ...options,
    });
    return { ctx, dataset, paired };
  };

  return {
    async startReplay(req, hooks = {}) {
      const { ctx, dataset, paired } = await pairWithDataset(req.datasetId, req.predictions, {
        fence: req.config.fence,
      });
      const ruled = underRule(
        req.config,
        selectItems(paired.items, req.subset.indices),
        datasetExRule(dataset, req.config.exRule),
      );
      const items = ruled.items;
      if (items.length === 0) {
        throw new WorkbenchError(
          'MISMATCH',
          'no question of the chosen subset has a prediction in this file',
          req.predictions.name,
        );
      }
      const subset = { description: req.subset.description, indices: [...new Set(items.map((it) => it.index))] };
      const header = newHeader(ctx, { name: req.name, subset, config: ruled.config }, dataset, {
        name: req.predictions.name,
        sha256: paired.sha256,
        bytes: paired.bytes,
      });
      header.samplesPerQuestion = items.reduce((m, it) => Math.max(m, (it.sample ?? 0) + 1), 1);
      return createAndEvaluate(ctx, header, items, hooks);
    },

    async checkReplay(req) {
      const { paired } = await pairWithDataset(req.datasetId, req.predictions, { fence: req.fence, strict: false });
      return {
        findings: paired.findings,
        warnings: paired.warnings,
        samples: paired.items.length,
        questions: new Set(paired.items.map((it) => it.index)).size,
      };
    },

    async resume(runId, hooks = {}) {
      const ctx = await context();
      const run = await ctx.runs.get(runId);
      const locked = `run "${run.name}" is being evaluated in another tab: follow it there, or close that tab and resume it here`;
      return ctx.sessions.withLock(runId, locked, async () => {
        const inputs = await ctx.runs.inputs(runId);
        if (inputs?.generation) {
          throw new StoreError(
            'NOT_FOUND',
            `run "${run.name}" is a generation run: resume it from the Generate page, with its engine and model loaded`,
          );
        }
        if (!inputs)
          throw new StoreError(
            'NOT_FOUND',
            `run "${run.name}" was imported from a file and cannot be resumed: its predictions are not stored`,
          );
        const remaining = remainingItems(inputs.items, await ctx.runs.storedKeys(runId));
        const header: RunHeader = { ...run, status: 'running', updatedAt: new Date().toISOString() };
        await ctx.runs.put(header);
        return evaluateRun(ctx, header, remaining, inputs.items.length - remaining.length, hooks);
      });
    },

    async goldSelfTest(datasetId, hooks = {}) {
      const ctx = await context();
      const dataset = await ctx.datasets.get(datasetId);
      const stored = await ctx.datasets.storedDbIds(dataset.databases);
      // Questions without a database cannot test their gold: they are left out, not listed as failures.
      const found: EvalItem[] = dataset.gold
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
      const { config, items } = underRule({ ...SELF_TEST_CONFIG }, found, datasetExRule(dataset));
      if (items.length === 0) {
        throw new StoreError(
          'NOT_FOUND',
          `dataset "${dataset.name}" has no stored database: there is no gold query to test`,
        );
      }
      const goldText = dataset.gold.map((g) => `${g.sql}\t${g.dbId}`).join('\n');
      const header = newHeader(
        ctx,
        {
          name: `${dataset.name}: gold self-test`,
          subset: { description: 'questions with a stored database', indices: items.map((it) => it.index) },
          config,
        },
        dataset,
        {
          name: dataset.goldFile?.name ?? `${dataset.questionsFile.name} (SQL of the questions)`,
          ...(await ctx.pairing.hashText(goldText)),
        },
      );
      const run = await createAndEvaluate(ctx, header, items, hooks);
      const samples = await ctx.runs.samples(run.id);
      const failures = samples
        .filter((s) => s.status !== 'ok' || s.ex !== 1)
        .map((s) => ({
          index: s.index,
          questionId: s.questionId,
          dbId: s.dbId,
          status: s.status,
          error: s.error,
          sql: s.goldSql,
        }));
      // A gold that fails is listed as a failure above; the checks list the rest (no rows, count vs list, date).
      const goldIssues = samples
        .filter((s) => s.status !== 'missing-db' && (s.goldIssues ?? []).some((g) => g.kind !== 'gold-error'))
        .map((s) => ({
          index: s.index,
          questionId: s.questionId,
          dbId: s.dbId,
          issues: s.goldIssues!.filter((g) => g.kind !== 'gold-error'),
        }));
      return { run, failures, goldIssues };
    },

    async startGeneration(req, engine, hooks = {}) {
      const ctx = await context();
      return startGenerationRun(ctx, await ctx.datasets.get(req.datasetId), req, engine, hooks);
    },
    async resumeGeneration(runId, engine, hooks = {}) {
      return resumeGenerationRun(await context(), runId, engine, hooks);
    },
    async previewPrompt(datasetId, index, spec, engine) {
      const ctx = await context();
      return previewGenerationPrompt(ctx, await ctx.datasets.get(datasetId), index, spec, engine);
    },
    async compareGoldOverlay(runId, overlay, signal) {
      return compareRunWithOverlay(await context(), runId, overlay, signal);
    },
    async attachGoldOverlay(runId, overlay, signal) {
      return attachRunOverlay(await context(), runId, overlay, signal);
    },
    async goldOverlay(runId) {
      return (await context()).extras.overlay(runId);
    },
    async removeGoldOverlay(runId) {
      await (await context()).extras.removeOverlay(runId);
    },
    async measureVersionEffects(runId, signal) {
      return measureRunVersionEffects(await context(), runId, signal);
    },
    async versionCheck(runId) {
      return (await context()).extras.versionCheck(runId);
    },
    async databaseSchemas(runId) {
      const ctx = await context();
      const run = await ctx.runs.get(runId);
      return databaseSchemas(ctx, run.dataset.databases, run.dataset.name);
    },
    async saveAttempt(req, hooks = {}) {
      const ctx = await context();
      const dataset = await ctx.datasets.get(req.datasetId);
      const gold = dataset.gold[req.index];
      const q = dataset.questions[req.index];
      if (!gold)
        throw new StoreError(
          'NOT_FOUND',
          `dataset "${dataset.name}" has no question at position ${req.index} (it has ${dataset.gold.length})`,
        );
      const runs = await ctx.runs.list();
      let run = runs.find(
        (r) =>
          r.dataset.id === dataset.id && r.source.kind === 'replay' && r.source.predictions.name === PLAYGROUND_SOURCE,
      );
      if (!run) {
        run = newHeader(
          ctx,
          {
            name: `${dataset.name}: playground attempts`,
            subset: { description: 'attempts saved from the reward playground', indices: [] },
            // Scored by the rule a run on this dataset gets by default (Spider's for a Spider dataset).
            config: underRule({ ...PLAYGROUND_CONFIG }, [], datasetExRule(dataset)).config,
          },
          dataset,
          { name: PLAYGROUND_SOURCE, ...(await ctx.pairing.hashText('')) },
        );
        run.status = 'done';
        await ctx.runs.create(run, { items: [] });
      }
      const scratch = run;
      return ctx.sessions.withLock(
        scratch.id,
        `run "${scratch.name}" is being written in another tab: try again in a moment`,
        async () => {
          const inputs = (await ctx.runs.inputs(scratch.id)) ?? { items: [] };
          const sample = inputs.items.filter((it) => it.index === req.index).length;
          const asked: EvalItem = {
            index: req.index,
            questionId: q?.questionId ?? req.index,
            dbId: gold.dbId,
            difficulty: q?.difficulty ?? 'unknown',
            predSql: req.sql,
            goldSql: gold.sql,
            extraction: { rule: 'sql-field', thinkStripped: false },
            sample,
          };
          // The scratch run's own rule (kept from its creation): under Spider's, the item gets Spider's hardness.
          const [item] = underRule(scratch.config, [asked], scratch.config.exRule ?? 'bird').items as [EvalItem];
          const doneBefore = inputs.items.length;
          const items = [...inputs.items, item];
          const indices = [...new Set([...scratch.subset.indices, req.index])].sort((a, b) => a - b);
          const header: RunHeader = {
            ...scratch,
            status: 'running',
            updatedAt: new Date().toISOString(),
            subset: { ...scratch.subset, indices },
            samplesPerQuestion: Math.max(scratch.samplesPerQuestion, sample + 1),
          };
          await ctx.runs.putInputs(scratch.id, { ...inputs, items });
          await ctx.runs.put(header);
          const finished = await evaluateRun(ctx, header, [item], doneBefore, hooks);
          return { run: finished, index: req.index, sample };
        },
      );
    },
    async exportBatch(datasetId, req) {
      const ctx = await context();
      return exportBatchFiles(ctx, await ctx.datasets.get(datasetId), req);
    },
  };
}
