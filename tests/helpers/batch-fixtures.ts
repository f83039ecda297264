/**
 * Batch output lines written from vLLM's documented schema (vllm/entrypoints/openai/run_batch.py:
 * BatchRequestOutput {id, custom_id, response: BatchResponseData {status_code, request_id, body},
 * error}; a failed request is `make_error_request_output`: status 400, no body, `error` = the
 * message). The chat completion body is vLLM's ChatCompletionResponse shape.
 */
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
