/**
 * One error base class for the whole product. `code` is a literal a caller can switch on
 * (comlink and other realm crossings keep `name` and `message` only, so guard with
 * `isWorkbenchError`, which also accepts a plain object carrying the name).
 */
export type ErrorCode =
  | 'BAD_JSON' // a file is not valid JSON / JSONL
  | 'BAD_FORMAT' // valid JSON, wrong shape (a field missing or of the wrong type)
  | 'BAD_OPTION' // a CLI flag or setting is invalid
  | 'MISSING_FILE' // a file or directory that was named does not exist
  | 'MISMATCH' // two inputs do not belong together (predictions vs gold, dataset vs gold)
  | 'BAD_DATABASE' // bytes that are not an SQLite database, or a database that cannot be used
  | 'NOT_FOUND' // something named (a stored run or database, a catalog entry) is not there
  | 'REFUSED' // an input the product will not execute or hold (a limit, a statement it refuses)
  | 'FAILED' // an outside step failed (a fetch, a worker, the policy): the message says which and why
  | 'TOO_LARGE' // a result or computation past its documented bound (a result's values, exact maj@k)
  | 'UNSUPPORTED' // this browser or machine lacks what a feature needs (an API, a secure context)
  | 'INTERNAL'; // a broken invariant of the product itself (a bug): the message names it

/**
 * The one base of the product's errors: a literal `code` to switch on and, where it helps,
 * `where` (the file, item, setting or endpoint), which the message starts with. The layers'
 * classes (WorkbenchError here, StoreError for browser storage, EngineError for engines) differ
 * only in `name` and in their codes.
 */
export abstract class CodedError<C extends string = string> extends Error {
  readonly code: C;
  readonly where: string | undefined;

  constructor(code: C, message: string, where?: string, options?: { cause?: unknown }) {
    super(where ? `${where}: ${message}` : message, options);
    this.code = code;
    this.where = where;
  }
}

export class WorkbenchError extends CodedError<ErrorCode> {
  override readonly name = 'WorkbenchError';
}

export function isWorkbenchError(err: unknown): err is WorkbenchError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'WorkbenchError';
}

/** Message of anything thrown, without "Error: " noise. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string') {
    return (err as { message: string }).message;
  }
  return String(err);
}

/** Plain data for a realm crossing (comlink keeps only name/message/stack of an Error). */
export interface ErrorData {
  name: string;
  message: string;
  code?: string;
  where?: string;
}

export function toErrorData(err: unknown): ErrorData {
  if (typeof err === 'object' && err !== null) {
    const e = err as { name?: unknown; message?: unknown; code?: unknown; where?: unknown };
    return {
      name: typeof e.name === 'string' ? e.name : 'Error',
      message: typeof e.message === 'string' ? e.message : String(err),
      ...(typeof e.code === 'string' ? { code: e.code } : {}),
      ...(typeof e.where === 'string' ? { where: e.where } : {}),
    };
  }
  return { name: 'Error', message: String(err) };
}

/**
 * Cancellation, one encoding everywhere: an error named `AbortError` (what `AbortSignal`,
 * fetch and the SQL pool throw, and what survives comlink, which keeps only name and message)
 * or an engine error with code `ABORTED`. Guard with `isCancellation`, never `instanceof`.
 */
export class CancelledError extends CodedError<'ABORTED'> {
  override readonly name = 'AbortError';
  /** `message` as given: "judging was cancelled", "test-suite build cancelled". */
  constructor(message: string) {
    super('ABORTED', message);
  }
}

export function cancelledError(what: string): CancelledError {
  return new CancelledError(`${what} was cancelled`);
}

export function isCancellation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return e.name === 'AbortError' || e.code === 'ABORTED';
}
