/**
 * One cancellation encoding everywhere (`isCancellation`): every cancel the product throws is a
 * CodedError with code ABORTED named AbortError, and stays recognisable after a worker
 * boundary (plain error data). The test-suite build is cancelled on the demo's real database
 * with sql.js in-process (the worker's own ports, workers/sql-suite.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import initSqlJs from 'sql.js';
import { describe, expect, it } from 'vitest';
import {
  CancelledError,
  CodedError,
  cancelledError,
  isCancellation,
  toErrorData,
  WorkbenchError,
} from '../../src/core/errors.ts';
import { JudgeAbortedError, Judge } from '../../src/core/rubric/judge.ts';
import { buildSuite, DEFAULT_SUITE_SPEC } from '../../src/core/ts/suite.ts';
import { errorFromData } from '../../src/adapters/browser/import-client.ts';
import { mapWebLlmError } from '../../src/adapters/engines/webllm-errors.ts';
import { sqlConn } from '../../workers/sql-suite.ts';
import type { Engine } from '../../src/core/engine/engine.ts';
import { ROOT } from '../helpers/cli.ts';

const cancels = (err: unknown) => {
  expect(err).toBeInstanceOf(CodedError);
  expect((err as CodedError).code).toBe('ABORTED');
  expect((err as Error).name).toBe('AbortError');
  expect(isCancellation(err)).toBe(true);
  // After a realm crossing (comlink keeps name and message; the import and analysis workers send this data).
  expect(isCancellation(toErrorData(err))).toBe(true);
  expect(isCancellation(errorFromData(toErrorData(err)))).toBe(true);
};

describe('cancellation is one encoding', () => {
  it('cancelledError and CancelledError carry code ABORTED and the name AbortError', () => {
    const e = cancelledError('the probe');
    expect(e.message).toBe('the probe was cancelled');
    cancels(e);
    cancels(new CancelledError('import cancelled'));
  });

  it('a test-suite build cancelled between candidates is a cancellation (it was a plain Error)', async () => {
    const SQL = await initSqlJs();
    const original = new SQL.Database(
      new Uint8Array(readFileSync(path.join(ROOT, 'public/demo/city_library/city_library.sqlite'))),
    );
    let asked = 0;
    let err: unknown = null;
    try {
      buildSuite(['SELECT count(*) FROM books'], DEFAULT_SUITE_SPEC, {
        original: sqlConn(original),
        newDb: () => {
          throw new WorkbenchError('INTERNAL', 'no candidate may be built after the cancel');
        },
        query: () => null,
        cancelled: () => ++asked > 0,
      });
    } catch (e) {
      err = e;
    } finally {
      original.close();
    }
    expect(asked).toBe(1);
    expect((err as Error).message).toBe('test-suite build cancelled');
    cancels(err);
  });

  it('the judge cancelled through its signal rejects with JudgeAbortedError, a cancellation', async () => {
    const controller = new AbortController();
    controller.abort();
    let calls = 0;
    // Test double for a judge model (no weights can run here): it must never be called.
    const engine = {
      kind: 'test-double',
      generate: async () => {
        calls++;
        return [];
      },
    } as unknown as Engine;
    const judge = new Judge({ engine, model: 'test-double', signal: controller.signal });
    const err = await judge.likert({ question: 'q', response: 'SELECT 1' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(JudgeAbortedError);
    expect(calls).toBe(0);
    cancels(err);
  });

  it('a cancel coded ABORTED under another name stays one across the import worker and in the WebLLM mapping', () => {
    // An engine's cancel (EngineError, code ABORTED) as plain data, and as a bare coded object.
    const data = { name: 'EngineError', message: 'cancelled', code: 'ABORTED' };
    expect(isCancellation(data)).toBe(true);
    cancels(errorFromData(data));
    const mapped = mapWebLlmError({ name: 'Error', message: 'stopped', code: 'ABORTED' });
    expect(mapped.code).toBe('ABORTED');
    expect(isCancellation(mapped)).toBe(true);
  });

  it('an error that is not a cancel is not taken for one', () => {
    expect(isCancellation(new WorkbenchError('FAILED', 'the policy failed'))).toBe(false);
    expect(isCancellation(new Error('x'))).toBe(false);
    expect(isCancellation(null)).toBe(false);
  });
});
