import { describe, expect, it } from 'vitest';
import { WorkbenchError, isWorkbenchError } from '../../src/core/errors.ts';

describe('WorkbenchError', () => {
  it('prefixes the message with the place it is about and keeps the code', () => {
    const e = new WorkbenchError('BAD_JSON', 'unexpected end of input', 'preds.json:3');
    expect(e.message).toBe('preds.json:3: unexpected end of input');
    expect(e.code).toBe('BAD_JSON');
    expect(isWorkbenchError(e)).toBe(true);
  });
  it('is recognised after crossing a realm as a plain object with its name', () => {
    expect(isWorkbenchError({ name: 'WorkbenchError', message: 'x' })).toBe(true);
    expect(isWorkbenchError(new Error('x'))).toBe(false);
  });
});
