/** The playground's questions and attempts in the tests (src/core/playground/try-attempt.ts). */
import type { SqlExecutor } from '../../src/core/eval/executor.ts';
import type { Question } from '../../src/core/types.ts';
import { tryAttempt, type AttemptRequest, type PlaygroundQuestion } from '../../src/core/playground/try-attempt.ts';

/** A question of a questions file (at gold position `index`) as the playground opens it. */
export function playgroundQuestion(q: Question, index: number, goldSql = q.goldSql, dbId = q.dbId): PlaygroundQuestion {
  return {
    index,
    questionId: q.questionId,
    dbId,
    difficulty: q.difficulty,
    goldSql,
    question: q.question,
    evidence: q.evidence,
  };
}

/** One attempt as the playground runs it by default (EX and Soft-F1, formula `ex`, 50 rows), `extra` replacing any setting. */
export function attemptOn(
  executor: SqlExecutor,
  question: PlaygroundQuestion,
  sql: string,
  extra: Partial<AttemptRequest> = {},
) {
  return tryAttempt(executor, {
    question,
    sql,
    metrics: [],
    timeoutMs: 30_000,
    vesIterations: 100,
    formula: 'ex',
    previewRows: 50,
    ...extra,
  });
}
