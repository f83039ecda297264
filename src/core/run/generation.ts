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

/**
 * Generates, scores and hands over every sample of `jobs`. `doneBefore` samples are already
 * stored (a resumed run); `total` is the run's sample count.
 */
export async function runGeneration(
  spec: GenerationSpec,
  config: Pick<RunConfig, 'fence' | 'rewardFormula'>,
  jobs: readonly GenerationJob[],
  ports: GenerationPorts,
  hooks: {
    signal: StopSignal;
    doneBefore: number;
    total: number;
    onProgress?: (p: GenerationProgress) => void;
    now?: () => number;
    /** Questions in flight at once (default 1; a server engine is faster with several). */
    concurrency?: number;
  },
): Promise<GenerationOutcome> {
  const { engine } = ports;
  const { signal } = hooks;
  const now = hooks.now ?? (() => Date.now());
  const formula = runFormula(config);
  const started = now();
  // With several questions in flight, generation times overlap: tokens/s is then over wall-clock time.
  const parallel = (hooks.concurrency ?? 1) > 1;
  let doneNow = 0;
  let tokensOut = 0;
  let genMs = 0;
  // Tokens of the sample being streamed, estimated at 4 characters per token (engines stream
  // text in batches, not one token per call); replaced by the engine's count when it finishes.
  let liveTokens = 0;
  let genStart = 0;
  const progress = (phase: GenerationProgress['phase'], current: GenerationProgress['current']) => {
    if (!hooks.onProgress) return;
    const elapsed = now() - started;
    const remaining = hooks.total - hooks.doneBefore - doneNow;
    const ms = genMs + (phase === 'generate' ? now() - genStart : 0);
    const tokens = tokensOut + (phase === 'generate' ? Math.round(liveTokens) : 0);
    hooks.onProgress({
      done: hooks.doneBefore + doneNow,
      total: hooks.total,
      tokensPerSecond: parallel
        ? elapsed > 250
          ? (tokens * 1000) / elapsed
          : null
        : ms > 250
          ? (tokens * 1000) / ms
          : null,
      etaMs: doneNow > 0 ? (elapsed / doneNow) * remaining : null,
      tokensOut: tokens,
      current,
      phase,
    });
  };
  const engineId = `${spec.engine}`;
  // Read after each call: a server's reply can name the model and build that answered.
  let device = engine.device?.() ?? null;
  const stopped = (): GenerationOutcome | null =>
    signal.aborted
      ? stopKind(signal) === 'pause'
        ? { kind: 'paused', message: 'paused by the user' }
        : { kind: 'cancelled' }
      : null;

  const runJob = async (job: GenerationJob): Promise<GenerationOutcome | null> => {
    const early = stopped();
    if (early) return early;
    const q = job.question;
    progress('prompt', { index: job.index, questionId: q.questionId, sample: job.samples[0]!, text: '' });
    const db = await ports.database(q.dbId);
    const built = await buildPrompt(spec.template, db, q, {
      sampleRows: spec.sampleRows,
      descriptions: spec.descriptions,
      budget: { contextWindow: engine.contextWindow(), reserve: spec.params.maxTokens },
      countTokens: engine.capabilities.tokenize && engine.countTokens ? (t) => engine.countTokens!(t) : undefined,
    });
    const seedOf = (s: number) => (spec.params.seed === null ? null : spec.params.seed + s);
    // One call for all n samples when the engine does n natively and none is stored yet;
    // otherwise one call per missing sample with its own seed, so a resume reproduces them.
    const calls: Array<{ samples: number[]; params: SamplingParams }> =
      engine.capabilities.nativeN && isFullRange(job.samples, spec.params.n) && spec.params.n > 1
        ? [{ samples: job.samples, params: spec.params }]
        : job.samples.map((s) => ({ samples: [s], params: { ...spec.params, n: 1, seed: seedOf(s) } }));
    const completions: Array<{ sample: number; c: Completion }> = [];
    for (const call of calls) {
      const halt = stopped();
      if (halt) return halt;
      if (!built.fit.fits) {
        for (const s of call.samples) completions.push({ sample: s, c: promptTooLong(built.fit, seedOf(s)) });
        continue;
      }
      const texts = new Map<number, string>();
      liveTokens = 0;
      genStart = now();
      let lastReport = 0;
      let out: Completion[];
      try {
        out = await engine.generate(built.prompt, call.params, {
          signal,
          onToken: (i, piece) => {
            const s = call.samples[i] ?? call.samples[0]!;
            texts.set(s, (texts.get(s) ?? '') + piece);
            liveTokens += piece.length / 4;
            const t = now();
            if (t - lastReport > 200) {
              lastReport = t;
              progress('generate', { index: job.index, questionId: q.questionId, sample: s, text: texts.get(s)! });
            }
          },
        });
      } catch (err) {
        if (isEngineError(err) && err.code === 'GPU_LOST') {
          return { kind: 'gpu-lost', message: gpuLostMessage(err.message) };
        }
        if (signal.aborted || (isEngineError(err) && err.code === 'ABORTED')) return stopped() ?? { kind: 'cancelled' };
        throw err;
      } finally {
        genMs += now() - genStart;
      }
      device = engine.device?.() ?? device;
      // A sample cut short by pause/cancel is not kept: the resume generates it again.
      if (signal.aborted) return stopped()!;
      for (const [i, s] of call.samples.entries()) {
        const c = out[i] ?? {
          text: '',
          finishReason: 'error',
          tokensIn: null,
          tokensOut: null,
          latencyMs: 0,
          seed: seedOf(s),
          meanLogprob: null,
          error: 'the engine returned fewer samples than asked',
        };
        if (c.finishReason === 'abort') return stopped() ?? { kind: 'cancelled' };
        if (c.finishReason === 'error' && /device (was )?lost|GPU_LOST/i.test(c.error ?? '')) {
          return { kind: 'gpu-lost', message: gpuLostMessage(c.error ?? 'the GPU device was lost') };
        }
        tokensOut += c.tokensOut ?? 0;
        completions.push({ sample: s, c });
      }
    }
    const items: EvalItem[] = completions.map(({ sample, c }) => {
      const x = extractSql(c.text, { fence: config.fence });
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
    });
    progress('evaluate', {
      index: job.index,
      questionId: q.questionId,
      sample: job.samples[job.samples.length - 1]!,
      text: '',
    });
    const results = await ports.evaluate(items, signal);
    if (results.length !== items.length) {
      // Evaluation stopped by the signal: nothing of this question is stored, the resume redoes it.
      return stopped() ?? { kind: 'cancelled' };
    }
    const records = results.map((r, i) => {
      const item = items[i]!;
      const c = completions[i]!.c;
      const rec = toSampleRecord(item, r, formula);
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
        engine: engineId,
        model: spec.model.id,
      };
      if (c.error !== undefined) gen.error = c.error;
      if (device) {
        gen.device = device.device;
        if (device.reason) gen.deviceReason = device.reason;
        if (device.detail) gen.deviceDetail = device.detail;
      }
      if (c.servedModel !== undefined) gen.servedModel = c.servedModel;
      if (c.systemFingerprint !== undefined) gen.systemFingerprint = c.systemFingerprint;
      rec.generation = gen;
      return rec;
    });
    ports.store(records);
    doneNow += records.length;
    progress('idle', null);
    return null;
  };
  const result = await runJobsConcurrently(jobs, hooks.concurrency ?? 1, runJob);
  return result ?? stopped() ?? { kind: 'done' };
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
