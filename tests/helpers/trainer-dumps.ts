/**
 * Trainers' 2026 dumps built from real completions: the 13 BIRD mini-dev prediction files
 * (tests/helpers/series-dumps.ts, file i = step (i + 1) * 100, the DUMPED questions: the 139 whose
 * database is here, but the slow question 247), each prediction written as the completion in the exact shape the trainer writes
 * (docs/formats.md gives each writer):
 * - SkyRL eval dumps (`dump_per_dataset_eval_results`): `dumped_evals/global_step_<N>_evals/<data_source>.jsonl`
 *   plus `aggregated_results.jsonl`; each response is a multi-turn SQL episode (probes,
 *   observations, then the prediction in `<solution>`), decoded with the Qwen chat template's
 *   tokens as SkyRL's `tokenizer.decode` leaves them;
 * - TRL GRPO completions (`GRPOTrainer.log`): `completions/completions_<step:05d>.parquet` with
 *   `step`, `prompt`, `completion`, one column per reward function and `advantage`;
 * - prime-rl traces (`FileMonitor.log_episodes`): `rollouts/step_<N>/<kind>/<subset>/traces.jsonl`,
 *   one verifiers v1 `Episode.to_record()` per line, the prediction as the last assistant message
 *   after one `execute_sql` tool call.
 * The stand-in trainer rewards are exact match of the SQL text with the gold (whitespace and case
 * aside; not EX) and a format reward, so the reward columns differ from our verdict.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { float64, int64, utf8, writeParquet } from './parquet-files.ts';
import { DUMPED, keeps, PREDICTION_FILES, questions, stepOf, type QuestionFilter } from './series-dumps.ts';

const norm = (s: string) => s.replace(/\s+/g, ' ').trim().replace(/;$/, '').toLowerCase();

/** The questions `which` keeps (the DUMPED ones), each with prediction file `i`'s SQL for it. */
export function predictionsOf(
  i: number,
  which: QuestionFilter = DUMPED,
): Array<{ q: (typeof questions)[number]; sql: string; exact: number }> {
  const preds = JSON.parse(readFileSync(PREDICTION_FILES[i]!, 'utf8')) as Record<string, string>;
  const keep = keeps(which);
  return questions.flatMap((q, index) => {
    if (!keep(q)) return [];
    const sql = (preds[String(index)] ?? '').split(BIRD_SEPARATOR)[0]!.trim();
    return [{ q, sql, exact: norm(sql) === norm(q.SQL) ? 1 : 0 }];
  });
}

/** SkyRL's observation of a probe (`SQLCodeExecutorToolGroup.sql`): the result text and the turns-left reminder. */
const observation = (result: string, turnsLeft: number) =>
  `\n\n<observation>${result}\n<reminder>You have ${turnsLeft} turns left to complete the task.</reminder></observation>\n\n`;

/** How many probes the episode of question k makes before its solution (0, 1 or 2). */
export const skyrlProbes = (k: number) => k % 3;

/**
 * The decoded SkyRL response of an episode: `probes` probe turns (each `<think>` then `<sql>`,
 * answered by an observation in a user turn), then `<think>` and `<solution>SQL</solution>`.
 */
export function skyrlResponse(sql: string, probes: number): string {
  const turns: string[] = [];
  for (let p = 0; p < probes; p++) {
    const probe = p === 0 ? "SELECT name FROM sqlite_master WHERE type='table'" : `${sql} LIMIT 5`;
    turns.push(
      `<think>I check the data first (probe ${p + 1}).</think>\n<sql>${probe}</sql><|im_end|>\n<|im_start|>user${observation(
        `name\nrow ${p + 1}`,
        4 - p,
      )}<|im_end|>\n<|im_start|>assistant\n`,
    );
  }
  turns.push(`<think>I have what I need.</think>\n<solution>\n${sql}\n</solution><|im_end|>`);
  return turns.join('');
}

/** The lines of `<data_source>.jsonl` for prediction file `i`. */
export function skyrlLines(i: number): string[] {
  return predictionsOf(i).map(({ q, sql, exact }, k) =>
    JSON.stringify({
      input_prompt: `<|im_start|>system\nYou are a data science expert.<|im_end|>\n<|im_start|>user\nDatabase: ${q.db_id}\nExternal Knowledge: ${q.evidence}\nQuestion: ${q.question}<|im_end|>\n<|im_start|>assistant\n`,
      output_response: skyrlResponse(sql, skyrlProbes(k)),
      score: exact,
      stop_reason: 'stop',
      env_class: 'text2sql',
      env_extras: { db_id: q.db_id, reward_spec: { method: 'rule', ground_truth: q.SQL }, data: 'bird', max_turns: 5 },
      data_source: 'bird',
    }),
  );
}

/** `dumped_evals/global_step_<N>_evals/{bird.jsonl, aggregated_results.jsonl}` under `dir` for the given files. */
export function writeSkyrlDumps(dir: string, which: readonly number[]): string[] {
  return which.map((i) => {
    const sub = path.join(dir, 'dumped_evals', `global_step_${stepOf(i)}_evals`);
    mkdirSync(sub, { recursive: true });
    const lines = skyrlLines(i);
    writeFileSync(path.join(sub, 'bird.jsonl'), lines.join('\n') + '\n');
    const mean = lines.reduce((s, l) => s + (JSON.parse(l) as { score: number }).score, 0) / lines.length;
    writeFileSync(path.join(sub, 'aggregated_results.jsonl'), JSON.stringify({ 'eval/bird/avg_score': mean }) + '\n');
    return path.join(sub, 'bird.jsonl');
  });
}

/** The rows of TRL's completions table for prediction file `i`: the stand-in rewards, the advantage (reward − mean). */
export function trlRows(i: number) {
  const preds = predictionsOf(i);
  const rows = preds.map(({ q, sql, exact }, k) => ({
    step: stepOf(i),
    prompt: `system\nYou write SQLite for the database ${q.db_id}.\nuser\nQuestion: ${q.question}\nEvidence: ${q.evidence}\nassistant\n`,
    completion: `\`\`\`sql\n${sql}\n\`\`\``,
    accuracy_reward: exact,
    // A reward function returns None for some samples: TRL logs NaN.
    format_reward: k % 10 === 0 ? NaN : 0.5,
  }));
  const totals = rows.map((r) => r.accuracy_reward + (Number.isNaN(r.format_reward) ? 0 : r.format_reward));
  const mean = totals.reduce((s, x) => s + x, 0) / totals.length;
  return rows.map((r, k) => ({ ...r, advantage: totals[k]! - mean }));
}

/** `completions/completions_<step:05d>.parquet` under `dir` for the given files (pandas' column types: INT64 step, DOUBLE rewards). */
export function writeTrlCompletions(dir: string, which: readonly number[]): string[] {
  const sub = path.join(dir, 'completions');
  mkdirSync(sub, { recursive: true });
  return which.map((i) => {
    const rows = trlRows(i);
    const file = path.join(sub, `completions_${String(stepOf(i)).padStart(5, '0')}.parquet`);
    const cols = ['step', 'prompt', 'completion', 'accuracy_reward', 'format_reward', 'advantage'] as const;
    writeParquet(
      file,
      [
        { name: 'schema', num_children: cols.length },
        int64('step'),
        utf8('prompt'),
        utf8('completion'),
        float64('accuracy_reward'),
        float64('format_reward'),
        float64('advantage'),
      ],
      cols.map((c) => ({
        name: c,
        data: rows.map((r) => (c === 'step' ? BigInt(r.step) : r[c])),
      })),
    );
    return file;
  });
}

/** A verifiers v1 message node as `Episode.to_record()` writes it. */
const node = (parent: number | null, message: Record<string, unknown>, sampled: boolean) => ({
  parent,
  message,
  sampled,
  timestamp: 1767225600,
  token_ids: [],
  mask: [],
});

/** One `traces.jsonl` line: an episode whose trace probes once with `execute_sql`, then answers `answer`. */
export function primeRlEpisode(q: (typeof questions)[number], answer: string, exact: number, step: number, k: number) {
  const task = { type: 'BirdSqlTask', data: { question: q.question, answer: q.SQL, info: { db_id: q.db_id } } };
  const probe = `SELECT COUNT(*) FROM sqlite_master`;
  return {
    id: `ep-${step}-${k}`,
    env: { id: 'bird-sql', name: 'bird-sql' },
    task,
    run: { type: 'train', id: 'run-1', work: { type: 'eval', step, policy: { start: step, end: step } } },
    ok: true,
    errors: [],
    traces: [
      {
        version: 1,
        id: `tr-${step}-${k}`,
        verifiers: { version: '0.3.1' },
        task,
        agent: { config: {}, name: 'agent', trainable: true },
        tools: [{ name: 'execute_sql' }],
        nodes: [
          node(null, { role: 'system', content: `You write SQLite for the database ${q.db_id}.` }, false),
          node(0, { role: 'user', content: `Question: ${q.question}\nEvidence: ${q.evidence}` }, false),
          node(
            1,
            {
              role: 'assistant',
              content: 'Let me look at the schema.',
              tool_calls: [{ id: 'c1', name: 'execute_sql', arguments: JSON.stringify({ sql_query: probe }) }],
            },
            true,
          ),
          node(2, { role: 'tool', tool_call_id: 'c1', content: '[(12,)]', name: 'execute_sql' }, false),
          node(3, { role: 'assistant', content: answer }, true),
        ],
        calls: [],
        rewards: { exact_match: { score: exact, weight: 1 }, format: { score: 1, weight: 0.5 } },
        metrics: {},
        info: {},
        is_completed: true,
        ok: true,
        stop_condition: 'no_tools',
        errors: [],
        timing: { start: 1767225600 },
      },
    ],
  };
}

/**
 * `rollouts/step_<N>/eval/all/traces.jsonl` of prediction file `i` for each given file, and
 * beside it the other splits (`eval/effective`, `train/all`, `train/effective`) holding other
 * completions (prediction file `(i + 1) % 13`), which the default split must leave out.
 */
export function writePrimeRlTraces(dir: string, which: readonly number[]): string[] {
  const lines = (i: number, step: number) =>
    predictionsOf(i).map(({ q, sql, exact }, k) =>
      JSON.stringify(primeRlEpisode(q, `\`\`\`sql\n${sql}\n\`\`\``, exact, step, k)),
    );
  return which.map((i) => {
    const step = stepOf(i);
    const at = (split: string) => path.join(dir, 'rollouts', `step_${step}`, split, 'traces.jsonl');
    for (const split of ['eval/effective', 'train/all', 'train/effective']) {
      mkdirSync(path.dirname(at(split)), { recursive: true });
      writeFileSync(at(split), lines((i + 1) % PREDICTION_FILES.length, step).join('\n') + '\n');
    }
    mkdirSync(path.dirname(at('eval/all')), { recursive: true });
    writeFileSync(at('eval/all'), lines(i, step).join('\n') + '\n');
    return at('eval/all');
  });
}
