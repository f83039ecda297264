import { describe, expect, it } from 'vitest';
import type { DatasetRecord } from '../../../src/app/store-ports.ts';
import { probeQuestionsOf } from '../../../src/app/probe-service.ts';
import { parseHash, routeHash } from '../../../src/ui/shell/route.ts';

describe('the probe screen', () => {
  it('has a hash route, with an optional dataset', () => {
    expect(parseHash('#/probe')).toEqual({ page: 'probe', datasetId: null });
    expect(parseHash('#/probe/d%201')).toEqual({ page: 'probe', datasetId: 'd 1' });
    for (const hash of ['#/probe', '#/probe/d%201']) expect(routeHash(parseHash(hash))).toBe(hash);
  });

  it('probes the questions whose database is stored, with their gold SQL and text', () => {
    const dataset = {
      gold: [
        { sql: 'SELECT 1', dbId: 'a' },
        { sql: 'SELECT 2', dbId: 'gone' },
      ],
      questions: [
        { questionId: 7, dbId: 'a', question: 'Q?', evidence: '', goldSql: 'SELECT 1', difficulty: 'simple' },
        { questionId: 8, dbId: 'gone', question: 'R?', evidence: '', goldSql: 'SELECT 2', difficulty: 'moderate' },
      ],
      databases: { a: 'sha' },
    } as unknown as DatasetRecord;
    expect(probeQuestionsOf(dataset)).toEqual([
      { index: 0, questionId: 7, dbId: 'a', difficulty: 'simple', goldSql: 'SELECT 1', question: 'Q?' },
    ]);
  });
});
