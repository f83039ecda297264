/**
 * Runs on a RaR-style rubric dataset (rar-dataset.ts), pure over the Engine port: each question
 * is asked to the policy (an engine, or completions read from a file), each sample is scored
 * with the question's own rubric by the judge (explicit, implicit and Likert side by side), and
 * every question's samples are handed to `write` as soon as they are scored, so a store can
 * keep them in one transaction per question. Samples whose (index, sample) key is in `done`
 * are neither generated nor scored again: a run resumed after a reload or a closed tab ends
 * with the same samples as one that was never interrupted.
 */
import { sampleKey } from '../eval/constants.ts';
import type { Engine, Prompt, SamplingParams } from '../engine/engine.ts';
import { WorkbenchError } from '../errors.ts';
import { describeValue, isRecord, parseJsonLines } from '../formats/questions.ts';
import type { Judge } from './judge.ts';
import { applyWeighting, type Rubric, type WeightingName } from './model.ts';
import type { RarRow } from './rar-dataset.ts';
import { scoreSample, type Aggregation } from './score.ts';
import type { ExplicitOptions, RubricScores } from './scores.ts';

export interface RarJob {
  row: RarRow;
  sample: number;
  completion: string;
  /** `rule_score` of the line: a rule reward in [0, 1] for rule × judge, or null. */
  rule: number | null;
}

/**
 * Completions JSONL: `{"completion": "..."}` per line, paired with the dataset by `id` (the
 * row's id), else by `index` (0-based row), else by position (then the counts must match).
 * Several completions of one row are its samples 0, 1, ... in file order. An optional
 * `"rule_score"` in [0, 1] is the sample's rule reward (rule × judge).
 */
export function pairCompletions(text: string, fileName: string, rows: readonly RarRow[]): RarJob[] {
  const lines = parseJsonLines(text, fileName);
  if (lines.length === 0)
    throw new WorkbenchError('BAD_FORMAT', 'no completions: one JSON object per line, {"completion": "..."}', fileName);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const samples = new Map<RarRow, number>();
  const keyed = lines.some(({ value }) => isRecord(value) && (value.id !== undefined || value.index !== undefined));
  if (!keyed && lines.length !== rows.length) {
    throw new WorkbenchError(
      'MISMATCH',
      `${lines.length} completions without "id" or "index" for ${rows.length} dataset rows; pair them by position only when the counts match, or give each line an "id" or "index"`,
      fileName,
    );
  }
  return lines.map(({ value, line }, i) => {
    const where = `${fileName}:${line}`;
    if (!isRecord(value) || typeof value.completion !== 'string') {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `expected {"completion": "..."} with a string completion, found ${isRecord(value) ? describeValue(value.completion) : describeValue(value)}`,
        where,
      );
    }
    let row: RarRow | undefined;
    if (value.id !== undefined) {
      row = byId.get(String(value.id));
      if (!row) throw new WorkbenchError('MISMATCH', `no dataset row has id ${JSON.stringify(value.id)}`, where);
    } else if (value.index !== undefined) {
      if (typeof value.index !== 'number' || !Number.isInteger(value.index))
        throw new WorkbenchError(
          'BAD_FORMAT',
          `"index" must be an integer, found ${describeValue(value.index)}`,
          where,
        );
      row = rows[value.index];
      if (!row)
        throw new WorkbenchError(
          'MISMATCH',
          `index ${value.index} is beyond the dataset's ${rows.length} rows (0-based)`,
          where,
        );
    } else if (keyed) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        'other lines name their row with "id" or "index"; this one must too',
        where,
      );
    } else row = rows[i]!;
    const rule = value.rule_score ?? null;
    if (rule !== null && (typeof rule !== 'number' || !Number.isFinite(rule) || rule < 0 || rule > 1)) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `"rule_score" must be a number in [0, 1] (the rule reward, e.g. 1 for a passed check), found ${describeValue(rule)}`,
        where,
      );
    }
    const sample = samples.get(row) ?? 0;
    samples.set(row, sample + 1);
    return { row, sample, completion: value.completion, rule };
  });
}

/** The system prompt of the built-in RaR policy prompt, versioned like the judge prompts. */
export const RAR_POLICY_PROMPT_VERSION = 'rar-answer-v1';
export const RAR_POLICY_SYSTEM =
  'You are a careful expert. Answer the question accurately and completely, in plain prose, with the key facts first. Do not mention any grading rubric.';

function rarPolicyPrompt(row: Pick<RarRow, 'question'>): Prompt {
  return {
    messages: [
      { role: 'system', content: RAR_POLICY_SYSTEM },
      { role: 'user', content: row.question },
    ],
  };
}

/** How a sample was produced by an engine (absent for replayed completions). */
interface RarGeneration {
  tokensIn: number | null;
  tokensOut: number | null;
  latencyMs: number;
  finishReason: string;
  seed: number | null;
}

export interface RarSample {
  /** Row position in the dataset. */
  index: number;
  sample: number;
  rowId: string;
  completion: string;
  generation: RarGeneration | null;
  scores: RubricScores;
}

type RarPolicy =
  | { kind: 'engine'; engine: Engine; params: SamplingParams }
  /** Completions read from a file (pairCompletions), by row index then sample. */
  | { kind: 'replay'; completions: ReadonlyMap<number, readonly string[]> };

export interface RarRunOptions {
  rows: readonly RarRow[];
  /** Samples per question (a replay takes the file's samples, at most this many). */
  samples: number;
  policy: RarPolicy;
  judge: Judge | null;
  aggregations: readonly Aggregation[];
  explicit: ExplicitOptions;
  /** Re-weights every row's rubric; `as-given` keeps the dataset's weights. */
  weighting: WeightingName | 'as-given';
  /** Keys `index/sample` already stored. */
  done: ReadonlySet<string>;
  write: (samples: RarSample[]) => Promise<void>;
  signal?: { aborted: boolean };
  onProgress?: (p: { done: number; total: number }) => void;
}

export const rarKey = (index: number, sample: number): string => sampleKey({ index, sample });

export function replayCompletions(jobs: readonly RarJob[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const j of jobs) {
    const list = out.get(j.row.index) ?? [];
    list[j.sample] = j.completion;
    out.set(j.row.index, list);
  }
  return out;
}

/** The jobs' rule rewards (`rule_score`) by row index then sample, or null when no line gives one. */
export function replayRules(jobs: readonly RarJob[]): Map<number, Array<number | null>> | null {
  if (!jobs.some((j) => j.rule !== null)) return null;
  const out = new Map<number, Array<number | null>>();
  for (const j of jobs) {
    const list = out.get(j.row.index) ?? [];
    list[j.sample] = j.rule;
    out.set(j.row.index, list);
  }
  return out;
}

/** The (index, sample) keys a run plans: every row times `samples` (a replay: what the file has). */
function plannedKeys(rows: readonly RarRow[], samples: number, policy: RarPolicy): [number, number][] {
  const out: [number, number][] = [];
  for (const row of rows) {
    const n = policy.kind === 'replay' ? Math.min(samples, policy.completions.get(row.index)?.length ?? 0) : samples;
    for (let s = 0; s < n; s++) out.push([row.index, s]);
  }
  return out;
}

export async function runRar(o: RarRunOptions): Promise<'done' | 'cancelled'> {
  const planned = plannedKeys(o.rows, o.samples, o.policy);
  const total = planned.length;
  let done = 0;
  const missingByRow = new Map<number, number[]>();
  for (const [i, s] of planned) {
    if (o.done.has(rarKey(i, s))) done += 1;
    else {
      const list = missingByRow.get(i);
      if (list) list.push(s);
      else missingByRow.set(i, [s]);
    }
  }
  o.onProgress?.({ done, total });
  for (const row of o.rows) {
    // A question's samples are written together, so the missing ones are all of them or none:
    // consecutive, and seed + first missing gives each sample the seed it would have had.
    const missing = missingByRow.get(row.index) ?? [];
    if (missing.length === 0) continue;
    if (o.signal?.aborted) return 'cancelled';
    const rubric: Rubric = o.weighting === 'as-given' ? row.rubric : applyWeighting(row.rubric, o.weighting);
    let produced: { completion: string; generation: RarGeneration | null }[];
    if (o.policy.kind === 'replay') {
      const list = o.policy.completions.get(row.index) ?? [];
      produced = missing.map((s) => ({ completion: list[s]!, generation: null }));
    } else {
      // Samples of a question are generated together; a seeded engine gets each sample its own seed.
      const { engine, params } = o.policy;
      const completions = await engine.generate(rarPolicyPrompt(row), {
        ...params,
        n: missing.length,
        seed: params.seed === null ? null : params.seed + missing[0]!,
      });
      if (o.signal?.aborted || completions.some((c) => c.finishReason === 'abort')) return 'cancelled';
      produced = completions.map((c) => ({
        completion: c.text,
        generation: {
          tokensIn: c.tokensIn,
          tokensOut: c.tokensOut,
          latencyMs: c.latencyMs,
          finishReason: c.finishReason,
          seed: c.seed,
        },
      }));
      const failed = completions.find((c) => c.finishReason === 'error');
      if (failed)
        throw new WorkbenchError(
          'FAILED',
          `the policy failed on question ${JSON.stringify(row.id)}: ${failed.error ?? 'unknown error'}`,
        );
    }
    const out: RarSample[] = [];
    for (const [k, s] of missing.entries()) {
      if (o.signal?.aborted) return 'cancelled';
      const p = produced[k]!;
      const scores = await scoreSample(
        rubric,
        { question: row.question, reference: row.referenceAnswer, completion: p.completion },
        {
          aggregations: o.aggregations,
          explicit: o.explicit,
          judge: o.judge,
        },
      );
      out.push({
        index: row.index,
        sample: s,
        rowId: row.id,
        completion: p.completion,
        generation: p.generation,
        scores,
      });
    }
    await o.write(out);
    done += out.length;
    o.onProgress?.({ done, total });
  }
  return 'done';
}
