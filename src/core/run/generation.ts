/**
 * Generation runs, the pure part: for each question of a plan, build the prompt (recording
 * what was cut to fit), generate the samples not stored yet, extract their SQL, evaluate them,
 * and hand every finished sample to a sink as soon as its question is scored. Engines,
 * schemas, SQL execution and storage are ports; src/app/generation-run.ts wires
 * them to IndexedDB, the SQL worker pool and a loaded Engine. The steps around the loop (facts,
 * findings, formula, sample records) are the run recipe's (score-run.ts: `generationScorer`).
 *
 * Control: the signal's `reason` says why it stopped: 'pause' (the run stays resumable),
 * anything else is a cancel. An engine that throws `GPU_LOST` pauses the run with its message;
 * samples already handed to the sink are kept. Other errors of one sample become an error
 * completion (scored 0) and the run goes on.
 */
import { sampleKey } from '../eval/constants.ts';
import type { AbortSignalLike } from '../eval/executor.ts';
import {
  GREEDY,
  type Completion,
  type Engine,
  type EngineDevice,
  type ModelRef,
  type SamplingParams,
} from '../engine/engine.ts';
import { isEngineError } from '../engine/engine-error.ts';
import { buildPrompt, type DatabaseContext, type PromptFit } from '../prompt/build-prompt.ts';
import type { PolicyPreset } from '../prompt/presets.ts';
import type { PromptTemplate } from '../prompt/templates.ts';
import { mulberry32, randomIndex } from '../util/rng.ts';
import { extractSql } from '../sql/extract-sql.ts';
import type { EvalItem, ItemResult, Question } from '../types.ts';
import { runFormula, toSampleRecord } from './score-run.ts';
import type { RunConfig, RunDevice, SampleGeneration, SampleRecord } from './types.ts';

/** What a generation run asks of its engine; stored with the run so a resume asks the same. */
export interface GenerationSpec {
  /** Engine kind: `wllama`, `webllm`, `openai`, `replay`. */
  engine: string;
  /** Model as loaded (id and where it came from; never an API key). */
  model: ModelRef;
  /** The template as used (the full text, so a resume after an edit still asks the same). */
  template: PromptTemplate;
  /** Sample rows per table and column descriptions; default the template's. */
  sampleRows?: number;
  descriptions?: boolean;
  /** Sampling; `n` is the number of samples per question, sample i uses seed + i. */
  params: SamplingParams;
  /**
   * A policy preset (src/core/prompt/presets.ts), its whole content: the run asks it instead of
   * the template (its messages, schema rendering, prefill, stops, extraction and, multi-turn,
   * its environment), with `params`' n, temperature, top-p, max tokens and seed.
   */
  preset?: PolicyPreset;
}

export type { SampleGeneration } from './types.ts';

/** One question of a plan and the sample numbers still to generate. */
export interface GenerationJob {
  /** Gold position (SampleRecord.index). */
  index: number;
  question: Question;
  goldSql: string;
  samples: number[];
}

export interface GenerationProgress {
  /** Samples stored, this session and before. */
  done: number;
  total: number;
  /** Output tokens per second of generation time, this session. */
  tokensPerSecond: number | null;
  /** Estimated milliseconds left, from this session's wall-clock pace. */
  etaMs: number | null;
  /** Output tokens generated this session. */
  tokensOut: number;
  /** The question being generated, and the text streamed so far for its current sample. */
  current: { index: number; questionId: number; sample: number; text: string } | null;
  phase: 'prompt' | 'generate' | 'evaluate' | 'idle';
}

export interface GenerationPorts {
  engine: Engine;
  /** The database's schema and sample rows (cache it: called once per question). */
  database(dbId: string): Promise<DatabaseContext>;
  /** Scores the items of one question (EX and the run's metrics). */
  evaluate(items: EvalItem[], signal: StopSignal): Promise<ItemResult[]>;
  /** Receives each question's samples as soon as they are scored. */
  store(samples: SampleRecord[]): void;
}

export type GenerationOutcome =
  | { kind: 'done' }
  | { kind: 'paused'; message: string }
  | { kind: 'cancelled' }
  | { kind: 'gpu-lost'; message: string };

/** An AbortSignal-like signal whose `reason` says pause or cancel. */
export interface StopSignal extends AbortSignalLike {
  readonly reason?: unknown;
}

export const PAUSE = 'pause';
export const CANCEL = 'cancel';

/** The jobs of a plan minus the (index, sample) keys already stored. */
export function remainingJobs(
  plan: { indices: readonly number[]; questions: readonly Question[]; gold: readonly { sql: string }[]; n: number },
  stored: ReadonlySet<string>,
): GenerationJob[] {
  const jobs: GenerationJob[] = [];
  for (const index of plan.indices) {
    const question = plan.questions[index];
    if (!question) continue;
    const samples: number[] = [];
    for (let s = 0; s < plan.n; s++) if (!stored.has(sampleKey({ index, sample: s }))) samples.push(s);
    if (samples.length > 0) jobs.push({ index, question, goldSql: plan.gold[index]?.sql ?? question.goldSql, samples });
  }
  return jobs;
}

function isFullRange(samples: readonly number[], n: number): boolean {
  return samples.length === n && samples.every((s, i) => s === i);
}

function promptTooLong(fit: PromptFit, seed: number | null): Completion {
  return {
    text: '',
    finishReason: 'error',
    tokensIn: fit.tokens,
    tokensOut: 0,
    latencyMs: 0,
    seed,
    meanLogprob: null,
    error: `the prompt needs ${fit.tokens} tokens but the context window leaves ${fit.limit} after the answer's reserve, even with sample rows and unrelated tables cut`,
  };
}

/** The engine's message, with what to do unless it already says it. */
function gpuLostMessage(message: string): string {
  return /\bkept\b/.test(message)
    ? `${message} Reload the page, load the model again on the Generate screen and resume the run.`
    : `${message}. The samples generated so far are kept: reload the page, load the model again and resume the run.`;
}

/** An engine's device as a run header records it (a copy: the engine's object may change). */
export function runDeviceOf(d: EngineDevice | null | undefined): RunDevice | undefined {
  if (!d) return undefined;
  return d.detail ? { device: d.device, reason: d.reason, detail: d.detail } : { device: d.device, reason: d.reason };
}

/** Why a signal stopped the run. */
function stopKind(signal: StopSignal): 'pause' | 'cancel' {
  return signal.reason === PAUSE ? 'pause' : 'cancel';
}

/** How a generation is stopped and followed. */
interface GenerationHooks {
  signal: StopSignal;
  doneBefore: number;
  total: number;
  onProgress?: (p: GenerationProgress) => void;
  now?: () => number;
  /** Questions in flight at once (default 1; a server engine is faster with several). */
  concurrency?: number;
}

/**
 * Generates, scores and hands over every sample of `jobs`. `doneBefore` samples are already
 * stored (a resumed run); `total` is the run's sample count.
 */
export async function runGeneration(
  spec: GenerationSpec,
  config: Pick<RunConfig, 'fence' | 'rewardFormula'>,
  jobs: readonly GenerationJob[],
  ports: GenerationPorts,
  hooks: GenerationHooks,
): Promise<GenerationOutcome> {
  const run = new GenerationRun(spec, config, ports, hooks);
  const result = await runJobsConcurrently(jobs, hooks.concurrency ?? 1, (job) => run.job(job));
  return result ?? run.stopped() ?? { kind: 'done' };
}

type BuiltPrompt = Awaited<ReturnType<typeof buildPrompt>>;

/**
 * One session of a generation: each job's steps (its prompt built, its samples generated in
 * one call or one call each, extracted, scored, stored) and the progress of the whole.
 */
class GenerationRun {
  readonly #now: () => number;
  readonly #started: number;
  readonly #formula: ReturnType<typeof runFormula>;
  /** With several questions in flight, generation times overlap: tokens/s is then over wall-clock time. */
  readonly #parallel: boolean;
  #doneNow = 0;
  #tokensOut = 0;
  #genMs = 0;
  /**
   * Tokens of the sample being streamed, estimated at 4 characters per token (engines stream
   * text in batches, not one token per call); replaced by the engine's count when it finishes.
   */
  #liveTokens = 0;
  #genStart = 0;
  /** Read after each call: a server's reply can name the model and build that answered. */
  #device: EngineDevice | null;

  constructor(
    private readonly spec: GenerationSpec,
    private readonly config: Pick<RunConfig, 'fence' | 'rewardFormula'>,
    private readonly ports: GenerationPorts,
    private readonly hooks: GenerationHooks,
  ) {
    this.#now = hooks.now ?? (() => Date.now());
    this.#formula = runFormula(config);
    this.#started = this.#now();
    this.#parallel = (hooks.concurrency ?? 1) > 1;
    this.#device = ports.engine.device?.() ?? null;
  }

  #progress(phase: GenerationProgress['phase'], current: GenerationProgress['current']): void {
    const { hooks } = this;
    if (!hooks.onProgress) return;
    const now = this.#now;
    const elapsed = now() - this.#started;
    const remaining = hooks.total - hooks.doneBefore - this.#doneNow;
    const ms = this.#genMs + (phase === 'generate' ? now() - this.#genStart : 0);
    const tokens = this.#tokensOut + (phase === 'generate' ? Math.round(this.#liveTokens) : 0);
    hooks.onProgress({
      done: hooks.doneBefore + this.#doneNow,
      total: hooks.total,
      tokensPerSecond: this.#parallel
        ? elapsed > 250
          ? (tokens * 1000) / elapsed
          : null
        : ms > 250
          ? (tokens * 1000) / ms
          : null,
      etaMs: this.#doneNow > 0 ? (elapsed / this.#doneNow) * remaining : null,
      tokensOut: tokens,
      current,
      phase,
    });
  }

  stopped(): GenerationOutcome | null {
    const { signal } = this.hooks;
    return signal.aborted
      ? stopKind(signal) === 'pause'
        ? { kind: 'paused', message: 'paused by the user' }
        : { kind: 'cancelled' }
      : null;
  }

  #seedOf(s: number): number | null {
    return this.spec.params.seed === null ? null : this.spec.params.seed + s;
  }

  /** One question: its prompt, its samples generated, scored and stored; an outcome when the run stops. */
  async job(job: GenerationJob): Promise<GenerationOutcome | null> {
    const early = this.stopped();
    if (early) return early;
    const q = job.question;
    this.#progress('prompt', { index: job.index, questionId: q.questionId, sample: job.samples[0]!, text: '' });
    const built = await this.#prompt(q);
    const completions: Array<{ sample: number; c: Completion }> = [];
    for (const call of this.#calls(job)) {
      const halt = this.stopped();
      if (halt) return halt;
      if (!built.fit.fits) {
        for (const s of call.samples) completions.push({ sample: s, c: promptTooLong(built.fit, this.#seedOf(s)) });
        continue;
      }
      const stop = await this.#generate(job, built, call, completions);
      if (stop) return stop;
    }
    const items = completions.map(({ sample, c }) => this.#item(job, sample, c));
    this.#progress('evaluate', {
      index: job.index,
      questionId: q.questionId,
      sample: job.samples[job.samples.length - 1]!,
      text: '',
    });
    const results = await this.ports.evaluate(items, this.hooks.signal);
    if (results.length !== items.length) {
      // Evaluation stopped by the signal: nothing of this question is stored, the resume redoes it.
      return this.stopped() ?? { kind: 'cancelled' };
    }
    const records = results.map((r, i) => this.#record(items[i]!, r, completions[i]!.c, built));
    this.ports.store(records);
    this.#doneNow += records.length;
    this.#progress('idle', null);
    return null;
  }

  async #prompt(q: Question): Promise<BuiltPrompt> {
    const { spec } = this;
    const { engine } = this.ports;
    const db = await this.ports.database(q.dbId);
    return buildPrompt(spec.template, db, q, {
      sampleRows: spec.sampleRows,
      descriptions: spec.descriptions,
      budget: { contextWindow: engine.contextWindow(), reserve: spec.params.maxTokens },
      countTokens: engine.capabilities.tokenize && engine.countTokens ? (t) => engine.countTokens!(t) : undefined,
    });
  }

  /**
   * One call for all n samples when the engine does n natively and none is stored yet;
   * otherwise one call per missing sample with its own seed, so a resume reproduces them.
   */
  #calls(job: GenerationJob): Array<{ samples: number[]; params: SamplingParams }> {
    const { params } = this.spec;
    return this.ports.engine.capabilities.nativeN && isFullRange(job.samples, params.n) && params.n > 1
      ? [{ samples: job.samples, params }]
      : job.samples.map((s) => ({ samples: [s], params: { ...params, n: 1, seed: this.#seedOf(s) } }));
  }

  /** One engine call, streamed into the progress; its completions added to `completions`, or an outcome when the run stops. */
  async #generate(
    job: GenerationJob,
    built: BuiltPrompt,
    call: { samples: number[]; params: SamplingParams },
    completions: Array<{ sample: number; c: Completion }>,
  ): Promise<GenerationOutcome | null> {
    const { engine } = this.ports;
    const { signal } = this.hooks;
    const texts = new Map<number, string>();
    this.#liveTokens = 0;
    this.#genStart = this.#now();
    let lastReport = 0;
    let out: Completion[];
    try {
      out = await engine.generate(built.prompt, call.params, {
        signal,
        onToken: (i, piece) => {
          const s = call.samples[i] ?? call.samples[0]!;
          texts.set(s, (texts.get(s) ?? '') + piece);
          this.#liveTokens += piece.length / 4;
          const t = this.#now();
          if (t - lastReport > 200) {
            lastReport = t;
            this.#progress('generate', {
              index: job.index,
              questionId: job.question.questionId,
              sample: s,
              text: texts.get(s)!,
            });
          }
        },
      });
    } catch (err) {
      if (isEngineError(err) && err.code === 'GPU_LOST') {
        return { kind: 'gpu-lost', message: gpuLostMessage(err.message) };
      }
      if (signal.aborted || (isEngineError(err) && err.code === 'ABORTED'))
        return this.stopped() ?? { kind: 'cancelled' };
      throw err;
    } finally {
      this.#genMs += this.#now() - this.#genStart;
    }
    this.#device = engine.device?.() ?? this.#device;
    // A sample cut short by pause/cancel is not kept: the resume generates it again.
    if (signal.aborted) return this.stopped()!;
    return this.#keep(call.samples, out, completions);
  }

  /** The completions of one call, each kept unless it says the run stopped or the GPU was lost. */
  #keep(
    samples: number[],
    out: Completion[],
    completions: Array<{ sample: number; c: Completion }>,
  ): GenerationOutcome | null {
    for (const [i, s] of samples.entries()) {
      const c = out[i] ?? {
        text: '',
        finishReason: 'error',
        tokensIn: null,
        tokensOut: null,
        latencyMs: 0,
        seed: this.#seedOf(s),
        meanLogprob: null,
        error: 'the engine returned fewer samples than asked',
      };
      if (c.finishReason === 'abort') return this.stopped() ?? { kind: 'cancelled' };
      if (c.finishReason === 'error' && /device (was )?lost|GPU_LOST/i.test(c.error ?? '')) {
        return { kind: 'gpu-lost', message: gpuLostMessage(c.error ?? 'the GPU device was lost') };
      }
      this.#tokensOut += c.tokensOut ?? 0;
      completions.push({ sample: s, c });
    }
    return null;
  }

  /** The item a completion is scored as: the SQL extracted from its text. */
  #item(job: GenerationJob, sample: number, c: Completion): EvalItem {
    const q = job.question;
    const x = extractSql(c.text, { fence: this.config.fence });
    const item: EvalItem = {
      index: job.index,
      questionId: q.questionId,
      dbId: q.dbId,
      difficulty: q.difficulty,
      predSql: x.sql,
      goldSql: job.goldSql,
      extraction: x.extraction,
      sample,
      completion: c.text,
    };
    if (c.meanLogprob !== null) item.meanLogprob = c.meanLogprob;
    return item;
  }

  /** The stored sample: the item's result and how it was generated. */
  #record(item: EvalItem, r: ItemResult, c: Completion, built: BuiltPrompt): SampleRecord {
    const rec = toSampleRecord(item, r, this.#formula);
    const gen: SampleGeneration = {
      prompt: built.prompt.messages,
      templateId: built.templateId,
      templateFingerprint: built.templateFingerprint,
      fit: built.fit,
      tokensIn: c.tokensIn,
      tokensOut: c.tokensOut,
      latencyMs: c.latencyMs,
      finishReason: c.finishReason,
      seed: c.seed,
      engine: `${this.spec.engine}`,
      model: this.spec.model.id,
    };
    if (c.error !== undefined) gen.error = c.error;
    const device = this.#device;
    if (device) {
      gen.device = device.device;
      if (device.reason) gen.deviceReason = device.reason;
      if (device.detail) gen.deviceDetail = device.detail;
    }
    if (c.servedModel !== undefined) gen.servedModel = c.servedModel;
    if (c.systemFingerprint !== undefined) gen.systemFingerprint = c.systemFingerprint;
    rec.generation = gen;
    return rec;
  }
}

/**
 * Runs `runJob` over the jobs, `concurrency` at a time, in order; the first outcome a job returns
 * (a stop, a failure) ends the others' taking of new jobs and is returned; null when every job ran.
 */
export async function runJobsConcurrently(
  jobs: readonly GenerationJob[],
  concurrency: number,
  runJob: (job: GenerationJob) => Promise<GenerationOutcome | null>,
): Promise<GenerationOutcome | null> {
  const queue = [...jobs];
  let result: GenerationOutcome | null = null;
  const worker = async () => {
    while (!result && queue.length > 0) {
      const r = await runJob(queue.shift()!);
      if (r && !result) result = r;
    }
  };
  const width = Math.max(1, Math.min(concurrency, jobs.length));
  await Promise.all(Array.from({ length: width }, worker));
  return result;
}

/**
 * The quick check's questions: `size` gold positions drawn without replacement by a seeded
 * shuffle (mulberry32) among the questions whose database is stored, returned in gold order.
 * All of them when fewer are available.
 */
export function quickCheckIndices(available: readonly number[], size = 50, seed = 20240601): number[] {
  const pool = [...available];
  const rng = mulberry32(seed);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = randomIndex(rng, i + 1);
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, Math.min(size, pool.length)).sort((a, b) => a - b);
}

/** Sampling of the quick check: one greedy sample, seed 0. */
export function quickCheckParams(maxTokens = 512): SamplingParams {
  return { ...GREEDY, stop: [], maxTokens };
}

/** Wilson score interval of a proportion (95% by default); [0, 0] for n = 0. */
export function wilsonInterval(successes: number, n: number, z = 1.959964): [number, number] {
  if (n <= 0) return [0, 0];
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** EX of the first sample of every question, with its Wilson 95% interval. */
export function exWithInterval(samples: readonly Pick<SampleRecord, 'index' | 'sample' | 'ex'>[]): {
  ex: number;
  low: number;
  high: number;
  n: number;
  correct: number;
} {
  const first = samples.filter((s) => s.sample === 0);
  const correct = first.filter((s) => s.ex === 1).length;
  const n = first.length;
  const [low, high] = wilsonInterval(correct, n);
  return { ex: n ? correct / n : 0, low, high, n, correct };
}
