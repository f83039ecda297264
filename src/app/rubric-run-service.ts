/**
 * RaR-style rubric runs (docs/rubrics.md): a run generates answers with a policy engine (or
 * replays a completions file) and judges each with its question's rubric, storing every
 * question's samples as they are done. A run holds its lock while it runs: a second tab is
 * refused, and a `running` run whose lock nobody holds was interrupted and can be resumed: only
 * the (index, sample) keys not stored are generated and judged. The screens load the engines
 * (on demand, through the loaders given here) and show the progress; this service does the rest.
 */
import type { Engine, ModelRef, SamplingParams } from '../core/engine/engine.ts';
import type { JudgeCache } from '../core/rubric/judge-cache.ts';
import { Judge } from '../core/rubric/judge.ts';
import type { WeightingName } from '../core/rubric/model.ts';
import {
  RAR_POLICY_PROMPT_VERSION,
  pairCompletions,
  rarKey,
  replayCompletions,
  replayRules,
  runRar,
} from '../core/rubric/rar-run.ts';
import type { Aggregation } from '../core/rubric/score.ts';
import type { ExplicitOptions } from '../core/rubric/scores.ts';
import type { RarDatasetRecord, RarPolicyRecord, RarRunHeader } from './rar-records.ts';
import type { RarRepository } from './rubric-ports.ts';
import { StoreError, isQuotaError } from './store-errors.ts';

/** An engine loaded for a run, with the model as the run records it. */
export interface LoadedEngine {
  engine: Engine;
  model: ModelRef;
}

export interface RarRunHooks {
  signal?: AbortSignal;
  onProgress?: (p: { done: number; total: number }) => void;
  /** The run's header once it is stored and locked. */
  onStart?: (run: RarRunHeader) => void;
  /** The run's judge, once made: its `stats` count what it has judged so far. */
  onJudge?: (judge: Judge) => void;
}

/** A new run's settings, as the rubric-runs screen gathers them. */
export interface NewRarRunInput {
  /** Empty: a name made of the dataset and the models. */
  name: string;
  datasetId: string;
  policy:
    | { kind: 'replay'; file: { name: string; text(): Promise<string> } }
    /** `load`: loads the policy engine (asked after the dataset is found). */
    | { kind: 'engine'; load(): Promise<LoadedEngine>; params: SamplingParams };
  /** Loads the judge (asked after the policy is ready); null: no judge. */
  judge: (() => Promise<LoadedEngine>) | null;
  samplesPerQuestion: number;
  aggregations: Aggregation[];
  explicit: ExplicitOptions;
  weighting: WeightingName | 'as-given';
}

export interface RubricRunPorts {
  rar: RarRepository;
  /** The judge cache the run's judge reads and fills. */
  judgeCache(): JudgeCache;
  /** SHA-256 (hex) and UTF-8 byte count of a text (a replayed completions file). */
  hashText(text: string): Promise<{ sha256: string; bytes: number }>;
  newId(): string;
  /** ISO time. */
  now(): string;
}

export interface RubricRunService {
  start(input: NewRarRunInput, hooks?: RarRunHooks): Promise<RarRunHeader>;
  /**
   * Continues an interrupted or cancelled run: only samples not stored are generated and judged.
   * `policy`: the run's policy engine, loaded (null for a replay); `judge`: the run's judge, loaded.
   */
  resume(
    runId: string,
    engines: { policy: Engine | null; judge: LoadedEngine | null },
    hooks?: RarRunHooks,
  ): Promise<RarRunHeader>;
}

function quotaMessage(what: string): StoreError {
  return new StoreError(
    'QUOTA_EXCEEDED',
    `Browser storage is full: ${what}. Nothing stored before was changed. Free space by deleting datasets or runs.`,
  );
}

export function createRubricRunService(ports: RubricRunPorts): RubricRunService {
  const { rar } = ports;

  const makeJudge = (loaded: LoadedEngine | null, hooks: RarRunHooks): Judge | null => {
    if (!loaded) return null;
    const judge = new Judge({
      engine: loaded.engine,
      model: loaded.model.id,
      cache: ports.judgeCache(),
      signal: hooks.signal,
    });
    hooks.onJudge?.(judge);
    return judge;
  };

  const drive = async (
    run: RarRunHeader,
    dataset: RarDatasetRecord,
    engines: { policy: Engine | null; judge: Judge | null },
    hooks: RarRunHooks,
  ): Promise<RarRunHeader> => {
    if (run.policy.kind === 'engine' && !engines.policy)
      throw new StoreError(
        'NOT_FOUND',
        `run "${run.name}" needs its policy engine (${run.policy.engine} · ${run.policy.model.id}) loaded`,
      );
    const release = await rar.lockRun(run.id);
    if (!release)
      throw new StoreError(
        'LOCKED',
        `run "${run.name}" is running in another tab: follow it there, or close that tab and resume it here`,
      );
    const setStatus = async (status: RarRunHeader['status'], error: string | null = null) => {
      const latest = (await rar.getRun(run.id)) ?? run;
      const next = { ...latest, status, error, updatedAt: ports.now() };
      await rar.putRun(next);
      return next;
    };
    try {
      hooks.onStart?.(await setStatus('running'));
      const done = new Set((await rar.sampleKeys(run.id)).map((k) => rarKey(k.index, k.sample)));
      const policy = run.policy;
      const outcome = await runRar({
        rows: dataset.rows,
        samples: run.samplesPerQuestion,
        policy:
          policy.kind === 'engine'
            ? { kind: 'engine', engine: engines.policy!, params: policy.params }
            : {
                kind: 'replay',
                completions: new Map(Object.entries(policy.completions).map(([k, v]) => [Number(k), v])),
              },
        judge: engines.judge,
        aggregations: run.aggregations,
        explicit: run.explicit,
        weighting: run.weighting,
        done,
        write: async (samples) => {
          try {
            await rar.putSamples(run.id, samples);
          } catch (err) {
            if (isQuotaError(err))
              throw quotaMessage(
                `the samples of question "${samples[0]?.rowId}" were not stored (the ${done.size} stored before are kept; resume the run once there is room)`,
              );
            throw err;
          }
        },
        signal: hooks.signal,
        onProgress: hooks.onProgress,
      });
      return await setStatus(outcome === 'done' ? 'done' : 'cancelled');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await setStatus('failed', message).catch(() => undefined);
      throw err;
    } finally {
      release();
    }
  };

  return {
    async start(input, hooks = {}) {
      const dataset = await rar.getDataset(input.datasetId);
      if (!dataset) throw new StoreError('NOT_FOUND', 'the rubric dataset is no longer stored: import it again');
      let policy: RarPolicyRecord;
      let policyEngine: Engine | null = null;
      if (input.policy.kind === 'replay') {
        const file = input.policy.file;
        const text = await file.text();
        const jobs = pairCompletions(text, file.name, dataset.rows);
        const rules = replayRules(jobs);
        policy = {
          kind: 'replay',
          file: { name: file.name, ...(await ports.hashText(text)) },
          completions: Object.fromEntries(replayCompletions(jobs)),
          ...(rules ? { rules: Object.fromEntries(rules) } : {}),
        };
      } else {
        const loaded = await input.policy.load();
        policyEngine = loaded.engine;
        policy = {
          kind: 'engine',
          engine: loaded.engine.kind,
          model: loaded.model,
          prompt: RAR_POLICY_PROMPT_VERSION,
          params: input.policy.params,
        };
      }
      const judge = makeJudge(input.judge ? await input.judge() : null, hooks);
      const modelName = policy.kind === 'engine' ? policy.model.id : policy.file.name;
      const header: RarRunHeader = {
        id: ports.newId(),
        name: input.name.trim() || `${dataset.name} · ${modelName}${judge ? ` · judged by ${judge.info.model}` : ''}`,
        createdAt: ports.now(),
        updatedAt: ports.now(),
        status: 'running',
        error: null,
        dataset: { id: dataset.id, name: dataset.name, file: dataset.file },
        policy,
        judge: judge?.info ?? null,
        samplesPerQuestion: input.samplesPerQuestion,
        aggregations: input.aggregations,
        explicit: input.explicit,
        weighting: input.weighting,
        planned: dataset.rows.reduce(
          (n, row) =>
            n +
            (policy.kind === 'replay'
              ? Math.min(input.samplesPerQuestion, policy.completions[row.index]?.length ?? 0)
              : input.samplesPerQuestion),
          0,
        ),
      };
      try {
        await rar.putRun(header);
      } catch (err) {
        if (isQuotaError(err)) throw quotaMessage(`run "${header.name}" was not started`);
        throw err;
      }
      return drive(header, dataset, { policy: policyEngine, judge }, hooks);
    },

    async resume(runId, engines, hooks = {}) {
      const run = await rar.getRun(runId);
      if (!run) throw new StoreError('NOT_FOUND', 'this rubric run is no longer stored');
      const dataset = await rar.getDataset(run.dataset.id);
      if (!dataset)
        throw new StoreError(
          'NOT_FOUND',
          `run "${run.name}": its dataset "${run.dataset.name}" was deleted, so it cannot be resumed`,
        );
      return drive(run, dataset, { policy: engines.policy, judge: makeJudge(engines.judge, hooks) }, hooks);
    },
  };
}
