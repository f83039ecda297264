import type { BirdQuestionRow } from './shared-data.ts';

/**
 * One row of lm-evaluation-harness's `--log_samples` file for a BIRD question, with the fields
 * its writer emits (docs/formats.md): the question as `doc`, the prompt and generation kwargs
 * as `arguments`, the raw generations as `resps`, the first filter's answer as `filtered_resps`.
 */
export function lmEvalSampleRow(
  q: BirdQuestionRow,
  row: {
    docId: number;
    prompt: string;
    genKwargs: Record<string, unknown>;
    resps: string[];
    filtered: string;
    filter: string;
    exactMatch: number;
  },
) {
  return {
    doc_id: row.docId,
    doc: { question_id: q.question_id, db_id: q.db_id, question: q.question, evidence: q.evidence, SQL: q.SQL },
    target: q.SQL,
    arguments: { gen_args_0: { arg_0: row.prompt, arg_1: row.genKwargs } },
    resps: [row.resps],
    filtered_resps: [row.filtered],
    filter: row.filter,
    metrics: ['exact_match'],
    doc_hash: 'h',
    prompt_hash: 'p',
    target_hash: 't',
    exact_match: row.exactMatch,
  };
}
