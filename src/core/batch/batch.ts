/**
 * Generation through batch files, the export half: a generation plan (questions x samples)
 * written as an OpenAI-format batch input JSONL, the file vLLM's
 * `python -m vllm.entrypoints.openai.run_batch`, SGLang and OpenAI's Batch API read. One line
 * per sample:
 *
 *   {"custom_id": "q12-s3", "method": "POST", "url": "/v1/chat/completions",
 *    "body": {"model", "messages", "temperature", "top_p", "max_tokens", "seed", "n": 1, ...}}
 *
 * `custom_id` is `q<gold position>-s<sample>`; sample s asks for seed `seed + s`, the same
 * per-sample seed an engine run uses, so a re-run of a line asks exactly the same thing.
 * Prompts are built by the one prompt builder (build-prompt.ts) with the plan's template,
 * sample rows, descriptions and context window; a prompt that does not fit is left out of the
 * file and listed (the import scores it as the generation loop does: an error sample).
 *
 * The plan itself (what the lines were made from) is a small JSON file next to the JSONL; the
 * import (batch-output.ts, batch-engine.ts) rebuilds the same prompts from it and matches the
 * output lines by `custom_id`.
 *
 * A plan made under a policy preset (src/core/prompt/presets.ts; plan version 2) records the
 * preset's id, fingerprint and whole content: its lines carry the preset's messages (schema as
 * the preset renders it), each sample's sampling (the preset's, or its "1 greedy + k sampled"),
 * stop strings, vLLM's `stop_token_ids`, and an assistant prefill continued through vLLM's
 * `continue_final_message`; the import scores them with the preset's extraction rule. A
 * multi-turn preset cannot be a batch: each of its turns needs the database's answer to a probe.
 */
import { WorkbenchError } from '../errors.ts';
import type { ChatMessage } from '../engine/engine.ts';
import { validateSampling } from '../engine/sampling.ts';
import { isEngineError } from '../engine/engine-error.ts';
import { buildPrompt, type DatabaseContext } from '../prompt/build-prompt.ts';
import { parseJsonText } from '../formats/questions.ts';
import type { Question } from '../types.ts';
import type { GenerationSpec } from '../run/generation.ts';
import type { FileRef } from '../run/types.ts';
import { sha256Hex } from '../util/sha256.ts';
import { JsonReader } from '../formats/validate.ts';
import { presetFingerprint, renderPresetMessages, type PolicyPreset } from '../prompt/presets.ts';
import type { PromptTemplate } from '../prompt/templates.ts';
import { presetSampling, type PresetSampling } from '../run/preset-generation.ts';
import { readRunPreset } from '../runfile/read-episode.ts';

const BATCH_PLAN_FORMAT = 'rlvr-workbench-batch-plan';
const BATCH_PLAN_VERSION = 1;
/** The version of a plan made under a policy preset (it has `preset`). */
const BATCH_PLAN_PRESET_VERSION = 2;
/** The engine kind of runs imported from batch output. */
export const BATCH_ENGINE = 'batch';
const BATCH_URL = '/v1/chat/completions';

/** The policy preset of a plan: what the run header records, and the sampling choice. */
interface BatchPreset {
  id: string;
  fingerprint: string;
  content: PolicyPreset;
  /** Samples follow the preset's published "k greedy + m sampled" setting. */
  selfConsistency: boolean;
}

export interface BatchPlan {
  format: typeof BATCH_PLAN_FORMAT;
  version: typeof BATCH_PLAN_VERSION | typeof BATCH_PLAN_PRESET_VERSION;
  createdAt: string;
  /** `engine` is `batch`; `model.id` is the `model` of every request line. */
  spec: GenerationSpec;
  /** Context window the prompts were fitted to, or null (never cut). */
  contextWindow: number | null;
  dataset: { name: string; questions: FileRef | null; gold: FileRef | null };
  /** Gold positions of the plan's questions, ascending. */
  indices: number[];
  /**
   * sha256 of each exported prompt (JSON of its messages) by gold position, filled by
   * `withPromptHashes`: the import checks that it rebuilds the very prompts that were sent.
   */
  prompts?: Record<string, string>;
  /**
   * The policy preset the requests were made under (version 2): it, not `spec.template` (its
   * stand-in, for the run's name), gives the messages, sampling, stops, prefill and extraction.
   */
  preset?: BatchPreset;
}

/** The fingerprint of a prompt as `BatchPlan.prompts` keeps it. */
export function promptHash(messages: readonly ChatMessage[]): string {
  return sha256Hex(JSON.stringify(messages.map((m) => [m.role, m.content])));
}

/** The plan with the fingerprints of the prompts an export built. */
export function withPromptHashes(plan: BatchPlan, exported: Pick<BatchExport, 'promptHashes'>): BatchPlan {
  return { ...plan, prompts: { ...plan.prompts, ...exported.promptHashes } };
}

interface BatchRequestBody {
  model: string;
  messages: ChatMessage[];
  temperature: number;
  top_p: number;
  max_tokens: number;
  seed?: number;
  n: 1;
  stop?: string[];
  /** vLLM's stop token ids (a preset's, e.g. Qwen's <|im_end|>). */
  stop_token_ids?: number[];
  /** A preset's prefill: the last message is the assistant's, continued (vLLM's chat template options). */
  continue_final_message?: true;
  add_generation_prompt?: false;
  logprobs?: boolean;
}

export interface BatchRequestLine {
  custom_id: string;
  method: 'POST';
  url: typeof BATCH_URL;
  body: BatchRequestBody;
}

export function customIdOf(index: number, sample: number): string {
  return `q${index}-s${sample}`;
}

/** (index, sample) of a custom_id written by `customIdOf`, or null for any other text. */
export function parseCustomId(id: string): { index: number; sample: number } | null {
  const m = /^q(\d+)-s(\d+)$/.exec(id);
  return m ? { index: Number(m[1]), sample: Number(m[2]) } : null;
}

/** Every custom_id the plan asks for, in (index, sample) order. */
export function planCustomIds(plan: Pick<BatchPlan, 'indices' | 'spec'>): string[] {
  const ids: string[] = [];
  for (const index of plan.indices) for (let s = 0; s < plan.spec.params.n; s++) ids.push(customIdOf(index, s));
  return ids;
}

/**
 * A plan over `indices` of `questions`. The sampling seed is required: it is what makes the
 * lines' per-sample seeds, and the import finds a sample by its seed.
 */
export function makeBatchPlan(input: {
  spec: Omit<GenerationSpec, 'engine'>;
  contextWindow: number | null;
  dataset: BatchPlan['dataset'];
  indices: readonly number[];
  questions: readonly Question[];
  now?: Date;
  preset?: BatchPreset;
}): BatchPlan {
  const spec: GenerationSpec = { ...input.spec, engine: BATCH_ENGINE };
  if (input.preset) checkBatchPreset(input.preset.content, 'the batch plan');
  checkSpec(spec, 'the batch plan');
  const indices = [...new Set(input.indices)].sort((a, b) => a - b);
  if (indices.length === 0)
    throw new WorkbenchError(
      'BAD_OPTION',
      'the batch plan has no question: choose questions whose database is available',
    );
  const seen = new Map<number, number>();
  for (const i of indices) {
    const q = input.questions[i];
    if (!q)
      throw new WorkbenchError(
        'BAD_OPTION',
        `the batch plan names question position ${i}, but the dataset has ${input.questions.length} questions`,
      );
    const other = seen.get(q.questionId);
    // The import finds a prompt's question by its question_id: two positions with one id would be ambiguous.
    if (other !== undefined)
      throw new WorkbenchError(
        'BAD_FORMAT',
        `questions at positions ${other} and ${i} share question_id ${q.questionId}: a batch plan needs unique ids`,
        input.dataset.name,
      );
    seen.set(q.questionId, i);
  }
  return {
    format: BATCH_PLAN_FORMAT,
    version: input.preset ? BATCH_PLAN_PRESET_VERSION : BATCH_PLAN_VERSION,
    createdAt: (input.now ?? new Date()).toISOString(),
    spec,
    contextWindow: input.preset ? null : input.contextWindow,
    dataset: input.dataset,
    indices,
    ...(input.preset ? { preset: input.preset } : {}),
  };
}

/** Refuses a preset that cannot be an offline batch (a multi-turn one), naming it and what to do. */
function checkBatchPreset(preset: PolicyPreset, where: string): void {
  if (preset.multiTurn)
    throw new WorkbenchError(
      'BAD_OPTION',
      `preset ${preset.id} is multi-turn: each of its turns needs the database's answer to the policy's probe, ` +
        `so it cannot be sent as an offline batch; run it against a server with \`generate --endpoint URL --model NAME --preset ${preset.id}\``,
      where,
    );
}

/**
 * What a batch plan records of a preset, and the spec its requests are made with: the preset's
 * sampling (or its self-consistency setting) for `n` samples from `seed`, its stops; `template`
 * is a stand-in naming the preset (the run's name and source), never used to build a prompt.
 */
export function presetBatchSpec(
  preset: PolicyPreset,
  choice: { n?: number; selfConsistency: boolean; seed: number; logprobs: boolean },
): { preset: BatchPreset; template: PromptTemplate; params: GenerationSpec['params'] } {
  checkBatchPreset(preset, '--preset');
  const sampling = presetSampling(preset, {
    ...(choice.n !== undefined ? { n: choice.n } : {}),
    selfConsistency: choice.selfConsistency,
    seed: choice.seed,
  });
  const first = sampling.paramsOf(0);
  const user = preset.messages.find((m) => m.role === 'user')?.content ?? '';
  const system = preset.messages.find((m) => m.role === 'system')?.content ?? null;
  return {
    preset: {
      id: preset.id,
      fingerprint: presetFingerprint(preset),
      content: JSON.parse(JSON.stringify(preset)) as PolicyPreset,
      selfConsistency: choice.selfConsistency,
    },
    template: {
      id: preset.id,
      title: preset.title,
      description: `policy preset ${preset.id}: the plan's preset gives the messages`,
      system,
      user,
      sampleRows: 0,
      descriptions: false,
      stop: [...preset.stop],
    },
    params: { ...first, n: sampling.n, seed: choice.seed, logprobs: choice.logprobs },
  };
}

/** The per-sample sampling of a preset plan: the same at export and import. */
export function planPresetSampling(plan: Pick<BatchPlan, 'spec' | 'preset'>): PresetSampling {
  const bp = plan.preset;
  if (!bp) throw new WorkbenchError('INTERNAL', 'the batch plan has no preset');
  const p = plan.spec.params;
  const s = presetSampling(bp.content, { n: p.n, selfConsistency: bp.selfConsistency, seed: p.seed });
  return { n: s.n, paramsOf: (sample) => ({ ...s.paramsOf(sample), logprobs: p.logprobs }) };
}

/** The messages a preset plan sends for a question: the preset's, then its prefill as the assistant's. */
function presetPlanMessages(preset: PolicyPreset, q: Question, schema: string): ChatMessage[] {
  const { messages, prefill } = renderPresetMessages(preset, { question: q.question, evidence: q.evidence }, schema);
  return prefill ? [...messages, { role: 'assistant', content: prefill }] : messages;
}

function checkSpec(spec: GenerationSpec, where: string): void {
  try {
    validateSampling(spec.params);
  } catch (err) {
    throw new WorkbenchError('BAD_OPTION', isEngineError(err) ? err.message : String(err), where);
  }
  if (spec.params.seed === null)
    throw new WorkbenchError('BAD_OPTION', 'a batch plan needs an integer seed (sample s asks for seed + s)', where);
  if (!spec.model.id.trim())
    throw new WorkbenchError(
      'BAD_OPTION',
      'a batch plan needs the model name the server serves (the "model" of every line)',
      where,
    );
}

export interface BatchExport {
  /** The request lines; empty when they were handed to `emit` one by one instead. */
  lines: BatchRequestLine[];
  /** Request lines made (kept in `lines` or emitted). */
  count: number;
  /** Samples left out because their prompt does not fit the plan's context window. */
  tooLong: Array<{ customId: string; tokens: number; limit: number | null }>;
  /** `promptHash` of each question's prompt, by gold position. */
  promptHashes: Record<string, string>;
}

/**
 * The request lines of `plan` (only the custom_ids in `only`, when given: the smaller batch of
 * the missing lines). `database` loads a database's schema context (cache it per database).
 */
export async function batchRequests(
  plan: BatchPlan,
  questions: readonly Question[],
  database: (dbId: string) => Promise<DatabaseContext>,
  only?: ReadonlySet<string>,
  /** Receives each line as it is made (a file written as a stream): nothing is kept, whatever --n is. */
  emit?: (line: BatchRequestLine) => Promise<void> | void,
): Promise<BatchExport> {
  if (plan.preset)
    throw new WorkbenchError(
      'BAD_OPTION',
      `the plan was made under preset ${plan.preset.id}: its requests come from the preset (presetBatchRequests)`,
      plan.dataset.name,
    );
  const { spec } = plan;
  const p = spec.params;
  const lines: BatchRequestLine[] = [];
  let count = 0;
  const tooLong: BatchExport['tooLong'] = [];
  const promptHashes: Record<string, string> = {};
  for (const index of plan.indices) {
    const wanted = Array.from({ length: p.n }, (_, s) => s).filter((s) => !only || only.has(customIdOf(index, s)));
    if (wanted.length === 0) continue;
    const q = questions[index];
    if (!q)
      throw new WorkbenchError(
        'MISMATCH',
        `the plan names question position ${index}, but the questions file has ${questions.length}`,
        plan.dataset.name,
      );
    // The same call as the generation loop makes (generation.ts), so the import rebuilds the same prompt.
    const built = await buildPrompt(spec.template, await database(q.dbId), q, {
      sampleRows: spec.sampleRows,
      descriptions: spec.descriptions,
      budget: { contextWindow: plan.contextWindow, reserve: p.maxTokens },
    });
    promptHashes[String(index)] = promptHash(built.prompt.messages);
    for (const s of wanted) {
      const customId = customIdOf(index, s);
      if (!built.fit.fits) {
        tooLong.push({ customId, tokens: built.fit.tokens, limit: built.fit.limit });
        continue;
      }
      const body: BatchRequestBody = {
        model: spec.model.id,
        messages: built.prompt.messages,
        temperature: p.temperature,
        top_p: p.topP,
        max_tokens: p.maxTokens,
        seed: p.seed! + s,
        n: 1,
      };
      // The stop strings the generation loop passes (the run's, which include the template's when the app adds them).
      if (p.stop.length > 0) body.stop = [...p.stop];
      if (p.logprobs) body.logprobs = true;
      const line: BatchRequestLine = { custom_id: customId, method: 'POST', url: BATCH_URL, body };
      count++;
      if (emit) await emit(line);
      else lines.push(line);
    }
  }
  return { lines, count, tooLong, promptHashes };
}

/**
 * The request lines of a plan made under a policy preset (only the custom_ids in `only`, when
 * given). `schema` gives a database's schema text as the preset renders it (cache it per
 * database). Each line: the preset's messages (and prefill), the sample's sampling, the preset's
 * stop strings and stop token ids.
 */
export async function presetBatchRequests(
  plan: BatchPlan,
  questions: readonly Question[],
  schema: (dbId: string) => Promise<string>,
  only?: ReadonlySet<string>,
  emit?: (line: BatchRequestLine) => Promise<void> | void,
): Promise<BatchExport> {
  const bp = plan.preset;
  if (!bp) throw new WorkbenchError('INTERNAL', 'presetBatchRequests needs a plan made under a preset');
  checkBatchPreset(bp.content, plan.dataset.name);
  const sampling = planPresetSampling(plan);
  const lines: BatchRequestLine[] = [];
  let count = 0;
  const promptHashes: Record<string, string> = {};
  for (const index of plan.indices) {
    const wanted = Array.from({ length: sampling.n }, (_, s) => s).filter(
      (s) => !only || only.has(customIdOf(index, s)),
    );
    if (wanted.length === 0) continue;
    const q = questions[index];
    if (!q)
      throw new WorkbenchError(
        'MISMATCH',
        `the plan names question position ${index}, but the questions file has ${questions.length}`,
        plan.dataset.name,
      );
    const messages = presetPlanMessages(bp.content, q, await schema(q.dbId));
    promptHashes[String(index)] = promptHash(messages);
    for (const s of wanted) {
      const p = sampling.paramsOf(s);
      const body: BatchRequestBody = {
        model: plan.spec.model.id,
        messages,
        temperature: p.temperature,
        top_p: p.topP,
        max_tokens: p.maxTokens,
        seed: p.seed!,
        n: 1,
      };
      if (p.stop.length > 0) body.stop = [...p.stop];
      if (p.stopTokenIds && p.stopTokenIds.length > 0) body.stop_token_ids = [...p.stopTokenIds];
      // The same fields the OpenAI-compatible engine sends for a last assistant message (openai-protocol.ts).
      if (messages.at(-1)?.role === 'assistant') {
        body.continue_final_message = true;
        body.add_generation_prompt = false;
      }
      if (p.logprobs) body.logprobs = true;
      const line: BatchRequestLine = { custom_id: customIdOf(index, s), method: 'POST', url: BATCH_URL, body };
      count++;
      if (emit) await emit(line);
      else lines.push(line);
    }
  }
  return { lines, count, tooLong: [], promptHashes };
}

/** JSON Lines text, one request per line, newline-terminated. */
export function batchJsonl(lines: readonly BatchRequestLine[]): string {
  return lines.map(batchLineText).join('');
}

/** One request line of the JSONL, with its newline. */
export function batchLineText(line: BatchRequestLine): string {
  return JSON.stringify(line) + '\n';
}

export function batchPlanJson(plan: BatchPlan): string {
  return JSON.stringify(plan, null, 1) + '\n';
}

function fileRefOrNull(r: JsonReader, v: unknown, path: string): FileRef | null {
  if (v === null) return null;
  const o = r.obj(v, path);
  return { name: r.str(o, 'name', path), sha256: r.str(o, 'sha256', path), bytes: r.int(o, 'bytes', path) };
}

/** Reads a plan file written by `batchPlanJson`, checking every field the import uses. */
export function parseBatchPlan(text: string, fileName: string): BatchPlan {
  const r = new JsonReader(fileName);
  const o = r.obj(parseJsonText(text, fileName), 'plan');
  if (o.format !== BATCH_PLAN_FORMAT)
    r.fail(
      'format',
      `"${BATCH_PLAN_FORMAT}" (a plan written by \`batch export\` or the Generate screen, not the .jsonl)`,
      o.format,
    );
  if (o.version !== BATCH_PLAN_VERSION && o.version !== BATCH_PLAN_PRESET_VERSION)
    r.fail('version', `${BATCH_PLAN_VERSION} or ${BATCH_PLAN_PRESET_VERSION}`, o.version);
  const version = o.version as BatchPlan['version'];
  const s = r.obj(o.spec, 'spec');
  const m = r.obj(s.model, 'spec.model');
  const t = r.obj(s.template, 'spec.template');
  const p = r.obj(s.params, 'spec.params');
  const stops = (v: unknown, path: string) =>
    r.arr(v, path).map((x, i) => (typeof x === 'string' ? x : r.fail(`${path}[${i}]`, 'a string', x)));
  const spec: GenerationSpec = {
    engine: r.oneOf(s, 'engine', 'spec', [BATCH_ENGINE] as const),
    model: { id: r.str(m, 'id', 'spec.model') },
    template: {
      id: r.str(t, 'id', 'spec.template'),
      title: r.str(t, 'title', 'spec.template'),
      description: r.str(t, 'description', 'spec.template'),
      system: r.nullable(t, 'system', 'spec.template', r.str),
      user: r.str(t, 'user', 'spec.template'),
      sampleRows: r.int(t, 'sampleRows', 'spec.template'),
      descriptions: r.bool(t, 'descriptions', 'spec.template'),
      stop: stops(t.stop, 'spec.template.stop'),
    },
    params: {
      n: r.int(p, 'n', 'spec.params', 1),
      temperature: r.num(p, 'temperature', 'spec.params'),
      topP: r.num(p, 'topP', 'spec.params'),
      maxTokens: r.int(p, 'maxTokens', 'spec.params', 1),
      seed: r.int(p, 'seed', 'spec.params'),
      stop: stops(p.stop, 'spec.params.stop'),
      logprobs: r.bool(p, 'logprobs', 'spec.params'),
    },
  };
  if (p.stopTokenIds !== undefined)
    spec.params.stopTokenIds = r
      .arr(p.stopTokenIds, 'spec.params.stopTokenIds')
      .map((x, i) =>
        Number.isSafeInteger(x) && (x as number) >= 0
          ? (x as number)
          : r.fail(`spec.params.stopTokenIds[${i}]`, 'an integer >= 0', x),
      );
  let preset: BatchPreset | undefined;
  if (version === BATCH_PLAN_PRESET_VERSION) {
    const b = r.obj(o.preset, 'preset');
    const recorded = readRunPreset(r, b, 'preset');
    preset = { ...recorded, selfConsistency: r.bool(b, 'selfConsistency', 'preset') };
    checkBatchPreset(preset.content, fileName);
  } else if (o.preset !== undefined)
    r.fail('version', `${BATCH_PLAN_PRESET_VERSION} (the plan has a preset)`, o.version);
  if (s.sampleRows !== undefined) spec.sampleRows = r.int(s, 'sampleRows', 'spec');
  if (s.descriptions !== undefined) spec.descriptions = r.bool(s, 'descriptions', 'spec');
  checkSpec(spec, fileName);
  const d = r.obj(o.dataset, 'dataset');
  const firstAt = new Map<number, number>();
  const indices = r.arr(o.indices, 'indices').map((v, i) => {
    if (!Number.isSafeInteger(v) || (v as number) < 0) return r.fail(`indices[${i}]`, 'an integer >= 0', v);
    const index = v as number;
    const first = firstAt.get(index);
    // A repeated index would ask for the same custom_ids twice and score each answer twice.
    if (first !== undefined)
      return r.fail(`indices[${i}]`, `a question index not listed before (indices[${first}])`, v);
    firstAt.set(index, i);
    return index;
  });
  return {
    format: BATCH_PLAN_FORMAT,
    version,
    createdAt: r.str(o, 'createdAt', 'plan'),
    spec,
    contextWindow: r.nullable(o, 'contextWindow', 'plan', (oo, k, path) => r.int(oo, k, path, 1)),
    dataset: {
      name: r.str(d, 'name', 'dataset'),
      questions: fileRefOrNull(r, d.questions, 'dataset.questions'),
      gold: fileRefOrNull(r, d.gold, 'dataset.gold'),
    },
    indices,
    ...(o.prompts === undefined ? {} : { prompts: promptsOf(r, o.prompts) }),
    ...(preset ? { preset } : {}),
  };
}

/**
 * Refuses a plan that asks for questions the dataset does not have (a plan exported from a longer
 * dataset, or edited by hand), naming the first such index, before anything is scored.
 */
export function checkPlanFitsDataset(plan: Pick<BatchPlan, 'indices'>, questionCount: number, planName: string): void {
  const beyond = plan.indices.filter((i) => i >= questionCount);
  if (beyond.length === 0) return;
  throw new WorkbenchError(
    'MISMATCH',
    `asks for question index ${beyond[0]}${beyond.length > 1 ? ` (and ${beyond.length - 1} more beyond the dataset)` : ''}, but the dataset has ${questionCount} questions (indices 0 to ${questionCount - 1}): use the plan exported from this dataset`,
    planName,
  );
}

function promptsOf(r: JsonReader, v: unknown): Record<string, string> {
  const o = r.obj(v, 'prompts');
  const out: Record<string, string> = {};
  for (const k of Object.keys(o)) out[k] = r.str(o, k, 'prompts');
  return out;
}
