/**
 * The batch engine: the completions of a batch output file served as if a model wrote them,
 * so that an imported batch goes through the generation loop (runGeneration) like any engine
 * run: the same prompts rebuilt from the plan, the same extraction, scoring and per-sample
 * generation records (finish reason, token counts, errors, served model, fingerprint).
 *
 * A prompt's question is found by `Prompt.questionId` among the plan's questions; its sample by
 * the seed the loop asks for (sample s of a plan with seed S asks for S + s, as the lines do).
 * The engine does not do n natively, so the loop asks one sample per call. A request with no
 * line in the output becomes an error sample saying so: errors are data, never a crashed run.
 */
import type {
  Completion,
  Engine,
  EngineCapabilities,
  EngineDevice,
  ModelRef,
  Prompt,
  SamplingParams,
  GenerateHooks,
} from '../engine/engine.ts';
import { EngineError } from '../engine/engine-error.ts';
import { abortedCompletion, errorCompletion, validateSampling } from '../engine/sampling.ts';
import type { Question } from '../types.ts';
import { BATCH_ENGINE, customIdOf, planPresetSampling, promptHash, type BatchPlan } from './batch.ts';
import { runPresetGeneration } from '../run/preset-generation.ts';
import type { BatchOutput } from './batch-output.ts';
import {
  remainingJobs,
  runGeneration,
  type GenerationOutcome,
  type GenerationPorts,
  type StopSignal,
} from '../run/generation.ts';
import type { RunConfig } from '../run/types.ts';

export class BatchEngine implements Engine {
  readonly kind = BATCH_ENGINE;
  readonly capabilities: EngineCapabilities;
  private readonly indexOf = new Map<number, number>();

  constructor(
    private readonly plan: BatchPlan,
    questions: readonly Question[],
    private readonly output: BatchOutput,
    /** The output files' names, for the message of a missing line. */
    private readonly files: string,
  ) {
    this.capabilities = { streaming: false, nativeN: false, logprobs: plan.spec.params.logprobs, tokenize: false };
    for (const i of plan.indices) {
      const q = questions[i];
      if (q) this.indexOf.set(q.questionId, i);
    }
  }

  async load(_model: ModelRef): Promise<void> {}

  /** The window the export fitted prompts to, so the loop rebuilds the same prompts. */
  contextWindow(): number | null {
    return this.plan.contextWindow;
  }

  async generate(prompt: Prompt, params: SamplingParams, hooks: GenerateHooks = {}): Promise<Completion[]> {
    validateSampling(params);
    const base = this.plan.spec.params.seed;
    if (params.n !== 1 || params.seed === null || base === null) {
      throw new EngineError('CONFIG', 'the batch engine serves one sample per call, found by its seed', this.files);
    }
    if (hooks.signal?.aborted) return [abortedCompletion(params.seed)];
    const index = prompt.questionId === undefined ? undefined : this.indexOf.get(prompt.questionId);
    if (index === undefined) {
      throw new EngineError('CONFIG', `question ${prompt.questionId} is not in the batch plan`, this.files);
    }
    const exported = this.plan.prompts?.[String(index)];
    if (exported !== undefined && exported !== promptHash(prompt.messages)) {
      // Scoring a completion under another prompt's record would misreport what was asked.
      throw new EngineError(
        'CONFIG',
        `the prompt of question position ${index} (question ${prompt.questionId}) rebuilt from the plan differs from the one exported: import with the same databases, description files and template as the export`,
        this.files,
      );
    }
    const customId = customIdOf(index, params.seed - base);
    const r = this.output.results.get(customId);
    if (!r) {
      return [
        errorCompletion(
          `no line with custom_id ${customId} in ${this.files}: export the missing requests as a smaller batch, run it and import both outputs`,
          params.seed,
        ),
      ];
    }
    if (r.completion.text) hooks.onToken?.(0, r.completion.text);
    return [{ ...r.completion, seed: params.seed }];
  }

  /**
   * The completions came from the servers that ran the batch: the device is `server`, named by
   * the model ids and `system_fingerprint`s the output lines report (each distinct one).
   */
  device(): EngineDevice {
    const models = new Set<string>();
    const prints = new Set<string>();
    for (const r of this.output.results.values()) {
      if (r.completion.servedModel) models.add(r.completion.servedModel);
      if (r.completion.systemFingerprint) prints.add(r.completion.systemFingerprint);
    }
    const parts = [`batch output ${this.files}`];
    if (models.size > 0) parts.push(`model ${[...models].join(', ')}`);
    if (prints.size > 0) parts.push(`system_fingerprint ${[...prints].join(', ')}`);
    return { device: 'server', reason: null, detail: parts.join('; ') };
  }

  async interrupt(): Promise<void> {}
  async unload(): Promise<void> {}
}

/**
 * Scores an imported batch: every sample of the plan through the generation loop with the
 * batch engine, handing the samples to `ports.store`. Used by the CLI's `batch import`; the
 * app starts a stored generation run with a BatchEngine instead (same loop). A plan made under a
 * policy preset goes through the preset's loop (runPresetGeneration): the same messages rebuilt
 * from the preset (`ports.schema` renders a database's schema as the preset does), its prefill
 * put back before the completion, its extraction rule.
 */
export async function runBatchImport(
  plan: BatchPlan,
  inputs: { questions: readonly Question[]; gold: readonly { sql: string }[]; output: BatchOutput; files: string },
  config: Pick<RunConfig, 'fence' | 'rewardFormula'>,
  ports: Omit<GenerationPorts, 'engine'> & { schema?: (dbId: string) => Promise<string> },
  signal: StopSignal = { aborted: false, addEventListener: () => undefined },
): Promise<GenerationOutcome> {
  const engine = new BatchEngine(plan, inputs.questions, inputs.output, inputs.files);
  const jobs = remainingJobs(
    { indices: plan.indices, questions: inputs.questions, gold: inputs.gold, n: plan.spec.params.n },
    new Set(),
  );
  if (plan.preset) {
    const { schema } = ports;
    if (!schema)
      throw new EngineError(
        'CONFIG',
        `the plan was made under preset ${plan.preset.id}: the import needs its schema renderer`,
        inputs.files,
      );
    return runPresetGeneration(
      { engine: BATCH_ENGINE, model: plan.spec.model, preset: plan.preset.content, sampling: planPresetSampling(plan) },
      config,
      jobs,
      {
        engine,
        schema,
        probe: () =>
          Promise.reject(new EngineError('CONFIG', 'a batch plan is single-turn: it runs no probe', inputs.files)),
        evaluate: ports.evaluate,
        store: ports.store,
        now: () => Date.now(),
      },
      { signal },
    );
  }
  const total = jobs.reduce((k, j) => k + j.samples.length, 0);
  return runGeneration(plan.spec, config, jobs, { ...ports, engine }, { signal, doneBefore: 0, total });
}
