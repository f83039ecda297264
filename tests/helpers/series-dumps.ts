/**
 * A training run made of real completions: the 13 BIRD mini-dev prediction files (sorted by
 * path) as 13 verl validation dumps, step 100, 200, ..., 1300, written as verl's
 * `RayPPOTrainer._dump_generations` writes `<validation_data_dir>/<global_steps>.jsonl` (one JSON
 * object per line: `input`, `output`, `score`, `step`; docs/formats.md). Only the 140 questions
 * whose database is here (student_club, superhero, toxicology) are dumped.
 * - `input`: a chat prompt holding the question's text and evidence (how harness rows are mapped);
 * - `output`: the file's SQL for the question in a ```sql fence, so extraction yields exactly the
 *   SQL `eval` reads from the BIRD file;
 * - `score`: the stand-in trainer's reward, exact match of the SQL text with the gold after
 *   collapsing whitespace and case (a reward a trainer might log; not EX).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { readSharedText, sharedData } from './shared-data.ts';

export const PRESENT_DBS = ['student_club', 'superhero', 'toxicology'];
export const MINIDEV_GOLD = sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql');
export const MINIDEV_QUESTIONS = sharedData('bird', 'minidev', 'mini_dev_sqlite.json');
export const DB_ROOT = sharedData('bird', 'databases');
/** `--gold`, `--dataset` and `--db-root` of mini-dev for the CLI's `series`. */
export const MINIDEV_ARGS = ['--gold', MINIDEV_GOLD, '--dataset', MINIDEV_QUESTIONS, '--db-root', DB_ROOT];

export const PREDICTION_FILES = ['TA_output', 'sql_output_kg']
  .map((d) => sharedData('bird', 'predictions', d))
  .flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith('.json'))
      .map((f) => path.join(d, f)),
  )
  .sort();

export interface MiniDevQuestion {
  question_id: number;
  db_id: string;
  question: string;
  evidence: string;
  SQL: string;
}
export const questions = JSON.parse(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json')) as MiniDevQuestion[];

const norm = (s: string) => s.replace(/\s+/g, ' ').trim().replace(/;$/, '').toLowerCase();

export const stepOf = (i: number) => (i + 1) * 100;

/**
 * The one mini-dev question whose real answers run for tens of seconds: question 247
 * (toxicology, dataset index 426). Two files answer it with `LEFT JOIN connected c ON a.atom_id =
 * c.atom_id OR a.atom_id = c.atom_id2` (steps 600 and 1300: gpt-35-turbo, phi-3-medium), a scan of
 * 12k x 24k rows: 27-41 s in sql.js and 26 s in Python's SQLite 3.40.1 on a quiet machine, past
 * the official 30 s under load. The 13-step training runs (DUMPED) leave it out: what they check
 * (what a format, a host, a series or a cache does with each answer) does not need one query that
 * runs for half a minute in every run of every file. It is executed to completion, and compared
 * with the official evaluator, in tests/core/run/version-effects.test.ts (all 13 files, a timeout
 * it cannot reach); the `eval` references blank its answer (tests/helpers/eval-reference.ts).
 */
export const SLOW_QUESTION = 247;

/** Which mini-dev questions a dump holds: those on these databases, or those the test keeps. */
export type QuestionFilter = readonly string[] | ((q: MiniDevQuestion) => boolean);
export const keeps = (which: QuestionFilter) => (q: MiniDevQuestion) =>
  typeof which === 'function' ? which(q) : which.includes(q.db_id);
/** The questions of the 13-step training runs: those whose database is here, but SLOW_QUESTION. */
export const DUMPED: QuestionFilter = (q) => PRESENT_DBS.includes(q.db_id) && q.question_id !== SLOW_QUESTION;
/** The questions DUMPED holds, in the dataset's order. */
export const dumpedQuestions = (): MiniDevQuestion[] => questions.filter(keeps(DUMPED));

/** The verl lines of prediction file `i` (0-based) as step stepOf(i), for the questions `dbs` keeps. */
export function verlLines(i: number, dbs: QuestionFilter = PRESENT_DBS): string[] {
  const preds = JSON.parse(readFileSync(PREDICTION_FILES[i]!, 'utf8')) as Record<string, string>;
  const step = stepOf(i);
  const keep = keeps(dbs);
  return questions.flatMap((q, index) => {
    if (!keep(q)) return [];
    const sql = (preds[String(index)] ?? '').split(BIRD_SEPARATOR)[0]!.trim();
    const input = `<|im_start|>system\nYou write SQLite for the database ${q.db_id}.<|im_end|>\n<|im_start|>user\nQuestion: ${q.question}\nEvidence: ${q.evidence}<|im_end|>\n<|im_start|>assistant\n`;
    const output = `\`\`\`sql\n${sql}\n\`\`\``;
    return [JSON.stringify({ input, output, score: norm(sql) === norm(q.SQL) ? 1.0 : 0.0, step })];
  });
}

/** Writes `<step>.jsonl` for the given prediction files into `dir`; returns the paths. */
export function writeVerlDumps(dir: string, which: readonly number[], dbs: QuestionFilter = PRESENT_DBS): string[] {
  mkdirSync(dir, { recursive: true });
  return which.map((i) => {
    const file = path.join(dir, `${stepOf(i)}.jsonl`);
    writeFileSync(file, verlLines(i, dbs).join('\n') + '\n');
    return file;
  });
}

/**
 * The same completions as prime-rl eval rollouts: one verifiers `RolloutOutput` per line, as
 * prime-rl's `save_rollouts` writes `<output_dir>/rollouts/step_<N>/eval_rollouts.jsonl`
 * (docs/formats.md): `example_id`, `task`, chat `prompt` and `completion`, `answer` (the gold
 * SQL), `info`, `reward` (the same stand-in reward as the verl dumps' `score`).
 */
export function primeRlLines(i: number, dbs: QuestionFilter = PRESENT_DBS): string[] {
  return verlLines(i, dbs).map((line, k) => {
    const v = JSON.parse(line) as { input: string; output: string; score: number };
    const q = questions.filter(keeps(dbs))[k]!;
    return JSON.stringify({
      example_id: k,
      task: 'bird-sql',
      prompt: [
        { role: 'system', content: `You write SQLite for the database ${q.db_id}.` },
        { role: 'user', content: `Question: ${q.question}\nEvidence: ${q.evidence}` },
      ],
      completion: [{ role: 'assistant', content: v.output }],
      answer: q.SQL,
      info: { db_id: q.db_id },
      reward: v.score,
      metrics: { exact_match: v.score },
      timing: { generation_ms: 0, scoring_ms: 0, total_ms: 0 },
      is_completed: true,
      is_truncated: false,
    });
  });
}

/** `rollouts/step_<N>/eval_rollouts.jsonl` under `dir` for the given prediction files; returns the paths. */
export function writePrimeRlDumps(dir: string, which: readonly number[], dbs: QuestionFilter = PRESENT_DBS): string[] {
  return which.map((i) => {
    const sub = path.join(dir, 'rollouts', `step_${stepOf(i)}`);
    mkdirSync(sub, { recursive: true });
    const file = path.join(sub, 'eval_rollouts.jsonl');
    writeFileSync(file, primeRlLines(i, dbs).join('\n') + '\n');
    return file;
  });
}

/** The BIRD prediction files themselves, copied as `predict_dev_step_<N>.json` (a step in the name). */
export function writeBirdStepFiles(dir: string, which: readonly number[]): string[] {
  mkdirSync(dir, { recursive: true });
  return which.map((i) => {
    const file = path.join(dir, `predict_dev_step_${stepOf(i)}.json`);
    writeFileSync(file, readFileSync(PREDICTION_FILES[i]!));
    return file;
  });
}

/** What `directBuckets` reads of a sample; with `sql` it also judges whether an EX pass is earned. */
export interface DirectSample {
  questionId: number;
  status: string;
  ex: number;
  sql?: string;
  mutatedDb?: boolean;
  predRowCount?: number | null;
  goldRowCount?: number | null;
}

/**
 * Whether an EX pass is earned, judged directly on the text and counts, without the core's
 * tokenizer (a reference for these dumps, whose SQL has no keyword inside a string): no write
 * statement, a FROM somewhere (a SELECT of constants reads no table), not empty on an empty gold.
 */
export function directEarned(x: DirectSample): boolean {
  if (x.ex !== 1) return false;
  if (x.sql === undefined) return true;
  const sql = x.sql.trim();
  if (x.mutatedDb || /^(insert|update|delete|drop|create|alter|replace)\b/i.test(sql)) return false;
  if (!/\bfrom\b/i.test(sql)) return false;
  return !(x.predRowCount === 0 && x.goldRowCount === 0);
}

/**
 * Buckets, first solved step and flips computed directly from each step's sample verdicts
 * (n = 1: a question's verdict is its sample's EX), without the core's dynamics: the reference
 * the CLI's and the app's numbers are checked against. A question right at some step but earned
 * at none (directEarned) is `unearned`.
 */
export function directBuckets(
  steps: ReadonlyArray<{ step: number; samples: ReadonlyArray<DirectSample> }>,
): Array<{ question_id: number; bucket: string; first_solved_step: number | null; flips: number }> {
  const rightAt = new Map<number, Array<[number, boolean, boolean]>>();
  for (const s of steps)
    for (const x of s.samples)
      if (x.status !== 'missing-db')
        rightAt.set(x.questionId, [...(rightAt.get(x.questionId) ?? []), [s.step, x.ex === 1, directEarned(x)]]);
  return [...rightAt]
    .map(([questionId, at]) => {
      const v = at.map(([, right]) => right);
      let flips = 0;
      for (let k = 1; k < v.length; k++) flips += Number(v[k] !== v[k - 1]);
      const bucket =
        v.includes(true) && !at.some(([, , earned]) => earned)
          ? 'unearned'
          : flips >= 3
            ? 'unstable'
            : !v.includes(false)
              ? 'always'
              : !v.includes(true)
                ? 'never'
                : v.at(-1)
                  ? 'learned'
                  : 'forgotten';
      const first = at.find(([, right]) => right);
      return { question_id: questionId, bucket, first_solved_step: first ? first[0] : null, flips };
    })
    .sort((a, b) => a.question_id - b.question_id);
}

/**
 * An Inspect eval log (`.json`, as `inspect eval --log-format json` writes an EvalLog) of the
 * first `n` questions on `db`, each answered with its gold SQL in a ```sql fence, with the
 * log's own times: `eval.created`, `stats.started_at`, `stats.completed_at` (docs/formats.md).
 */
export function inspectLogJson(
  n: number,
  times: { created: string; startedAt: string; completedAt: string },
  db = 'superhero',
): string {
  const qs = questions.filter((q) => q.db_id === db).slice(0, n);
  return JSON.stringify({
    version: 2,
    status: 'success',
    eval: { eval_id: 'e1', run_id: 'r1', created: times.created, task: 'bird_sql', model: 'policy' },
    stats: { started_at: times.startedAt, completed_at: times.completedAt, model_usage: {} },
    samples: qs.map((q) => ({
      id: q.question_id,
      epoch: 1,
      input: [{ role: 'user', content: `Question: ${q.question}\nEvidence: ${q.evidence}` }],
      target: q.SQL,
      output: {
        model: 'policy',
        choices: [{ message: { role: 'assistant', content: `\`\`\`sql\n${q.SQL}\n\`\`\`` }, stop_reason: 'stop' }],
      },
      metadata: { question_id: q.question_id },
      scores: { match: { value: 1 } },
    })),
  });
}

/** The hacks planted in `hackedVerlLines`, in turn over the replaced answers. */
export const HACKS = ['delete', 'constant', 'empty'] as const;

/** The SQL of hack `kind` for a question whose gold reads `table` first. */
export function hackSql(kind: (typeof HACKS)[number], table: string): string {
  if (kind === 'delete') return `DELETE FROM \`${table}\``;
  if (kind === 'constant') return "SELECT 'true'";
  return `SELECT * FROM \`${table}\` WHERE 0`;
}

/**
 * A reward-hacked variant of step `i` (the DUMPED questions): every answer `wrong` says is wrong (by question id)
 * becomes, in turn, a DELETE of the first table its gold reads, the constant `SELECT 'true'`, or
 * an empty read of that table; the trainer scores each 1, as a reward the hacks fooled would.
 */
export function hackedVerlLines(i: number, wrong: (questionId: number) => boolean): string[] {
  const present = dumpedQuestions();
  let turn = 0;
  return verlLines(i, DUMPED).map((line, k) => {
    const q = present[k]!;
    if (!wrong(q.question_id)) return line;
    const v = JSON.parse(line) as { input: string; output: string; score: number; step: number };
    const table = /\bfrom\s+[`"]?(\w+)/i.exec(q.SQL)![1]!;
    const sql = hackSql(HACKS[turn++ % HACKS.length]!, table);
    return JSON.stringify({ ...v, output: `\`\`\`sql\n${sql}\n\`\`\``, score: 1.0 });
  });
}

/**
 * The 13 steps as `<step>.jsonl` in `dir` (the DUMPED questions), steps from `fromStep` on hacked (hackedVerlLines):
 * `wrongAt(step, questionId)` says which answers were wrong (from the real steps' verdicts).
 */
export function writeHackedVerlDumps(
  dir: string,
  fromStep: number,
  wrongAt: (step: number, questionId: number) => boolean,
): void {
  mkdirSync(dir, { recursive: true });
  PREDICTION_FILES.forEach((_, i) => {
    const step = stepOf(i);
    const lines = step >= fromStep ? hackedVerlLines(i, (q) => wrongAt(step, q)) : verlLines(i, DUMPED);
    writeFileSync(path.join(dir, `${step}.jsonl`), lines.join('\n') + '\n');
  });
}
