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
 *   `answer`, `info`, `reward`); the step is the folder's.
 * Each row is mapped to a question by, in order: a question id it carries; the question's text
 * (given as such, or found in the prompt; the longest match wins, ties broken by the gold SQL);
 * its ground truth equal to one question's gold SQL. Rows matched by none are listed.
 */
import { WorkbenchError } from '../errors.ts';
import type { Question } from '../types.ts';
import { describeValue, isRecord } from './questions.ts';
import type { SourceRecord } from './records.ts';

export type HarnessFormat = 'verl' | 'lm-eval' | 'inspect' | 'prime-rl';
export const HARNESS_FORMATS: readonly HarnessFormat[] = ['verl', 'lm-eval', 'inspect', 'prime-rl'];

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
}

export type MappingRule = 'question_id' | 'question text' | 'gold SQL';

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
}

/** Which format a first record looks like, or null. */
export function detectHarnessFormat(first: unknown): HarnessFormat | null {
  if (!isRecord(first)) return null;
  if ('input' in first && 'output' in first && 'step' in first) return 'verl';
  if ('example_id' in first && 'completion' in first && 'reward' in first) return 'prime-rl';
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
    const row: HarnessRow = {
      where,
      step,
      completions: [str(value.output, 'output', where)],
      prompt: str(value.input, 'input', where),
    };
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
  const runs = new Map<number | null, HarnessRun & { samples: Map<number, string[]>; scores: number[] }>();
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
        samples: new Map(),
        scores: [],
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
  }
  return [...runs.values()]
    .sort((a, b) => (a.step ?? 0) - (b.step ?? 0))
    .map(({ samples, scores, ...run }) => ({
      ...run,
      ownScore: scores.length ? scores.reduce((s, x) => s + x, 0) / scores.length : null,
      records: [...samples].map(([questionId, completions], i) => ({
        value: { question_id: questionId, completions },
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
  const unmatched = run.unmatched.length
    ? `; ${run.unmatched.length} unmatched: ${run.unmatched.map((u) => `${u.where} (${u.reason})`).join('; ')}`
    : '';
  return `${fileName} (${format}):${step} ${run.rows} rows, mapped ${rules.join(', ') || 'none'}${own}${unmatched}`;
}
