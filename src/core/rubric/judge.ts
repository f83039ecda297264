/**
 * The judge: any Engine (WebLLM, the CPU engine, an OpenAI-compatible server) answering the
 * versioned prompts of judge-prompts.ts. Answers are parsed strictly; a malformed answer or an
 * error completion (a failure about this prompt, e.g. HTTP 400 for a prompt too long) is
 * retried, and when no attempt parses the verdict is `unparseable` (raw answer kept) or
 * `error`: never a silent 0. A rejected `generate` is a failure of the whole engine (server
 * unreachable, GPU lost, ...): it propagates, so the caller can pause and resume, and the
 * answers already cached are not asked again. Every answer is cached by (prompt, model,
 * parameters).
 */
import { CancelledError, WorkbenchError } from '../errors.ts';
import type { AbortSignalLike } from '../eval/executor.ts';
import { GREEDY, type ChatMessage, type Completion, type Engine, type SamplingParams } from '../engine/engine.ts';
import { scaleToUnit } from './aggregate.ts';
import { MemoryJudgeCache, judgeCacheKey, type JudgeCache } from './judge-cache.ts';
import {
  DEFAULT_JUDGE_PROMPTS,
  RAR_PAIRWISE_V1,
  renderTemplate,
  type JudgePromptSet,
  type JudgePromptTemplate,
} from './judge-prompts.ts';
import type { Rubric, RubricItem } from './model.ts';
import {
  parseCriterionAnswer,
  parsePairwiseAnswer,
  parseScoreAnswer,
  type PairwiseWinner,
  type ParseResult,
} from './parse-judge.ts';
import type { CriterionVerdict, JudgeInfo, ScaleJudgement } from './scores.ts';

interface JudgeOptions {
  /** A loaded engine. */
  engine: Engine;
  /** The judge model's id: part of the cache key and stored with every score. */
  model: string;
  /** Sampling of the judge (default: temperature 0, 512 tokens, seed 0). */
  params?: Partial<Omit<SamplingParams, 'n'>>;
  /** Extra attempts after a malformed answer or a failed call (default 2). */
  retries?: number;
  /**
   * Temperature of the retries when the judge is greedy (default 0.7): a greedy, seeded judge
   * would repeat the same malformed answer. Retry k also uses seed + k.
   */
  retryTemperature?: number;
  prompts?: JudgePromptSet;
  cache?: JudgeCache;
  signal?: AbortSignalLike;
}

/** What the judge sees of a sample. */
interface JudgeInput {
  question: string;
  /** A reference answer (RaR) or the gold SQL; omitted from the prompt when empty. */
  reference?: string | null;
  /** The policy's response as the judge should read it (the completion, or the SQL). */
  response: string;
}

export interface JudgeStats {
  /** Engine calls made. */
  calls: number;
  /** Answers replayed from the cache. */
  cacheHits: number;
  /** Answers that did not parse (each one is retried while attempts remain). */
  malformed: number;
  /** Error completions (failures about one prompt; engine-wide failures reject instead). */
  errors: number;
}

/** A pairwise judgement: the position that won (A = shown first), or null. */
interface PairwiseVerdict {
  winner: PairwiseWinner | null;
  status: 'ok' | 'unparseable' | 'error';
  explanation: string;
  raw: string | null;
  attempts: number;
  cached: boolean;
}

const { n: _n, ...DEFAULT_PARAMS }: SamplingParams = GREEDY;

/** The judge's cancel: a CancelledError (name AbortError, code ABORTED), so `isCancellation` sees it. */
export class JudgeAbortedError extends CancelledError {
  constructor() {
    super('judging was cancelled');
  }
}

interface Asked<T> {
  value: T | null;
  status: 'ok' | 'unparseable' | 'error';
  raw: string | null;
  attempts: number;
  cached: boolean;
  reason: string;
}

export class Judge {
  readonly stats: JudgeStats = { calls: 0, cacheHits: 0, malformed: 0, errors: 0 };
  private readonly params: Omit<SamplingParams, 'n'>;
  private readonly prompts: JudgePromptSet;
  private readonly cache: JudgeCache;
  private readonly retries: number;

  constructor(private readonly opts: JudgeOptions) {
    this.params = { ...DEFAULT_PARAMS, ...opts.params };
    this.prompts = opts.prompts ?? DEFAULT_JUDGE_PROMPTS;
    this.cache = opts.cache ?? new MemoryJudgeCache();
    this.retries = opts.retries ?? 2;
    if (!Number.isInteger(this.retries) || this.retries < 0)
      throw new WorkbenchError('BAD_OPTION', `retries must be a non-negative integer, got ${this.retries}`);
  }

  get info(): JudgeInfo {
    return {
      engine: this.opts.engine.kind,
      model: this.opts.model,
      prompts: {
        criterion: this.prompts.criterion.id,
        implicit: this.prompts.implicit.id,
        likert: this.prompts.likert.id,
      },
    };
  }

  /** The chat messages of a prompt, exactly as sent (and hashed for the cache). */
  messages(template: JudgePromptTemplate, values: Record<string, string>): ChatMessage[] {
    return [
      { role: 'system', content: template.system },
      { role: 'user', content: renderTemplate(template.user, values) },
    ];
  }

  async criterion(
    input: JudgeInput,
    item: Pick<RubricItem, 'id' | 'title' | 'description'>,
  ): Promise<CriterionVerdict> {
    const criterion = item.description ? `${item.title}: ${item.description}` : item.title;
    const msgs = this.messages(this.prompts.criterion, { ...baseValues(input), criterion });
    const a = await this.ask(msgs, parseCriterionAnswer);
    return {
      id: item.id,
      met: a.value ? a.value.met : null,
      explanation: a.value ? a.value.explanation : a.reason,
      raw: a.raw,
      status: a.status,
      source: 'judge',
      attempts: a.attempts,
      cached: a.cached,
    };
  }

  /** RaR implicit aggregation: the whole rubric, one 1..10 score. */
  async implicit(input: JudgeInput, rubric: Pick<Rubric, 'items'>): Promise<ScaleJudgement> {
    return this.scale(this.messages(this.prompts.implicit, { ...baseValues(input), rubric: renderRubric(rubric) }));
  }

  /** Direct Likert baseline: no rubric, no reference. */
  async likert(input: JudgeInput): Promise<ScaleJudgement> {
    return this.scale(this.messages(this.prompts.likert, { ...baseValues(input), reference: '' }));
  }

  /**
   * Pairwise: which of `a` (shown first, as A) and `b` (second, as B) better meets the rubric;
   * `winner` null when no attempt parsed (`status` says why).
   */
  async pairwise(
    input: { question: string; a: string; b: string },
    rubric: Pick<Rubric, 'items'>,
  ): Promise<PairwiseVerdict> {
    const msgs = this.messages(RAR_PAIRWISE_V1, {
      question: input.question,
      rubric: renderRubric(rubric),
      response_a: input.a,
      response_b: input.b,
    });
    const a = await this.ask(msgs, parsePairwiseAnswer);
    return {
      winner: a.value ? a.value.winner : null,
      status: a.status,
      explanation: a.value ? a.value.explanation : a.reason,
      raw: a.raw,
      attempts: a.attempts,
      cached: a.cached,
    };
  }

  private async scale(msgs: ChatMessage[]): Promise<ScaleJudgement> {
    const a = await this.ask(msgs, parseScoreAnswer);
    const base = { raw: a.raw, attempts: a.attempts, cached: a.cached };
    if (a.value)
      return {
        status: 'ok',
        rawScore: a.value.score,
        score: scaleToUnit(a.value.score),
        explanation: a.value.explanation,
        ...base,
      };
    return {
      status: a.status,
      rawScore: null,
      score: null,
      explanation: a.reason,
      ...base,
      ...(a.status === 'error' ? { error: a.reason } : {}),
    };
  }

  private async ask<T>(messages: ChatMessage[], parse: (text: string) => ParseResult<T>): Promise<Asked<T>> {
    let raw: string | null = null;
    let reason = '';
    let allCached = true;
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      if (this.opts.signal?.aborted) throw new JudgeAbortedError();
      const params: SamplingParams = { ...this.attemptParams(attempt), n: 1 };
      const key = judgeCacheKey(messages, this.opts.model, params);
      let text: string;
      const hit = await this.cache.get(key);
      if (hit) {
        this.stats.cacheHits += 1;
        text = hit.text;
      } else {
        allCached = false;
        this.stats.calls += 1;
        let c: Completion | undefined;
        try {
          [c] = await this.opts.engine.generate({ messages }, params, { signal: this.opts.signal });
        } catch (err) {
          if (this.opts.signal?.aborted) throw new JudgeAbortedError();
          throw err;
        }
        if (c?.finishReason === 'abort' || this.opts.signal?.aborted) throw new JudgeAbortedError();
        if (!c || c.finishReason === 'error') {
          this.stats.errors += 1;
          reason = `judge call failed: ${c ? (c.error ?? 'the engine reported an error') : 'the engine returned no completion'}`;
          continue;
        }
        text = c.text;
        await this.cache.set(key, { text, finishReason: c.finishReason });
      }
      const parsed = parse(text);
      if (parsed.ok)
        return { value: parsed.value, status: 'ok', raw: text, attempts: attempt + 1, cached: allCached, reason: '' };
      this.stats.malformed += 1;
      raw = text;
      reason = `unparseable judge answer: ${parsed.error}`;
    }
    return {
      value: null,
      status: raw === null ? 'error' : 'unparseable',
      raw,
      attempts: this.retries + 1,
      cached: allCached,
      reason,
    };
  }

  private attemptParams(attempt: number): Omit<SamplingParams, 'n'> {
    const p = this.params;
    if (attempt === 0) return p;
    return {
      ...p,
      seed: p.seed === null ? null : p.seed + attempt,
      temperature: p.temperature === 0 ? (this.opts.retryTemperature ?? 0.7) : p.temperature,
    };
  }
}

function baseValues(input: JudgeInput): Record<string, string> {
  return { question: input.question, reference: input.reference ?? '', response: input.response };
}

const LABEL: Record<RubricItem['category'], string> = {
  essential: 'Essential',
  important: 'Important',
  optional: 'Optional',
  pitfall: 'Pitfall',
};

/** The rubric as the implicit judge reads it: one line per criterion with its category. */
function renderRubric(rubric: Pick<Rubric, 'items'>): string {
  return rubric.items
    .map((i) => `- [${LABEL[i.category]}] ${i.title}${i.description ? `: ${i.description}` : ''}`)
    .join('\n');
}
