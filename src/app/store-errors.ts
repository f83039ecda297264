/**
 * Errors of the browser store. The UI shows `message` as is: it names the dataset, run or
 * database and says what to do. Validation errors of the files themselves stay
 * `WorkbenchError`s (BAD_DATABASE, BAD_FORMAT, MISMATCH...) from the core; these are the
 * storage's own. Guard with `isStoreError` (works across workers, where only `name` survives).
 */
import { CodedError } from '../core/errors.ts';

export type StoreErrorCode =
  | 'QUOTA_EXCEEDED' // the browser refused to store more bytes
  | 'LOCKED' // another tab holds the run or database being written
  | 'NOT_FOUND' // no dataset/run with that id
  | 'ALREADY_EXISTS' // a run file whose run is already stored
  | 'BAD_RUN_FILE' // a run file that is not a valid run
  | 'ABORTED'; // the user cancelled

export class StoreError extends CodedError<StoreErrorCode> {
  override readonly name = 'StoreError';
  constructor(code: StoreErrorCode, message: string) {
    super(code, message);
  }
}

export function isStoreError(err: unknown): err is StoreError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'StoreError';
}

/** A quota error from IndexedDB, OPFS or a test double: a DOMException named QuotaExceededError. */
export function isQuotaError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'QuotaExceededError';
}

const MiB = 1024 * 1024;
export function mib(bytes: number): string {
  return `${(bytes / MiB).toFixed(bytes < 10 * MiB ? 1 : 0)} MiB`;
}

export type { ErrorData } from '../core/errors.ts';
