/**
 * Test double (a model's weights cannot run here): an Engine that replays the completions of a
 * predictions file, so a generation run's path can be tested with real completions.
 *
 * The replay engine: completions recorded in a predictions file, served as if a model wrote
 * them, so that a replayed run goes through the same pipeline (prompt -> completion ->
 * extraction -> execution -> scores) as a generated one. Samples are looked up by
 * `Prompt.questionId`; sample i of a question is the i-th recorded completion for it.
 *
 * The text served is the file's raw completion when it has one (JSONL `completion`), else its
 * SQL (BIRD JSON, JSONL `sql`, `.sql` lines). A question with fewer recorded samples than asked
 * gets error samples for the rest: errors are data, never a crashed run.
 */
import {
  type Completion,
  type Engine,
  type EngineCapabilities,
  type EngineDevice,
  type ModelRef,
  type Prompt,
  type SamplingParams,
  type GenerateHooks,
} from '../../src/core/engine/engine.ts';
/** The replayed completions ran on no device. */
const NO_DEVICE: EngineDevice = { device: 'none', reason: null };
import { EngineError } from '../../src/core/engine/engine-error.ts';
import { abortedCompletion, errorCompletion, sampleSeed, validateSampling } from '../../src/core/engine/sampling.ts';
import type { Prediction, Question } from '../../src/core/types.ts';

export interface ReplaySource {
  /** The predictions file's name, for messages and the run record. */
  fileName: string;
  /** Recorded completions per question id, in sample order. */
  completions: ReadonlyMap<number, readonly string[]>;
}

/**
 * Groups parsed predictions (src/core/formats/predictions.ts) by question id. Keyed files
 * (JSONL) use their `question_id`; positional files (BIRD JSON, `.sql`) use the question at the
 * same position, as the official evaluator pairs them. `warnings` lists what was left out.
 */
export function replaySource(
  fileName: string,
  predictions: readonly Prediction[],
  questions: readonly Question[],
): ReplaySource & { warnings: string[] } {
  const completions = new Map<number, string[]>();
  const warnings: string[] = [];
  let beyond = 0;
  for (const p of predictions) {
    const id = p.questionId ?? questions[p.position]?.questionId;
    if (id === undefined) {
      beyond++;
      continue;
    }
    const list = completions.get(id) ?? [];
    list.push(p.completion ?? p.sql);
    completions.set(id, list);
  }
  if (beyond > 0)
    warnings.push(`${fileName}: ${beyond} predictions beyond the ${questions.length} questions were ignored`);
  return { fileName, completions, warnings };
}

export class ReplayEngine implements Engine {
  readonly kind = 'replay';
  readonly capabilities: EngineCapabilities = { streaming: false, nativeN: true, logprobs: false, tokenize: false };
  private loaded = false;

  constructor(private readonly source: ReplaySource) {}

  async load(_model: ModelRef): Promise<void> {
    this.loaded = true;
  }

  contextWindow(): number | null {
    return null;
  }

  /** No model runs: the completions are read from a file. */
  device(): EngineDevice | null {
    return this.loaded ? NO_DEVICE : null;
  }

  async generate(prompt: Prompt, params: SamplingParams, hooks: GenerateHooks = {}): Promise<Completion[]> {
    validateSampling(params);
    if (!this.loaded) throw new EngineError('NOT_LOADED', 'no predictions file is loaded: call load() first');
    const id = prompt.questionId;
    if (id === undefined) {
      throw new EngineError(
        'CONFIG',
        'the replay engine needs Prompt.questionId to find the recorded completions',
        this.source.fileName,
      );
    }
    const recorded = this.source.completions.get(id) ?? [];
    const out: Completion[] = [];
    for (let i = 0; i < params.n; i++) {
      const seed = sampleSeed(params, i);
      if (hooks.signal?.aborted) {
        out.push(abortedCompletion(seed));
        continue;
      }
      const text = recorded[i];
      if (text === undefined) {
        out.push(
          errorCompletion(
            recorded.length === 0
              ? `${this.source.fileName} has no prediction for question ${id}`
              : `${this.source.fileName} has ${recorded.length} sample(s) for question ${id}; sample ${i + 1} was asked for`,
            seed,
          ),
        );
        continue;
      }
      hooks.onToken?.(i, text);
      out.push({ text, finishReason: 'stop', tokensIn: null, tokensOut: null, latencyMs: 0, seed, meanLogprob: null });
    }
    return out;
  }

  async interrupt(): Promise<void> {}

  async unload(): Promise<void> {
    this.loaded = false;
  }
}

export function createReplayEngine(source: ReplaySource): ReplayEngine {
  return new ReplayEngine(source);
}
