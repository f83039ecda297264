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
