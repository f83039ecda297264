/**
 * Batch output lines written from vLLM's documented schema (vllm/entrypoints/openai/run_batch.py:
 * BatchRequestOutput {id, custom_id, response: BatchResponseData {status_code, request_id, body},
 * error}; a failed request is `make_error_request_output`: status 400, no body, `error` = the
 * message). The chat completion body is vLLM's ChatCompletionResponse shape. And the CLI's
 * `batch export` / `batch import` arguments on BIRD mini-dev.
 */
import { readFileSync } from 'node:fs';
import { makeBatchPlan, presetBatchSpec, type BatchPlan, type BatchRequestLine } from '../../src/core/batch/batch.ts';
import type { PolicyPreset } from '../../src/core/prompt/presets.ts';
import type { Question } from '../../src/core/types.ts';
import { minidevFlags, type DatasetFiles } from './shared-data.ts';

let counter = 0;
const uuid = () => (++counter).toString(16).padStart(32, '0');

export function vllmOkLine(
  customId: string,
  content: string,
  opts: {
    finish?: 'stop' | 'length';
    promptTokens?: number;
    completionTokens?: number;
    model?: string;
    fingerprint?: string;
    logprobs?: number[];
  } = {},
): string {
  const prompt = opts.promptTokens ?? 321;
  const completion = opts.completionTokens ?? 17;
  return JSON.stringify({
    id: `vllm-${uuid()}`,
    custom_id: customId,
    response: {
      status_code: 200,
      request_id: `vllm-batch-${uuid()}`,
      body: {
        id: `chatcmpl-${uuid()}`,
        object: 'chat.completion',
        created: 1764582000,
        model: opts.model ?? 'Qwen/Qwen2.5-Coder-7B-Instruct',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', reasoning_content: null, content, tool_calls: [] },
            logprobs: opts.logprobs
              ? {
                  content: opts.logprobs.map((lp, i) => ({
                    token: `t${i}`,
                    logprob: lp,
                    bytes: null,
                    top_logprobs: [],
                  })),
                }
              : null,
            finish_reason: opts.finish ?? 'stop',
            stop_reason: null,
          },
        ],
        usage: {
          prompt_tokens: prompt,
          total_tokens: prompt + completion,
          completion_tokens: completion,
          prompt_tokens_details: null,
        },
        prompt_logprobs: null,
        ...(opts.fingerprint ? { system_fingerprint: opts.fingerprint } : {}),
      },
    },
    error: null,
  });
}

/** `make_error_request_output(request, error_msg)`. */
export function vllmErrorLine(customId: string, message: string): string {
  return JSON.stringify({
    id: `vllm-${uuid()}`,
    custom_id: customId,
    response: { status_code: 400, request_id: `vllm-batch-${uuid()}`, body: null },
    error: message,
  });
}

/** The request lines of a batch requests file. */
export const readBatchRequests = (file: string): BatchRequestLine[] =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as BatchRequestLine);

/** The plan `batch export` writes beside its requests file (`in.jsonl` -> `in.plan.json`). */
export const planFileOf = (requests: string) => requests.replace(/\.jsonl$/, '.plan.json');

/** `batch export` of mini-dev's questions for `model` to the requests file `out`, then `extra`: CLI arguments. */
export const minidevBatchExport = (model: string, out: string, ...extra: string[]) => [
  'batch',
  'export',
  ...minidevFlags(),
  '--model',
  model,
  '--out',
  out,
  ...extra,
];

/**
 * `batch import` of run_batch's `output` for the requests exported to `requests` (its plan
 * beside it), on mini-dev (`files` replaces any of its files), then `extra`: CLI arguments.
 */
export const minidevBatchImport = (
  requests: string,
  output: string,
  files: Partial<DatasetFiles> = {},
  ...extra: string[]
) => ['batch', 'import', '--plan', planFileOf(requests), '--output', output, ...minidevFlags(files), ...extra];

/** Two made-up questions on a database `db`, for plans made without files. */
export const PRESET_PLAN_QUESTIONS: Question[] = [0, 1].map((i) => ({
  questionId: 10 + i,
  dbId: 'db',
  question: `How many rows in t${i}?`,
  evidence: i === 0 ? '' : 'rows means records',
  goldSql: 'SELECT 1',
  difficulty: 'simple',
}));

/** A batch plan over PRESET_PLAN_QUESTIONS made under `preset` (seed 3, model `m`), as `batch export --preset` makes it. */
export function presetPlan(preset: PolicyPreset, selfConsistency = false): BatchPlan {
  const made = presetBatchSpec(preset, { selfConsistency, seed: 3, logprobs: false });
  return makeBatchPlan({
    spec: { model: { id: 'm' }, template: made.template, params: made.params },
    contextWindow: null,
    dataset: { name: 'q.json', questions: null, gold: null },
    indices: [0, 1],
    questions: PRESET_PLAN_QUESTIONS,
    preset: made.preset,
  });
}
