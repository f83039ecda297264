/**
 * An RL-shaped run of 100,000 samples made in the test from real material (no data copied): the
 * 500 BIRD mini-dev questions x 200 samples, each sample's SQL one of the 13 published models'
 * predictions for its question, its completion a reasoning text of its own (the question's and
 * evidence's words in a per-sample order, with the sample's numbers) around that SQL, verdicts
 * and result keys drawn per question (a seeded generator), so pass@k, maj@k and the explorer's
 * filters have real spread. What a report of such a run weighs and how fast it opens is the
 * figure of docs/report.md (`report_bytes_per_sample`, `report_open_ms_100k`).
 */
import { readFileSync } from 'node:fs';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import {
  DEFAULT_RUN_CONFIG,
  RUN_FILE_FORMAT,
  RUN_FILE_VERSION,
  type RunFile,
  type SampleRecord,
} from '../../src/core/run/types.ts';
import { mulberry32 } from '../../src/core/util/rng.ts';
import { sha256Hex } from '../../src/core/util/sha256.ts';
import { PREDICTION_FILES } from './series-dumps.ts';
import { readSharedText } from './shared-data.ts';

export const LARGE_QUESTIONS = 500;
export const LARGE_PER_QUESTION = 200;

export function largeRunFile(perQuestion = LARGE_PER_QUESTION, seed = 27): RunFile {
  const questionsText = readSharedText('bird', 'minidev', 'mini_dev_sqlite.json');
  const questions = parseQuestions(questionsText, 'mini_dev_sqlite.json');
  const variants = PREDICTION_FILES.map((f) =>
    Object.values(JSON.parse(readFileSync(f, 'utf8')) as Record<string, unknown>).map(
      (v) => String(v).split(BIRD_SEPARATOR)[0]!,
    ),
  );
  const rng = mulberry32(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rng.next() * list.length)]!;
  const samples: SampleRecord[] = [];
  for (const [index, q] of questions.entries()) {
    const p = rng.next();
    const words = `${q.question} ${q.evidence}`.split(/\s+/).filter(Boolean);
    for (let sample = 0; sample < perQuestion; sample++) {
      const sql = pick(variants)[index] ?? q.goldSql;
      const u = rng.next();
      const ex: 0 | 1 = u < p ? 1 : 0;
      const failed = ex === 0 && u > 0.93;
      const steps = Array.from({ length: 12 }, () => pick(words)).join(' ');
      const completion = `<think>\nAttempt ${sample}: the question is about ${steps}. I join the tables on their keys and filter (${Math.floor(rng.next() * 1000)} rows expected).\n</think>\n\`\`\`sql\n${sql}\n\`\`\``;
      samples.push({
        index,
        questionId: q.questionId,
        dbId: q.dbId,
        difficulty: q.difficulty,
        ex,
        softF1: ex === 1 ? 1 : failed ? 0 : Math.round(rng.next() * 100) / 100,
        rves: null,
        timeRatio: null,
        status: failed ? 'error' : 'ok',
        error: failed ? 'prediction: no such column: T3.id' : null,
        mutatedDb: false,
        extraction: { rule: 'fenced-sql-last', thinkStripped: true },
        predRowCount: failed ? null : 1 + Math.floor(rng.next() * 40),
        goldRowCount: 1 + (index % 17),
        elapsedMs: Math.round(rng.next() * 40000) / 100,
        sample,
        sql,
        goldSql: q.goldSql,
        completion,
        format: 1,
        reward: ex,
        ...(failed ? {} : { resultKey: ex ? `q${index}-gold` : `q${index}-w${Math.floor(rng.next() * 4)}` }),
      });
    }
  }
  return {
    format: RUN_FILE_FORMAT,
    version: RUN_FILE_VERSION,
    run: {
      id: 'rl-100k',
      name: `RL checkpoint: ${LARGE_QUESTIONS} questions x ${perQuestion} samples`,
      createdAt: '2026-03-01T12:00:00.000Z',
      updatedAt: '2026-03-01T12:00:00.000Z',
      status: 'done',
      source: { kind: 'generation', engine: 'openai-compatible', model: 'policy-step-1200', template: 'bird-cot' },
      dataset: {
        id: 'mini_dev_sqlite.json',
        name: 'BIRD mini-dev (SQLite)',
        questions: {
          name: 'mini_dev_sqlite.json',
          sha256: sha256Hex(questionsText),
          bytes: Buffer.byteLength(questionsText),
        },
        gold: null,
        databases: {},
      },
      subset: { description: 'every question', indices: questions.map((_, i) => i) },
      config: { ...DEFAULT_RUN_CONFIG },
      samplesPerQuestion: perQuestion,
      executor: 'sql.js 1.17.0',
      sqliteVersion: '3.49.1',
    },
    samples,
    questions: questions.map((q, index) => ({
      index,
      questionId: q.questionId,
      dbId: q.dbId,
      question: q.question,
      evidence: q.evidence,
    })),
  };
}
