/**
 * Generation through batch files, the import half: reads a batch output JSONL as vLLM's
 * `run_batch`, SGLang and OpenAI's Batch API write it, one line per request in any order:
 *
 *   {"id": "vllm-…", "custom_id": "q12-s3",
 *    "response": {"status_code": 200, "request_id": "…", "body": {chat completion}},
 *    "error": null}
 *
 * A failed request has `error` set (vLLM: a message string or an ErrorResponse object; OpenAI:
 * `{"code", "message"}`) and/or a `status_code` other than 200 with no body. Each line becomes a
 * Completion: the text of `choices[0].message.content`, its `finish_reason`, `usage` token
 * counts, the mean token log-probability when `logprobs` were asked, the served `model` and
 * `system_fingerprint`; a failed line becomes an error completion with the line's message. A
 * line that is not JSON (a job killed mid-write) is reported and its request counts as missing.
 */
import { WorkbenchError } from '../errors.ts';
import type { Completion } from '../engine/engine.ts';
import { meanLogprob } from '../engine/sampling.ts';
import { describeValue, isRecord } from '../formats/questions.ts';
import { planCustomIds, type BatchPlan } from './batch.ts';

interface BatchResult {
  customId: string;
  /** `seed` is filled in by the batch engine from the plan. */
  completion: Completion;
  /** Where the line was: `out.jsonl line 12`. */
  where: string;
}

export interface BatchOutput {
  results: Map<string, BatchResult>;
  /** Lines that could not be used, as sentences naming the file and line. */
  problems: string[];
}

function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  if (isRecord(error)) {
    // vLLM's ErrorResponse nests {"error": {"message", "type", "code"}}; older ones and OpenAI's are flat.
    const inner = isRecord(error.error) ? error.error : error;
    const msg = typeof inner.message === 'string' ? inner.message : JSON.stringify(error);
    const code = inner.code ?? inner.type;
    return code !== undefined && code !== null ? `${msg} (${String(code)})` : msg;
  }
  return JSON.stringify(error);
}

function failed(where: string, customId: string, message: string): BatchResult {
  return {
    customId,
    where,
    completion: {
      text: '',
      finishReason: 'error',
      tokensIn: null,
      tokensOut: null,
      latencyMs: 0,
      seed: null,
      meanLogprob: null,
      error: `${where} (${customId}): ${message}`,
    },
  };
}

const count = (v: unknown): number | null => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : null);

/** One parsed output line as a result. */
function lineResult(line: Record<string, unknown>, customId: string, where: string): BatchResult {
  const response = isRecord(line.response) ? line.response : null;
  const status = response && typeof response.status_code === 'number' ? response.status_code : null;
  if (line.error !== null && line.error !== undefined) {
    return failed(where, customId, `${status !== null ? `status ${status}: ` : ''}${errorText(line.error)}`);
  }
  if (!response) return failed(where, customId, 'the line has no "response" and no "error"');
  if (status !== null && status !== 200)
    return failed(where, customId, `status ${status}: ${errorText(response.body ?? 'no body')}`);
  const body = isRecord(response.body) ? response.body : null;
  const choice = body && Array.isArray(body.choices) && isRecord(body.choices[0]) ? body.choices[0] : null;
  if (!body || !choice)
    return failed(where, customId, `response.body has no choices[0] (found ${describeValue(response.body)})`);
  const message = isRecord(choice.message) ? choice.message : {};
  // Text or nothing (a reply with no content): anything else is not an answer, and must not win
  // over a good answer to the same custom_id in another line or file.
  if (message.content !== undefined && message.content !== null && typeof message.content !== 'string')
    return failed(where, customId, `choices[0].message.content is ${describeValue(message.content)}, not text`);
  const text = typeof message.content === 'string' ? message.content : '';
  const usage = isRecord(body.usage) ? body.usage : {};
  const lp =
    isRecord(choice.logprobs) && Array.isArray(choice.logprobs.content)
      ? choice.logprobs.content.map((t) => (isRecord(t) && typeof t.logprob === 'number' ? t.logprob : NaN))
      : null;
  const completion: Completion = {
    text,
    // 'abort' would stop the generation loop; any reason other than 'length' is a normal end.
    finishReason: choice.finish_reason === 'length' ? 'length' : 'stop',
    tokensIn: count(usage.prompt_tokens),
    tokensOut: count(usage.completion_tokens),
    latencyMs: 0,
    seed: null,
    meanLogprob: meanLogprob(lp),
  };
  if (typeof body.model === 'string') completion.servedModel = body.model;
  if (typeof body.system_fingerprint === 'string') completion.systemFingerprint = body.system_fingerprint;
  return { customId, completion, where };
}

const isOk = (r: BatchResult) => r.completion.finishReason !== 'error';

/**
 * One output file read line by line (the CLI streams a file through it, so no output file is ever
 * one string; `parseBatchOutput` feeds it a text). `finish` throws only when no line of it is
 * usable at all.
 */
export class BatchOutputReader {
  readonly #results = new Map<string, BatchResult>();
  readonly #problems: string[] = [];
  #parsed = 0;
  #lineNo = 0;

  constructor(readonly fileName: string) {}

  /** The next line, without its line ending. */
  line(text: string): void {
    const raw = ++this.#lineNo === 1 ? text.replace(/^\uFEFF/, '') : text;
    if (raw.trim() === '') return;
    const where = `${this.fileName} line ${this.#lineNo}`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      this.#problems.push(`${where} is not JSON (a line cut short?): its request counts as missing`);
      return;
    }
    if (!isRecord(value) || typeof value.custom_id !== 'string') {
      this.#problems.push(`${where} has no "custom_id" string: skipped`);
      return;
    }
    this.#parsed++;
    const r = lineResult(value, value.custom_id, where);
    const had = this.#results.get(r.customId);
    if (had)
      this.#problems.push(
        `${where} repeats custom_id ${r.customId} (first at ${had.where}): ${had && isOk(had) && !isOk(r) ? 'the earlier answer is kept' : 'this line is kept'}`,
      );
    if (!had || isOk(r) || !isOk(had)) this.#results.set(r.customId, r);
  }

  finish(): BatchOutput {
    if (this.#parsed === 0) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        'no line is a batch output line {"custom_id", "response", "error"}: is this the output of run_batch (not its input)?',
        this.fileName,
      );
    }
    return { results: this.#results, problems: this.#problems };
  }
}

/** Parses one output file's text. Throws only when no line of it is usable at all. */
export function parseBatchOutput(text: string, fileName: string): BatchOutput {
  const reader = new BatchOutputReader(fileName);
  for (const line of text.split(/\r?\n/)) reader.line(line);
  return reader.finish();
}

/**
 * Several output files as one (a first run and the runs of its missing lines): a successful
 * answer wins over an error, a later file over an earlier one.
 */
export function mergeBatchOutputs(outputs: readonly BatchOutput[]): BatchOutput {
  const results = new Map<string, BatchResult>();
  const problems: string[] = [];
  for (const o of outputs) {
    problems.push(...o.problems);
    for (const [id, r] of o.results) {
      const had = results.get(id);
      if (!had || isOk(r) || !isOk(had)) results.set(id, r);
    }
  }
  return { results, problems };
}

export interface BatchCoverage {
  /** custom_ids of the plan with a successful answer. */
  answered: number;
  /** custom_ids of the plan with no line in the output. */
  missing: string[];
  /** custom_ids of the plan whose line is an error. */
  failed: string[];
  /** custom_ids in the output that the plan does not ask for (another plan's output?). */
  unknown: string[];
}

export function batchCoverage(plan: Pick<BatchPlan, 'indices' | 'spec'>, output: BatchOutput): BatchCoverage {
  const ids = planCustomIds(plan);
  const wanted = new Set(ids);
  const missing: string[] = [];
  const failedIds: string[] = [];
  let answered = 0;
  for (const id of ids) {
    const r = output.results.get(id);
    if (!r) missing.push(id);
    else if (isOk(r)) answered++;
    else failedIds.push(id);
  }
  const unknown = [...output.results.keys()].filter((id) => !wanted.has(id));
  return { answered, missing, failed: failedIds, unknown };
}

/** One line summing up coverage, for the CLI and the app. */
export function coverageText(c: BatchCoverage, total: number): string {
  return (
    `${c.answered} of ${total} requests answered, ${c.failed.length} failed, ${c.missing.length} missing` +
    (c.unknown.length
      ? `, ${c.unknown.length} lines with a custom_id the plan does not ask for (${c.unknown.slice(0, 3).join(', ')}${c.unknown.length > 3 ? ', …' : ''})`
      : '')
  );
}
