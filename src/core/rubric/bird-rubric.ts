/**
 * Built-in rubrics for text-to-SQL (data), and how a BIRD sample is shown to them.
 * Weights follow the paper's mapping (essential 1.0, important 0.7, optional 0.3, pitfall 0.9
 * phrased as avoidance).
 */
import type { Question } from '../types.ts';
import { validateRubric, type Rubric } from './model.ts';
import type { SampleToScore } from './score.ts';
import type { Schema, SqlExecutionFacts } from './sql-checks.ts';

/** The official EX as a criterion. */
const MATCHES_GOLD = {
  id: 'matches-gold',
  title: 'Result matches gold',
  description: 'The query returns the same set of rows as the gold query (official EX).',
  category: 'essential',
  check: { kind: 'sql', name: 'matches-gold' },
};

/** RaR with one correctness criterion collapses to the verifiable reward: explicit score = EX. */
export const EX_ONLY_RUBRIC: Rubric = validateRubric({
  id: 'ex-only',
  title: 'Result matches gold (EX)',
  items: [MATCHES_GOLD],
});

export const BIRD_RUBRIC: Rubric = validateRubric({
  id: 'bird-sql-v1',
  title: 'BIRD text-to-SQL (programmatic + judge)',
  items: [
    MATCHES_GOLD,
    {
      id: 'executes',
      title: 'Executes without error',
      description: 'The query runs on the database without an error or a timeout.',
      category: 'important',
      check: { kind: 'sql', name: 'executes' },
    },
    {
      id: 'schema-only',
      title: 'Only schema tables and columns',
      description: 'Every table and column the query names exists in the database schema.',
      category: 'important',
      check: { kind: 'sql', name: 'schema-only' },
    },
    {
      id: 'column-count',
      title: 'Returns the columns asked for',
      description: 'The query returns as many columns as the question asks for (the gold result has).',
      category: 'important',
      check: { kind: 'sql', name: 'column-count' },
    },
    {
      id: 'evidence-formula',
      title: 'Uses the evidence formula',
      description:
        'When the evidence defines a formula (name = expression), the query computes it with its operators, functions and columns.',
      category: 'important',
      check: { kind: 'sql', name: 'uses-evidence-formula' },
    },
    {
      id: 'no-write',
      title: 'Avoids writing to the database',
      description:
        'The query only reads: no INSERT, UPDATE, DELETE, DROP or other statement that changes the database.',
      category: 'pitfall',
      check: { kind: 'sql', name: 'no-write' },
    },
    {
      id: 'answers-all-parts',
      title: 'Answers every part of the question',
      description:
        'The query applies every condition, grouping, ordering and limit the question asks for, and nothing it does not ask for.',
      category: 'essential',
      check: { kind: 'judge' },
    },
    {
      id: 'avoids-hardcoding',
      title: 'Avoids hard-coding the answer',
      description:
        'The query computes its result from the database instead of returning constant values the question asks it to find.',
      category: 'pitfall',
      check: { kind: 'judge' },
    },
    {
      id: 'simple',
      title: 'No needless complexity',
      description: 'The query has no redundant joins, subqueries or conditions.',
      category: 'optional',
      check: { kind: 'judge' },
    },
  ],
});

/** BIRD's question as the judge reads it: the question and its evidence. */
function birdQuestionText(q: Pick<Question, 'question' | 'evidence'>): string {
  return q.evidence ? `${q.question}\nEvidence (external knowledge): ${q.evidence}` : q.question;
}

/** A BIRD sample for scoreSample: the gold SQL is the judge's reference. */
export function birdSample(args: {
  question: Pick<Question, 'question' | 'evidence' | 'goldSql'>;
  sql: string;
  /** The completion the SQL was extracted from; the SQL itself when there was none. */
  completion?: string;
  execution: SqlExecutionFacts | null;
  schema?: Schema | null;
}): SampleToScore {
  return {
    question: birdQuestionText(args.question),
    reference: args.question.goldSql,
    completion: args.completion ?? args.sql,
    sql: { sql: args.sql, execution: args.execution, schema: args.schema ?? null, evidence: args.question.evidence },
  };
}
