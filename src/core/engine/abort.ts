/**
 * Abort plumbing over the core's `AbortSignalLike` (the core has no DOM types). `onAbort`
 * returns a disposer so that a long-lived run signal does not collect one listener per call.
 */
import type { AbortSignalLike } from '../eval/executor.ts';
import { EngineError } from './engine-error.ts';

type Removable = AbortSignalLike & { removeEventListener?: (type: 'abort', listener: () => void) => void };

export function onAbort(signal: AbortSignalLike | undefined, fn: () => void): () => void {
  if (!signal) return () => undefined;
  let live = true;
  const listener = () => {
    if (live) fn();
  };
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  signal.addEventListener('abort', listener, { once: true });
  return () => {
    live = false;
    (signal as Removable).removeEventListener?.('abort', listener);
  };
}

/** A promise that rejects with ABORTED when the signal fires (never settles without one). */
export function abortPromise(
  signal: AbortSignalLike | undefined,
  what: string,
): { promise: Promise<never>; dispose: () => void } {
  let dispose = () => undefined as void;
  const promise = new Promise<never>((_, reject) => {
    dispose = onAbort(signal, () => reject(new EngineError('ABORTED', `${what} was cancelled`)));
  });
  promise.catch(() => undefined);
  return { promise, dispose };
}

export function throwIfAborted(signal: AbortSignalLike | undefined, what: string): void {
  if (signal?.aborted) throw new EngineError('ABORTED', `${what} was cancelled`);
}
