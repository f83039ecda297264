/**
 * Completions as RL trainers and eval harnesses dump them, turned into the workbench's JSONL
 * predictions records (`{question_id, completions}`), one set per training step. The fields
 * read are those the projects write (docs/formats.md gives each with its source):
 * - verl: validation generations, `<validation_data_dir>/<step>.jsonl`, one line per sample:
 *   `input` (prompt text), `output` (response text), `gts` (ground truth, newer versions),
 *   `score`, `step`, plus the reward function's extra fields;
 * - lm-evaluation-harness `--log_samples`: `samples_<task>_<date>.jsonl`, one line per document
 *   (and filter): `doc_id`, `doc` (the dataset row), `target`, `arguments`, `resps` (raw
 *   generations, one list per request), `filtered_resps`, `filter`, metric values;
 * - Inspect eval logs: EvalSample objects (`id`, `epoch`, `input`, `target`, `output.choices[0]
 *   .message.content`, `metadata`, `scores`), from a `.json` log's `samples` or a `.eval` zip's
 *   `samples/*.json`;
 * - prime-rl eval rollouts: `<output_dir>/rollouts/step_<N>/eval_rollouts.jsonl`, one verifiers
 *   `RolloutOutput` per line (`example_id`, `prompt`, `completion` as chat messages or text,
 *   `answer`, `info`, `reward`); the step is the folder's;
 * - SkyRL eval dumps: `dumped_evals/global_step_<N>_evals/<data_source>.jsonl` (`input_prompt`,
 *   `output_response`: for the SQL env the whole multi-turn episode, `score`, `env_extras`);
 * - TRL GRPO completions: `completions/completions_<step:05d>.parquet` (`step`, `prompt`,
 *   `completion`, one column per reward function, `advantage`);
 * - prime-rl traces: `rollouts/step_<N>/<kind>/<subset>/traces.jsonl` (verifiers v1 episodes).
 * Multi-turn completions (SkyRL, verl tool episodes, prime-rl traces) keep their turns, and the
 * SkyRL / verl ones are scored on the SQL the trainer's own rule takes (multi-turn-dump.ts).
 * Each row is mapped to a question by, in order: a question id it carries; the question's text
 * (given as such, or found in the prompt; the longest match wins, ties broken by the gold SQL);
 * its ground truth equal to one question's gold SQL. Rows matched by none are listed.
 */
import { WorkbenchError } from '../errors.ts';
import { extractSql } from '../sql/extract-sql.ts';
import type { Question } from '../types.ts';
import { describeValue, isRecord } from './questions.ts';
import type { SourceRecord } from './records.ts';
import {
  chatTurns,
  isSkyrlEpisode,
  isVerlToolEpisode,
  skyrlEpisode,
  turnStats,
  verlToolEpisode,
  type DumpTurn,
} from './multi-turn-dump.ts';
import type { DumpEnd } from './replay-episode.ts';

export type HarnessFormat = 'verl' | 'lm-eval' | 'inspect' | 'prime-rl' | 'skyrl' | 'trl' | 'prime-rl-traces';
export const HARNESS_FORMATS: readonly HarnessFormat[] = [
  'verl',
  'lm-eval',
  'inspect',
  'prime-rl',
  'skyrl',
  'trl',
  'prime-rl-traces',
];

export interface HarnessRow {
  where: string;
  /** The training step (verl); null for formats whose rows carry none (the step is then the file's or folder's). */
  step: number | null;
  completions: string[];
  questionId?: number;
  /** The question's own text, when the row gives it as a field. */
  questionText?: string;
  /** The whole prompt, searched for a question's text. */
  prompt?: string;
  /** Ground truth / target, compared with the gold SQL. */
  target?: string;
  /** The trainer's or harness's own score of the row, when it gives one (reported beside ours). */
  score?: number;
  /**
   * Per completion, the SQL the trainer's own rule takes from it (multi-turn dumps: SkyRL's
   * `<solution>`, the verl tutorial's `<answer>`); null where that rule finds none (scored as no
   * SQL). Absent: the completion goes through the extraction rules.
   */
  sqls?: Array<string | null>;
  /** Per completion, the episode's turns (multi-turn dumps); absent for single-turn rows. */
  turns?: DumpTurn[][];
  /** How the row's episode ended, as the dump says (SkyRL's `stop_reason` and turn limit, a trace's `stop_condition`). */
  end?: DumpEnd;
  /** The trainer's reward columns for the row (TRL: one per reward function and `advantage`; prime-rl traces: each reward), kept beside our verdict. */
  rewards?: Record<string, number | null>;
}

type MappingRule = 'question_id' | 'question text' | 'gold SQL';

export interface HarnessRun {
  step: number | null;
  /** Predictions records in the JSONL format, ready for predictionsFromRecords / planReplay. */
  records: SourceRecord[];
  rows: number;
  byRule: Record<MappingRule, number>;
  unmatched: Array<{ where: string; reason: string }>;
  /** Mean of the rows' own scores (verl `score`, the harness's first metric), when they carry one. */
  ownScore: number | null;
  /** Per question id, the own score of each of its completions in sample order (null where its row had none). */
  sampleScores: Map<number, Array<number | null>>;
  /** Per question id, the trainer's reward columns of each of its completions in sample order (null where its row had none). */
  sampleRewards: Map<number, Array<Record<string, number | null> | null>>;
  /** Per question id, the turns of each of its completions in sample order (null for a single-turn completion). */
  sampleTurns: Map<number, Array<DumpTurn[] | null>>;
  /** Per question id, how each completion's episode ended as the dump says (null where it says nothing). */
  sampleEnds: Map<number, Array<DumpEnd | null>>;
  /** Summary of the run's multi-turn episodes (turns, probes, episodes without a final SQL); null when none. */
  turnSummary: string | null;
}

/** Which format a first record looks like, or null. */
export function detectHarnessFormat(first: unknown): HarnessFormat | null {
  if (!isRecord(first)) return null;
  if ('input' in first && 'output' in first && 'step' in first) return 'verl';
  if ('example_id' in first && 'completion' in first && 'reward' in first) return 'prime-rl';
  if ('input_prompt' in first && 'output_response' in first) return 'skyrl';
  if ('prompt' in first && 'completion' in first && 'advantage' in first && 'step' in first) return 'trl';
  if ('traces' in first && 'task' in first) return 'prime-rl-traces';
  if ('doc_id' in first && 'resps' in first) return 'lm-eval';
  if (('samples' in first && 'eval' in first) || ('epoch' in first && 'output' in first && 'target' in first))
    return 'inspect';
  return null;
}

const bad = (where: string, msg: string) => new WorkbenchError('BAD_FORMAT', msg, where);

function str(v: unknown, field: string, where: string): string {
  if (typeof v !== 'string') throw bad(where, `"${field}" must be a string, found ${describeValue(v)}`);
  return v;
}

function idOf(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  if (typeof v === 'string' && /^\d+$/.test(v.trim())) return Number(v);
  return undefined;
}

function targetText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
  if (isRecord(v) && typeof v.ground_truth === 'string') return v.ground_truth;
  return undefined;
}

export function verlRows(records: readonly SourceRecord[]): HarnessRow[] {
  return records.map(({ value, where }) => {
    if (!isRecord(value))
      throw bad(
        where,
        `expected a verl generation object {"input", "output", "score", "step"}, found ${describeValue(value)}`,
      );
    const step = value.step;
    if (typeof step !== 'number' || !Number.isSafeInteger(step))
      throw bad(where, `"step" must be an integer, found ${describeValue(step)}`);
    const output = str(value.output, 'output', where);
    const row: HarnessRow = { where, step, completions: [output], prompt: str(value.input, 'input', where) };
    if (isVerlToolEpisode(output)) {
      // A multi-turn (tool) episode: the SQL the tutorial's reward reads, the turns kept.
      const episode = verlToolEpisode(output);
      row.sqls = [episode.sql];
      row.turns = [episode.turns];
      row.end = dumpEnd(value.stop_reason, value.max_turns);
    }
    const target = targetText(value.gts);
    if (target !== undefined) row.target = target;
    if (typeof value.score === 'number') row.score = value.score;
    const id = idOf(value.question_id);
    if (id !== undefined) row.questionId = id;
    return row;
  });
}

/** The raw generations of an lm-eval sample: `resps` holds one list per request. */
function lmEvalCompletions(resps: unknown, where: string): string[] {
  if (!Array.isArray(resps))
    throw bad(where, `"resps" must be a list of lists of generations, found ${describeValue(resps)}`);
  const flat = resps.flatMap((r) => (Array.isArray(r) ? r : [r]));
  if (flat.length === 0 || flat.some((x) => typeof x !== 'string')) {
    throw bad(
      where,
      '"resps" holds no generated text: only generate_until tasks (text generations) can be evaluated as SQL',
    );
  }
  return flat as string[];
}

export function lmEvalRows(records: readonly SourceRecord[]): HarnessRow[] {
  // One line per document and filter: the first filter's lines are the run (resps are raw generations either way).
  const firstFilter = isRecord(records[0]?.value) ? (records[0]!.value as Record<string, unknown>).filter : undefined;
  const rows: HarnessRow[] = [];
  for (const { value, where } of records) {
    if (!isRecord(value))
      throw bad(where, `expected an lm-eval sample {"doc_id", "doc", "resps", ...}, found ${describeValue(value)}`);
    if (value.filter !== firstFilter) continue;
    const doc = isRecord(value.doc) ? value.doc : {};
    const row: HarnessRow = { where, step: null, completions: lmEvalCompletions(value.resps, where) };
    const id = idOf(doc.question_id);
    if (id !== undefined) row.questionId = id;
    if (typeof doc.question === 'string') row.questionText = doc.question;
    const args = isRecord(value.arguments) ? value.arguments : undefined;
    const prompt =
      args && isRecord(args.gen_args_0)
        ? args.gen_args_0.arg_0
        : Array.isArray(value.arguments)
          ? (value.arguments as unknown[][])[0]?.[0]
          : undefined;
    if (typeof prompt === 'string') row.prompt = prompt;
    const target =
      targetText(value.target) ??
      (typeof doc.SQL === 'string' ? doc.SQL : typeof doc.query === 'string' ? doc.query : undefined);
    if (target !== undefined) row.target = target;
    const metric = Array.isArray(value.metrics) ? value.metrics[0] : undefined;
    if (typeof metric === 'string' && typeof value[metric] === 'number') row.score = value[metric] as number;
    rows.push(row);
  }
  return rows;
}

function messageText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .filter((c) => isRecord(c) && c.type === 'text' && typeof c.text === 'string')
      .map((c) => (c as { text: string }).text)
      .join('');
  return undefined;
}

function inputText(input: unknown): string | undefined {
  if (typeof input === 'string') return input;
  if (Array.isArray(input)) return input.map((m) => (isRecord(m) ? (messageText(m.content) ?? '') : '')).join('\n');
  return undefined;
}

/** Inspect EvalSamples; a sample's epochs are the question's samples. */
export function inspectRows(samples: ReadonlyArray<{ value: unknown; where: string }>): HarnessRow[] {
  return samples.map(({ value, where }) => {
    if (!isRecord(value))
      throw bad(
        where,
        `expected an Inspect sample {"id", "epoch", "input", "target", "output"}, found ${describeValue(value)}`,
      );
    const output = isRecord(value.output) ? value.output : {};
    const choice = Array.isArray(output.choices) && isRecord(output.choices[0]) ? output.choices[0] : undefined;
    const text =
      (choice && isRecord(choice.message) ? messageText(choice.message.content) : undefined) ??
      (typeof output.completion === 'string' ? output.completion : undefined);
    if (text === undefined)
      throw bad(
        where,
        'the sample has no model output (output.choices[0].message.content): was it cancelled or did it fail?',
      );
    const metadata = isRecord(value.metadata) ? value.metadata : {};
    const row: HarnessRow = { where, step: null, completions: [text] };
    const id = idOf(metadata.question_id);
    if (id !== undefined) row.questionId = id;
    if (typeof metadata.question === 'string') row.questionText = metadata.question;
    const prompt = inputText(value.input);
    if (prompt !== undefined) row.prompt = prompt;
    const target = targetText(value.target);
    if (target !== undefined) row.target = target;
    const scores = isRecord(value.scores) ? Object.values(value.scores) : [];
    const first = scores.find((s) => isRecord(s) && typeof s.value === 'number') as { value: number } | undefined;
    if (first) row.score = first.value;
    return row;
  });
}

/** A verifiers `info` field: a JSON object, or (RolloutInput allows it) its JSON text. */
function infoObject(info: unknown): Record<string, unknown> {
  if (isRecord(info)) return info;
  if (typeof info === 'string' && info.trimStart().startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(info);
      if (isRecord(parsed)) return parsed;
    } catch {
      // not JSON: no fields to read
    }
  }
  return {};
}

/** The text a rollout's completion ends with: the string itself, or the last assistant message of a chat. */
function completionText(completion: unknown): string | undefined {
  if (typeof completion === 'string') return completion;
  if (!Array.isArray(completion)) return undefined;
  for (let i = completion.length - 1; i >= 0; i--) {
    const m: unknown = completion[i];
    if (isRecord(m) && m.role === 'assistant') {
      const text = messageText(m.content);
      if (text !== undefined) return text;
    }
  }
  return undefined;
}

/**
 * prime-rl eval rollouts (verifiers `RolloutOutput`, one per line): the completion's final
 * assistant text, the prompt's text, `answer` as the ground truth, `info.question_id` /
 * `info.question` when the environment put them there, `reward` as the trainer's own score.
 * Rollouts of one example are its samples, in file order.
 */
export function primeRlRows(records: readonly SourceRecord[]): HarnessRow[] {
  return records.map(({ value, where }) => {
    if (!isRecord(value))
      throw bad(
        where,
        `expected a prime-rl rollout {"example_id", "prompt", "completion", "answer", "reward"}, found ${describeValue(value)}`,
      );
    const text = completionText(value.completion);
    if (text === undefined)
      throw bad(
        where,
        `"completion" holds no assistant text (expected a string or chat messages), found ${describeValue(value.completion)}`,
      );
    const row: HarnessRow = { where, step: null, completions: [text] };
    const prompt = inputText(value.prompt);
    if (prompt !== undefined) row.prompt = prompt;
    if (typeof value.answer === 'string' && value.answer !== '') row.target = value.answer;
    const info = infoObject(value.info);
    const id = idOf(info.question_id);
    if (id !== undefined) row.questionId = id;
    if (typeof info.question === 'string') row.questionText = info.question;
    if (typeof value.reward === 'number' && Number.isFinite(value.reward)) row.score = value.reward;
    return row;
  });
}

/** A reward as a number: a finite number; a list of per-token rewards (SkyRL) is summed; NaN/None is null. */
function rewardOf(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number' && Number.isFinite(x)))
    return (v as number[]).reduce((s, x) => s + x, 0);
  return null;
}

/**
 * SkyRL eval dumps (`dump_per_dataset_eval_results`, one `<data_source>.jsonl` per data source):
 * `input_prompt` (the decoded prompt), `output_response` (the decoded response: for the SQL
 * environment the whole episode, probes and observations included), `score` (the env's reward),
 * `stop_reason`, `env_class`, `env_extras` (the dataset row's extras: `db_id`,
 * `reward_spec.ground_truth`, ...), `data_source`. A SkyRL SQL episode's final SQL is the
 * `<solution>` SkyRL's reward accepts, its turns are kept.
 */
export function skyrlRows(records: readonly SourceRecord[]): HarnessRow[] {
  return records.map(({ value, where }) => {
    if (!isRecord(value))
      throw bad(
        where,
        `expected a SkyRL eval record {"input_prompt", "output_response", "score", "env_extras"}, found ${describeValue(value)}`,
      );
    const response = str(value.output_response, 'output_response', where);
    const row: HarnessRow = {
      where,
      step: null,
      completions: [response],
      prompt: str(value.input_prompt, 'input_prompt', where),
    };
    if (isSkyrlEpisode(response)) {
      const episode = skyrlEpisode(response);
      row.sqls = [episode.sql];
      row.turns = [episode.turns];
    }
    const extras = isRecord(value.env_extras) ? value.env_extras : {};
    const spec = isRecord(extras.reward_spec) ? extras.reward_spec : {};
    const target = targetText(spec.ground_truth) ?? targetText(extras.ground_truth);
    if (target !== undefined) row.target = target;
    const extra = isRecord(extras.extra_info) ? extras.extra_info : {};
    const id = idOf(extras.question_id) ?? idOf(extra.question_id);
    if (id !== undefined) row.questionId = id;
    const text = extras.question ?? extra.question;
    if (typeof text === 'string') row.questionText = text;
    const score = rewardOf(value.score);
    if (score !== null) row.score = score;
    if (row.turns) row.end = dumpEnd(value.stop_reason, extras.max_turns);
    return row;
  });
}

/** A dump's stop reason (a string, else none) and turn limit (a positive integer, else none). */
function dumpEnd(stopReason: unknown, maxTurns: unknown): DumpEnd {
  return {
    stopReason: typeof stopReason === 'string' && stopReason !== '' ? stopReason : null,
    maxTurns: typeof maxTurns === 'number' && Number.isSafeInteger(maxTurns) && maxTurns > 0 ? maxTurns : null,
  };
}

/** TRL's own columns of a completions Parquet row; every other numeric column is a reward function's (or `log_extra`'s). */
const TRL_COLUMNS = new Set(['step', 'prompt', 'completion', 'advantage', 'image']);

/**
 * TRL GRPO completions (`GRPOTrainer.log` with `log_completions`, one
 * `<output_dir>/completions/completions_<step:05d>.parquet` per logging step): `step`, `prompt`
 * and `completion` (decoded text), one column per reward function (NaN where it gave none),
 * `log_extra` columns, `advantage`. Each row is one sample; its reward columns and advantage are
 * kept, and its own score is their sum (TRL's `reward` with the default weights of 1).
 */
export function trlRows(records: readonly SourceRecord[]): HarnessRow[] {
  return records.map(({ value, where }) => {
    if (!isRecord(value))
      throw bad(
        where,
        `expected a TRL completions row {"step", "prompt", "completion", <rewards>, "advantage"}, found ${describeValue(value)}`,
      );
    const step = value.step;
    if (typeof step !== 'number' || !Number.isSafeInteger(step))
      throw bad(where, `"step" must be an integer, found ${describeValue(step)}`);
    const row: HarnessRow = {
      where,
      step,
      completions: [str(value.completion, 'completion', where)],
      prompt: str(value.prompt, 'prompt', where),
    };
    const rewards: Record<string, number | null> = {};
    let total = 0;
    let any = false;
    for (const [k, v] of Object.entries(value)) {
      if (TRL_COLUMNS.has(k) || typeof v !== 'number') continue;
      rewards[k] = rewardOf(v);
      if (rewards[k] !== null) [total, any] = [total + rewards[k], true];
    }
    rewards.advantage = rewardOf(value.advantage);
    row.rewards = rewards;
    if (any) row.score = total;
    return row;
  });
}

/** The messages of a verifiers v1 trace's last branch: the path from its last assistant node to its root. */
function traceBranch(nodes: readonly unknown[]): Array<{ message: unknown; sampled: boolean }> {
  const node = (i: number) => (isRecord(nodes[i]) ? (nodes[i] as Record<string, unknown>) : {});
  let last = -1;
  for (let i = nodes.length - 1; i >= 0 && last < 0; i--)
    if (isRecord(node(i).message) && (node(i).message as Record<string, unknown>).role === 'assistant') last = i;
  if (last < 0) return [];
  const linked = nodes.some((_, i) => typeof node(i).parent === 'number');
  const path: number[] = [];
  if (linked) {
    const seen = new Set<number>();
    for (let i: unknown = last; typeof i === 'number' && i >= 0 && i < nodes.length && !seen.has(i);) {
      seen.add(i);
      path.unshift(i);
      i = node(i).parent;
    }
  } else for (let i = 0; i <= last; i++) path.push(i);
  return path.map((i) => ({ message: node(i).message, sampled: node(i).sampled === true }));
}

/**
 * prime-rl's rollout traces (`FileMonitor.log_episodes`: `rollouts/step_<N>/{train,eval}/{all,effective}/traces.jsonl`,
 * one verifiers v1 `Episode.to_record()` per line): `task.data` (the dataset row: `question_id`,
 * `question`, `answer`, `prompt`, `info` when it has them), `traces` (one per agent: `nodes`
 * with `parent`, `message` and `sampled`, `rewards` `{name: {score, weight}}`, `is_completed`),
 * `ok`, `errors`. Each trace is a sample: its last assistant message is the completion, the
 * messages after its prompt are its turns, each reward is kept and the own score is their
 * weighted sum (`Trace.reward`). An episode with no trace (it failed before one was produced) is
 * a sample with no output. The step is the `step_<N>` folder's.
 */
export function primeRlTraceRows(records: readonly SourceRecord[]): HarnessRow[] {
  return records.flatMap(({ value, where }) => {
    if (!isRecord(value) || !Array.isArray(value.traces))
      throw bad(
        where,
        `expected a prime-rl episode record {"task", "traces", "ok", ...}, found ${describeValue(value)}`,
      );
    const task = isRecord(value.task) ? value.task : {};
    const data = isRecord(task.data) ? task.data : {};
    const info = infoObject(data.info);
    const base: HarnessRow = { where, step: null, completions: [] };
    const id = idOf(data.question_id) ?? idOf(info.question_id);
    if (id !== undefined) base.questionId = id;
    const text = data.question ?? info.question;
    if (typeof text === 'string') base.questionText = text;
    const prompt = inputText(data.prompt);
    if (prompt !== undefined) base.prompt = prompt;
    const target = targetText(data.answer) ?? targetText(info.answer);
    if (target !== undefined && target !== '') base.target = target;
    if (value.traces.length === 0) return [{ ...base, completions: [''], rewards: {} }];
    return value.traces.map((trace: unknown, t) => {
      const tr = isRecord(trace) ? trace : {};
      const branch = traceBranch(Array.isArray(tr.nodes) ? tr.nodes : []);
      const firstSampled = branch.findIndex((n) => n.sampled);
      const head = branch.slice(0, firstSampled < 0 ? branch.length - 1 : firstSampled).map((n) => n.message);
      const tail = branch.slice(head.length).map((n) => n.message);
      const lastMsg = tail.at(-1);
      const completion = isRecord(lastMsg) ? (messageText(lastMsg.content) ?? '') : '';
      const row: HarnessRow = { ...base, where: `${where} traces[${t}]`, completions: [completion] };
      if (row.prompt === undefined && head.length) row.prompt = inputText(head);
      const turns = chatTurns(tail, messageText);
      if (turns.length > 1) {
        row.turns = [turns];
        row.end = dumpEnd(tr.stop_condition, undefined);
      }
      const rewards: Record<string, number | null> = {};
      let total = 0;
      let any = false;
      for (const [name, r] of Object.entries(isRecord(tr.rewards) ? tr.rewards : {})) {
        const score = isRecord(r) ? rewardOf(r.score) : null;
        rewards[name] = score;
        if (score !== null) {
          const weight = isRecord(r) && typeof r.weight === 'number' ? r.weight : 1;
          [total, any] = [total + score * weight, true];
        }
      }
      row.rewards = rewards;
      if (any) row.score = total;
      return row;
    });
  });
}

/** Rows of an Inspect log object (a `.json` log) with `samples`. */
export function inspectLogSamples(log: unknown, fileName: string): Array<{ value: unknown; where: string }> {
  if (!isRecord(log) || !Array.isArray(log.samples)) {
    throw bad(
      fileName,
      'not an Inspect eval log with samples: was the eval run with --no-log-samples? Re-run it logging samples',
    );
  }
  return log.samples.map((value, i) => ({ value, where: `${fileName} samples[${i}]` }));
}

/** An ISO 8601 instant (UTC) of a date string or of seconds since 1970; null when it is neither. */
function isoOf(v: unknown): string | null {
  const ms =
    typeof v === 'number' && Number.isFinite(v) ? v * 1000 : typeof v === 'string' && v !== '' ? Date.parse(v) : NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/**
 * When an Inspect log was written, by its own fields (EvalLog, `src/inspect_ai/log/_log.py`):
 * `stats.completed_at` (empty while the eval runs), else `stats.started_at`, else `eval.created`.
 * A `.eval` zip holds them in `header.json` (written at the end) or `_journal/start.json` (`eval` only).
 */
export function inspectLogWallTime(log: unknown): string | null {
  if (!isRecord(log)) return null;
  const stats = isRecord(log.stats) ? log.stats : {};
  const spec = isRecord(log.eval) ? log.eval : {};
  return isoOf(stats.completed_at) ?? isoOf(stats.started_at) ?? isoOf(spec.created);
}

/**
 * lm-eval's `--log_samples` writes `samples_<task>_<date_id>.jsonl` beside `results_<date_id>.json`
 * (`lm_eval/loggers/evaluation_tracker.py`, `date_id = datetime.now().isoformat()` with `:` made
 * `-`): the results file of a samples file's name, or null when the name is not lm-eval's.
 */
export function lmEvalResultsName(samplesName: string): string | null {
  const m = /^samples_.+_(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl$/i.exec(samplesName);
  return m ? `results_${m[1]}.json` : null;
}

/** Whether a JSON value is an lm-eval results file (`results`, `config`/`configs`, `date`). */
export function isLmEvalResults(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && isRecord(value.results) && 'date' in value && ('configs' in value || 'config' in value);
}

/** The `date` of an lm-eval results file (`simple_evaluate`'s `start_date = time.time()`, seconds since 1970), as ISO 8601. */
export function lmEvalResultsWallTime(results: unknown): string | null {
  return isLmEvalResults(results) ? isoOf(results.date) : null;
}

const norm = (sql: string) => sql.replace(/\s+/g, ' ').trim().replace(/;$/, '').toLowerCase();

/**
 * A question's predictions record: its completions, and where the trainer's own rule took the SQL
 * (multi-turn dumps), that SQL for every sample (`sqls`; no SQL by that rule is an empty one,
 * scored wrong as the trainer's reward scores it; a sample of the question without the rule's SQL
 * takes the extraction rules' SQL of its completion).
 */
function recordOf(questionId: number, completions: string[], sqls: ReadonlyArray<string | null | undefined>) {
  if (!sqls.some((s) => s !== undefined)) return { question_id: questionId, completions };
  return {
    question_id: questionId,
    completions,
    sqls: completions.map((c, k) => (sqls[k] === undefined ? extractSql(c).sql : (sqls[k] ?? ''))),
  };
}

/** Maps rows to questions (rule above) and splits them into one run per step. */
export function mapHarnessRows(rows: readonly HarnessRow[], questions: readonly Question[]): HarnessRun[] {
  const byId = new Map<number, Question>();
  for (const q of questions) byId.set(q.questionId, q);
  const byText = new Map<string, Question[]>();
  for (const q of questions) byText.set(q.question.trim(), [...(byText.get(q.question.trim()) ?? []), q]);
  const byGold = new Map<string, Question[]>();
  for (const q of questions) byGold.set(norm(q.goldSql), [...(byGold.get(norm(q.goldSql)) ?? []), q]);
  const texts = [...byText.keys()].filter((t) => t.length >= 8).sort((a, b) => b.length - a.length);

  const pick = (candidates: Question[] | undefined, row: HarnessRow): Question | 'ambiguous' | undefined => {
    if (!candidates || candidates.length === 0) return undefined;
    if (candidates.length === 1) return candidates[0];
    const byTarget = row.target === undefined ? [] : candidates.filter((q) => norm(q.goldSql) === norm(row.target!));
    return byTarget.length === 1 ? byTarget[0] : 'ambiguous';
  };
  const runs = new Map<
    number | null,
    HarnessRun & {
      samples: Map<number, string[]>;
      sqls: Map<number, Array<string | null | undefined>>;
      scores: number[];
      episodes: Array<{ turns: DumpTurn[]; sql: string | null | undefined }>;
    }
  >();
  for (const row of rows) {
    let run = runs.get(row.step);
    if (!run) {
      run = {
        step: row.step,
        records: [],
        rows: 0,
        byRule: { question_id: 0, 'question text': 0, 'gold SQL': 0 },
        unmatched: [],
        ownScore: null,
        sampleScores: new Map(),
        sampleRewards: new Map(),
        sampleTurns: new Map(),
        sampleEnds: new Map(),
        turnSummary: null,
        samples: new Map(),
        sqls: new Map(),
        scores: [],
        episodes: [],
      };
      runs.set(row.step, run);
    }
    run.rows += 1;
    if (row.score !== undefined) run.scores.push(row.score);
    let q: Question | 'ambiguous' | undefined;
    let rule: MappingRule | undefined;
    if (row.questionId !== undefined && byId.has(row.questionId)) [q, rule] = [byId.get(row.questionId), 'question_id'];
    if (!q && row.questionText !== undefined)
      [q, rule] = [pick(byText.get(row.questionText.trim()), row), 'question text'];
    if (!q && row.prompt !== undefined) {
      const hit = texts.find((t) => row.prompt!.includes(t));
      if (hit) [q, rule] = [pick(byText.get(hit), row), 'question text'];
    }
    if (!q && row.target !== undefined) [q, rule] = [pick(byGold.get(norm(row.target)), row), 'gold SQL'];
    if (!q || q === 'ambiguous') {
      run.unmatched.push({
        where: row.where,
        reason:
          q === 'ambiguous'
            ? `matches several questions by ${rule} and its ground truth does not single one out`
            : row.questionId !== undefined
              ? `question_id ${row.questionId} is not in the questions file and no question's text or gold SQL matches`
              : "no question's text is in its prompt and its ground truth is no question's gold SQL",
      });
      continue;
    }
    run.byRule[rule!] += 1;
    run.samples.set(q.questionId, [...(run.samples.get(q.questionId) ?? []), ...row.completions]);
    run.sampleScores.set(q.questionId, [
      ...(run.sampleScores.get(q.questionId) ?? []),
      ...row.completions.map(() => row.score ?? null),
    ]);
    run.sqls.set(q.questionId, [
      ...(run.sqls.get(q.questionId) ?? []),
      ...row.completions.map((_, k) => row.sqls?.[k]),
    ]);
    run.sampleRewards.set(q.questionId, [
      ...(run.sampleRewards.get(q.questionId) ?? []),
      ...row.completions.map(() => row.rewards ?? null),
    ]);
    run.sampleTurns.set(q.questionId, [
      ...(run.sampleTurns.get(q.questionId) ?? []),
      ...row.completions.map((_, k) => row.turns?.[k] ?? null),
    ]);
    run.sampleEnds.set(q.questionId, [
      ...(run.sampleEnds.get(q.questionId) ?? []),
      ...row.completions.map(() => row.end ?? null),
    ]);
    row.turns?.forEach((turns, k) => run.episodes.push({ turns, sql: row.sqls ? row.sqls[k] : undefined }));
  }
  return [...runs.values()]
    .sort((a, b) => (a.step ?? 0) - (b.step ?? 0))
    .map(({ samples, sqls, scores, episodes, ...run }) => ({
      ...run,
      ownScore: scores.length ? scores.reduce((s, x) => s + x, 0) / scores.length : null,
      turnSummary: episodes.length ? turnStats(episodes) : null,
      records: [...samples].map(([questionId, completions], i) => ({
        value: recordOf(questionId, completions, sqls.get(questionId) ?? []),
        where: `${run.step === null ? '' : `step ${run.step}, `}question_id ${questionId}`,
        line: i + 1,
      })),
    }));
}

/** One line per run: how many rows were mapped by which rule, and how many were not. */
export function mappingReport(format: HarnessFormat, fileName: string, run: HarnessRun): string {
  const rules = (Object.entries(run.byRule) as Array<[MappingRule, number]>)
    .filter(([, n]) => n > 0)
    .map(([r, n]) => `${n} by ${r}`);
  const step = run.step === null ? '' : ` step ${run.step}:`;
  const own = run.ownScore === null ? '' : `; its own mean score ${run.ownScore.toFixed(4)}`;
  const columns = rewardMeans(run);
  const rewards = columns.length
    ? `; its reward columns (mean): ${columns.map(([k, m]) => `${k} ${m === null ? 'none' : m.toFixed(4)}`).join(', ')}`
    : '';
  const turns = run.turnSummary ? `; ${run.turnSummary}` : '';
  const unmatched = run.unmatched.length
    ? `; ${run.unmatched.length} unmatched: ${run.unmatched.map((u) => `${u.where} (${u.reason})`).join('; ')}`
    : '';
  return `${fileName} (${format}):${step} ${run.rows} rows, mapped ${rules.join(', ') || 'none'}${own}${rewards}${turns}${unmatched}`;
}

/** Each reward column of a run's matched samples with its mean over the samples that have a value (null: none has). */
function rewardMeans(run: Pick<HarnessRun, 'sampleRewards'>): Array<[string, number | null]> {
  const sums = new Map<string, { s: number; n: number }>();
  for (const samples of run.sampleRewards.values())
    for (const r of samples)
      for (const [k, v] of Object.entries(r ?? {})) {
        const acc = sums.get(k) ?? { s: 0, n: 0 };
        if (v !== null) [acc.s, acc.n] = [acc.s + v, acc.n + 1];
        sums.set(k, acc);
      }
  return [...sums].map(([k, { s, n }]) => [k, n ? s / n : null]);
}
