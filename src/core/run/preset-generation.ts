/**
 * Generation under a policy preset (src/core/prompt/presets.ts): the sibling of runGeneration for
 * a published evaluation's exact settings. Each question's messages are the preset's
 * (renderPresetMessages over the schema as the preset renders it, once per database), with its
 * prefill, stop strings, stop token ids, sampling and extraction rule. A multi-turn preset plays
 * each sample as an episode (src/core/episode/run-episode.ts): the engine is the policy (one
 * sample per turn), probes run through the `probe` port (the run's SQL pool, read-only), and the
 * sample's SQL is the episode's final SQL. Every sample is then scored by the run's recipe (the
 * `evaluate` port: generationScorer), exactly as a replay of the same SQL.
 */
import type { Engine, ModelRef, SamplingParams } from '../engine/engine.ts';
import { runEpisode, type EpisodeEnv } from '../episode/run-episode.ts';
import { SKYRL_SQL_DEFAULTS } from '../episode/skyrl-sql.ts';
import { VERL_SQL_DEFAULTS } from '../episode/verl-sql.ts';
import type { ChatMessage, ChatReply, Episode, ProbeResult } from '../episode/types.ts';
import { extractAnswer } from '../prompt/preset-extract.ts';
import {
  presetFingerprint,
  renderPresetMessages,
  type PolicyPreset,
  type PresetExtractionRule,
} from '../prompt/presets.ts';
import { extractSql } from '../sql/extract-sql.ts';
import type { EvalItem, Extraction, ExtractionRule, ItemResult, SqlValue } from '../types.ts';
import { runJobsConcurrently, type GenerationJob, type GenerationOutcome, type StopSignal } from './generation.ts';
import { runFormula, toSampleRecord } from './score-run.ts';
import type { RunConfig, SampleGeneration, SampleRecord } from './types.ts';
import { WorkbenchError } from '../errors.ts';

/** How many samples per question, and with which sampling: the preset's, or its self-consistency setting. */
interface PresetSamplingChoice {
  /** Samples per question; default the preset's `sampling.n` (self-consistency: greedy + sampled). */
  n?: number;
  /** The preset's published "k greedy + m sampled" setting (an error when it publishes none). */
  selfConsistency?: boolean;
  /** Sample i uses seed + i; null: no seed. */
  seed?: number | null;
}

export interface PresetSampling {
  n: number;
  /** The sampling of sample `s` (always n = 1: one request per sample, its own seed). */
  paramsOf(sample: number): SamplingParams;
}

/** The preset's sampling for a run: its defaults, or its published self-consistency setting. */
export function presetSampling(preset: PolicyPreset, choice: PresetSamplingChoice = {}): PresetSampling {
  const s = preset.sampling;
  const sc = choice.selfConsistency ? s.selfConsistency : null;
  if (choice.selfConsistency && !sc)
    throw new WorkbenchError(
      'BAD_OPTION',
      `preset ${preset.id} publishes no self-consistency setting (1 greedy + k sampled): leave out the self-consistency choice`,
    );
  const n = choice.n ?? (sc ? sc.greedy + sc.sampled : s.n);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new WorkbenchError('BAD_OPTION', `samples per question must be an integer >= 1, got ${n}`);
  const seed = choice.seed === undefined ? 0 : choice.seed;
  return {
    n,
    paramsOf(sample) {
      const greedy = sc ? sample < sc.greedy : s.temperature === 0;
      return {
        n: 1,
        temperature: sc ? (greedy ? 0 : sc.temperature) : s.temperature,
        topP: sc ? (greedy ? 1 : sc.topP) : s.topP,
        maxTokens: s.maxTokens,
        seed: seed === null ? null : seed + sample,
        stop: [...preset.stop],
        ...(preset.stopTokenIds.length > 0 ? { stopTokenIds: [...preset.stopTokenIds] } : {}),
        logprobs: false,
      };
    },
  };
}

/**
 * The environment a multi-turn preset describes, as the episode runner plays it. `conversation`:
 * the engine cannot continue a final assistant message (SkyRL's conversation mode); `toolRole`:
 * the engine takes tool messages (the verl tutorial's tool answers go back as `tool` messages,
 * else as the user turn Qwen's template renders them into).
 */
export function presetEnv(preset: PolicyPreset, conversation: boolean, toolRole = false): EpisodeEnv {
  const mt = preset.multiTurn;
  if (!mt) throw new WorkbenchError('REFUSED', `preset ${preset.id} is single-turn: it has no environment`);
  if (mt.probeStyle === 'tool-call' && mt.rewardRule === 'verl-answer-ex')
    return {
      ...VERL_SQL_DEFAULTS,
      maxTurns: mt.maxTurns,
      probeTimeoutMs: mt.probeTimeoutMs,
      maxResultChars: mt.maxObservationChars,
      maxResultRows: mt.truncateToRows,
      toolName: mt.probeTag,
      tools: preset.tools,
      finalSummary: mt.finalSummary,
      summaryPrompt: mt.finalSummaryPrompt ?? VERL_SQL_DEFAULTS.summaryPrompt,
      toolRole,
    };
  if (mt.probeStyle !== 'tag' || mt.rewardRule !== 'skyrl-format-ex')
    throw new WorkbenchError(
      'REFUSED',
      `preset ${preset.id}: its environment (${mt.probeStyle} probes, ${mt.rewardRule} reward) is not played by the episode runner; ` +
        'the multi-turn environments it plays are skyrl-sql-v1 (tag probes, skyrl-format-ex) and verl-text2sql-v1 (tool calls, verl-answer-ex)',
    );
  return {
    ...SKYRL_SQL_DEFAULTS,
    maxTurns: mt.maxTurns,
    probeTimeoutMs: mt.probeTimeoutMs,
    stop: [...preset.stop],
    conversation,
  };
}

/**
 * The stop string a reply stopped at when the engine cut it and did not say which: a tag's
 * closing string (`</sql>`) whose opening tag is still open at the end of the text. Only for a
 * reply that stopped (not one cut by the token limit).
 */
export function inferredStop(text: string, stop: readonly string[]): string | null {
  for (const s of stop) {
    const m = /^<\/([A-Za-z_][\w-]*)>$/.exec(s);
    if (!m) continue;
    const open = text.lastIndexOf(`<${m[1]}>`);
    if (open >= 0 && text.indexOf(s, open) < 0) return s;
  }
  return null;
}

const EXTRACTION_RULE: Record<Exclude<PresetExtractionRule, 'app-default'>, ExtractionRule> = {
  'last-sql-fence': 'fenced-sql-last',
  'skyrl-solution': 'solution-tag',
  'verl-answer': 'answer-tag',
};

/** The SQL of a single-turn completion under the preset's rule, as the run records extractions. */
export function presetExtraction(
  preset: PolicyPreset,
  text: string,
  fence: RunConfig['fence'],
): { sql: string; extraction: Extraction } {
  if (preset.extraction === 'app-default') return extractSql(text, { fence });
  const a = extractAnswer(preset, text);
  return {
    sql: a.sql ?? '',
    extraction: { rule: a.sql === null ? 'none' : EXTRACTION_RULE[preset.extraction], thinkStripped: false },
  };
}

/**
 * The episode as a run file keeps it (plain JSON): an INTEGER beyond 2^53 (a bigint) becomes its
 * decimal text and a BLOB its hex text; each value's storage class stays in `classes`.
 */
function storedEpisode(e: Episode): Episode {
  const plain = (v: SqlValue): SqlValue =>
    typeof v === 'bigint'
      ? v.toString()
      : v instanceof Uint8Array
        ? Array.from(v, (b) => b.toString(16).padStart(2, '0')).join('')
        : v;
  const stored = (p: ProbeResult): ProbeResult => ({ ...p, rows: p.rows.map((row) => row.map(plain)) });
  return {
    ...e,
    turns: e.turns.map((t) => {
      const out = t.probe ? { ...t, probe: stored(t.probe) } : { ...t };
      if (t.toolCalls) out.toolCalls = t.toolCalls.map((c) => (c.probe ? { ...c, probe: stored(c.probe) } : c));
      return out;
    }),
  };
}

/** The whole episode as one text: every turn and the observation sent after it (what SkyRL's reward reads). */
function episodeText(e: Episode): string {
  return e.turns.map((t) => t.text + (t.observation ?? '')).join('');
}

interface PresetGenerationSpec {
  /** Engine kind: `openai`, `webllm`, `wllama`. */
  engine: string;
  model: ModelRef;
  preset: PolicyPreset;
  sampling: PresetSampling;
}

interface PresetGenerationPorts {
  engine: Engine;
  /** The schema text of a database as the preset renders it (called once per question: cache it). */
  schema(dbId: string): Promise<string>;
  /** A read-only probe on the run's SQL pool (multi-turn presets). */
  probe(dbId: string, sql: string, options: { timeoutMs: number }): Promise<ProbeResult>;
  /** Scores the items of one question (the run's recipe: generationScorer). */
  evaluate(items: EvalItem[], signal: StopSignal): Promise<ItemResult[]>;
  store(samples: SampleRecord[]): void;
  /** Milliseconds, for each turn's and sample's time (hosts: performance.now). */
  now(): number;
}

interface Produced {
  sample: number;
  text: string;
  sql: string;
  extraction: Extraction;
  prompt: ChatMessage[];
  tokensIn: number | null;
  tokensOut: number | null;
  latencyMs: number;
  finishReason: SampleGeneration['finishReason'];
  seed: number | null;
  error?: string;
  episode?: Episode;
}

/** Generates, scores and hands over every sample of `jobs` under the spec's preset. */
export async function runPresetGeneration(
  spec: PresetGenerationSpec,
  config: Pick<RunConfig, 'fence' | 'rewardFormula'>,
  jobs: readonly GenerationJob[],
  ports: PresetGenerationPorts,
  hooks: { signal: StopSignal; concurrency?: number; onSample?: (done: number) => void },
): Promise<GenerationOutcome> {
  const { engine } = ports;
  const { preset, sampling } = spec;
  const { signal } = hooks;
  const formula = runFormula(config);
  const now = () => ports.now();
  const fingerprint = presetFingerprint(preset);
  // Engines that cannot continue a final assistant message get SkyRL's conversation mode.
  const env = preset.multiTurn
    ? presetEnv(preset, engine.capabilities.continueFinal !== true, engine.capabilities.toolRole === true)
    : null;
  let done = 0;

  const single = async (job: GenerationJob, messages: ChatMessage[], s: number): Promise<Produced> => {
    const prompt = preset.prefill ? [...messages, { role: 'assistant' as const, content: preset.prefill }] : messages;
    const params = sampling.paramsOf(s);
    const [c] = await engine.generate({ messages: prompt, questionId: job.question.questionId }, params, { signal });
    const text = preset.prefill + (c?.text ?? '');
    const x = presetExtraction(preset, text, config.fence);
    const out: Produced = {
      sample: s,
      text,
      ...x,
      prompt,
      tokensIn: c?.tokensIn ?? null,
      tokensOut: c?.tokensOut ?? null,
      latencyMs: c?.latencyMs ?? 0,
      finishReason: c?.finishReason ?? 'error',
      seed: params.seed,
    };
    if (!c) out.error = 'the engine returned no sample';
    else if (c.error !== undefined) out.error = c.error;
    return out;
  };

  const episode = async (job: GenerationJob, messages: ChatMessage[], s: number): Promise<Produced> => {
    const params = sampling.paramsOf(s);
    let tokensIn: number | null = null;
    let tokensOut = 0;
    const t0 = now();
    const chat = async (
      turnMessages: readonly ChatMessage[],
      options: { stop: readonly string[]; tools?: readonly unknown[] },
    ): Promise<ChatReply> => {
      const [c] = await engine.generate(
        {
          messages: [...turnMessages],
          questionId: job.question.questionId,
          ...(options.tools ? { tools: options.tools } : {}),
        },
        { ...params, stop: [...options.stop] },
        { signal },
      );
      if (!c || c.finishReason === 'error' || c.finishReason === 'abort')
        throw new WorkbenchError('FAILED', c?.error ?? (c ? 'the turn was stopped' : 'the engine returned no sample'));
      tokensIn ??= c.tokensIn;
      tokensOut += c.tokensOut ?? 0;
      const stoppedBy = c.stopReason ?? (c.finishReason === 'stop' ? inferredStop(c.text, options.stop) : null);
      return {
        text: c.text,
        ...(c.tokensOut !== null ? { tokens: c.tokensOut } : {}),
        stoppedBy,
        finishReason: c.finishReason === 'length' ? 'length' : 'stop',
      };
    };
    const e = await runEpisode(
      { env: env!, dbId: job.question.dbId },
      { chat, probe: (sql, o) => ports.probe(job.question.dbId, sql, o), now },
      messages,
    );
    const out: Produced = {
      sample: s,
      text: episodeText(e),
      sql: e.finalSql ?? '',
      extraction: {
        rule: e.finalSql === null ? 'none' : env!.kind === 'verl-sql' ? 'answer-tag' : 'solution-tag',
        thinkStripped: false,
      },
      prompt: messages,
      tokensIn,
      tokensOut,
      latencyMs: now() - t0,
      finishReason: e.endReason === 'engine-error' ? 'error' : 'stop',
      seed: params.seed,
      episode: e,
    };
    if (e.error !== undefined) out.error = e.error;
    return out;
  };

  const runJob = async (job: GenerationJob): Promise<GenerationOutcome | null> => {
    if (signal.aborted) return { kind: 'cancelled' };
    const q = job.question;
    const schema = await ports.schema(q.dbId);
    const rendered = renderPresetMessages(preset, { question: q.question, evidence: q.evidence }, schema);
    const produced: Produced[] = [];
    for (const s of job.samples) {
      if (signal.aborted) return { kind: 'cancelled' };
      produced.push(env ? await episode(job, rendered.messages, s) : await single(job, rendered.messages, s));
    }
    const items: EvalItem[] = produced.map((p) => ({
      index: job.index,
      questionId: q.questionId,
      dbId: q.dbId,
      difficulty: q.difficulty,
      predSql: p.sql,
      goldSql: job.goldSql,
      extraction: p.extraction,
      sample: p.sample,
      completion: p.text,
    }));
    const results = await ports.evaluate(items, signal);
    if (results.length !== items.length) return { kind: 'cancelled' };
    const records = results.map((r, i) => {
      const p = produced[i]!;
      const rec = toSampleRecord(items[i]!, r, formula);
      const gen: SampleGeneration = {
        prompt: p.prompt,
        templateId: preset.id,
        templateFingerprint: fingerprint,
        fit: {
          limit: null,
          tokens: p.tokensIn ?? 0,
          counter: p.tokensIn === null ? 'chars/4' : 'engine',
          fits: true,
          cut: { sampleRows: [], descriptions: [], tables: [] },
        },
        tokensIn: p.tokensIn,
        tokensOut: p.tokensOut,
        latencyMs: p.latencyMs,
        finishReason: p.finishReason,
        seed: p.seed,
        engine: spec.engine,
        model: spec.model.id,
      };
      if (p.error !== undefined) gen.error = p.error;
      rec.generation = gen;
      if (p.episode) {
        // The preset's own reward: -1 for a bad format, else the run's EX of the final SQL (SkyRL
        // compares the two results as sets, as BIRD's EX does), so no SQL runs twice.
        const e = p.episode;
        if (e.formatValid) e.presetReward = r.ex;
        rec.episode = storedEpisode(e);
      }
      return rec;
    });
    ports.store(records);
    done += records.length;
    hooks.onSample?.(done);
    return null;
  };

  const result = await runJobsConcurrently(jobs, hooks.concurrency ?? 1, runJob);
  return result ?? (signal.aborted ? { kind: 'cancelled' } : { kind: 'done' });
}
