import { WorkbenchError } from '../../src/core/errors.ts';

/** The WorkbenchError `fn` throws (any other error is rethrown; none fails the test). */
export function workbenchErrorOf(fn: () => unknown): WorkbenchError {
  try {
    fn();
  } catch (e) {
    if (e instanceof WorkbenchError) return e;
    throw e;
  }
  throw new Error('expected a WorkbenchError');
}

/** What `p` rejects with, read as a coded error's fields (fails the test when `p` resolves). */
export async function rejectionOf(p: Promise<unknown>): Promise<{ name: string; code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { name: string; code: string; message: string };
  }
  throw new Error('expected a rejection');
}
