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
  | 'BAD_DATABASE' // bytes that are not an SQLite database
  | 'INTERNAL';

export class WorkbenchError extends Error {
  override readonly name = 'WorkbenchError';
  readonly code: ErrorCode;
  /** File, item or setting the error is about, e.g. `preds.json` or `preds.jsonl:12`. */
  readonly where: string | undefined;

  constructor(code: ErrorCode, message: string, where?: string) {
    super(where ? `${where}: ${message}` : message);
    this.code = code;
    this.where = where;
  }
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

/**
 * Cancellation, one encoding everywhere: an error named `AbortError` (what `AbortSignal`,
 * fetch and the SQL pool throw, and what survives comlink, which keeps only name and message)
 * or an engine error with code `ABORTED`. Guard with `isCancellation`, never `instanceof`.
 */
export function cancelledError(what: string): Error {
  const err = new Error(`${what} was cancelled`);
  err.name = 'AbortError';
  return err;
}

export function isCancellation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return e.name === 'AbortError' || e.code === 'ABORTED';
}
