/**
 * Errors of the engine layer. `code` says what the run layer should do: GPU_LOST pauses a run
 * (reload the page, resume), ABORTED is the user's own cancel, the rest fail the load or mark
 * a sample as an error. Worker boundaries keep only `name` and `message`, so engines that talk
 * to a worker send `{ code, message }` as plain data and rebuild the error with `engineError`.
 */
import { CodedError, isCancellation } from '../errors.ts';
export type EngineErrorCode =
  | 'CONFIG' // an engine setting or sampling parameter is invalid
  | 'NOT_LOADED' // generate() before load(), or after unload()
  | 'MODEL_REJECTED' // the file is not a usable model (bad GGUF, unsupported version, empty vocabulary)
  | 'MODEL_MISSING' // a file of the model is not where it should be (HTTP 404, unknown id)
  | 'UNSUPPORTED' // this machine lacks what the model needs (WebGPU, shader-f16, memory)
  | 'GPU_LOST' // the GPU device was lost or ran out of memory: pause, reload, resume
  | 'HTTP' // a server answered with an error status (after retries where they apply)
  | 'NETWORK' // a server could not be reached (after retries)
  | 'BAD_REPLY' // a server's reply does not have the expected shape
  | 'ABORTED' // cancelled through the signal or interrupt()
  | 'INTERNAL';

/** `where`: the endpoint, file or model the error is about. */
export class EngineError extends CodedError<EngineErrorCode> {
  override readonly name = 'EngineError';
}

/** Plain-data form of an EngineError, for worker messages. */
export interface EngineErrorData {
  code: EngineErrorCode;
  message: string;
}

export function isEngineError(err: unknown): err is EngineError {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { name?: unknown }).name === 'EngineError' &&
    typeof (err as { code?: unknown }).code === 'string'
  );
}

/** Rebuilds an error sent as plain data (the message already names its place). */
export function engineError(data: EngineErrorData): EngineError {
  return new EngineError(data.code, data.message);
}

export function toEngineErrorData(err: unknown, fallback: EngineErrorCode = 'INTERNAL'): EngineErrorData {
  if (isEngineError(err)) return { code: err.code, message: err.message };
  if (isCancellation(err)) return { code: 'ABORTED', message: 'generation was cancelled' };
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : String(err);
  return { code: fallback, message };
}
