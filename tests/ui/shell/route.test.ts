import { describe, expect, it } from 'vitest';
import { parseHash, routeHash, type Route } from '../../../src/ui/shell/route.ts';

describe('hash routes', () => {
  it.each<[string, Route]>([
    ['', { page: 'demo' }],
    ['#/', { page: 'demo' }],
    ['#/nowhere', { page: 'demo' }],
    ['#/datasets', { page: 'datasets', datasetId: null }],
    ['#/datasets/ab-12', { page: 'datasets', datasetId: 'ab-12' }],
    ['#/runs', { page: 'runs' }],
    ['#/run/r1', { page: 'run', runId: 'r1' }],
    ['#/run/r1/items', { page: 'items', runId: 'r1', item: null }],
    ['#/run/r1/items/12', { page: 'items', runId: 'r1', item: { index: 12, sample: 0 } }],
    ['#/run/r1/items/12.3', { page: 'items', runId: 'r1', item: { index: 12, sample: 3 } }],
    ['#/run/r%20x', { page: 'run', runId: 'r x' }],
    ['#/rubrics', { page: 'rubrics' }],
    ['#/rubric-runs', { page: 'rubric-runs' }],
    ['#/series', { page: 'series', seriesId: null }],
    ['#/series/s1', { page: 'series', seriesId: 's1' }],
    ['#/series/s1/question/42', { page: 'series', seriesId: 's1', question: 42 }],
    [
      '#/series/s1?bucket=learned&sort=flips&desc=1',
      { page: 'series', seriesId: 's1', grid: { bucket: 'learned', sort: 'flips', descending: true } },
    ],
    [
      '#/series/s1?bucket=nope&sort=x',
      { page: 'series', seriesId: 's1', grid: { bucket: null, sort: 'index', descending: false } },
    ],
  ])('reads %j', (hash, route) => {
    expect(parseHash(hash)).toEqual(route);
  });

  it.each([
    '#/',
    '#/datasets',
    '#/datasets/d',
    '#/runs',
    '#/rubrics',
    '#/rubric-runs',
    '#/run/r%20x',
    '#/run/r/items',
    '#/run/r/items/4.1',
    '#/series',
    '#/series/s%201',
    '#/series/s/question/3',
    '#/series/s?bucket=unstable&sort=first',
    // The per-question samples view and a compared question.
    '#/run/r1/question/1334',
    '#/compare/a/b/question/7',
    '#/compare/a/b',
    '#/run/r/items/4.1?outcome=missing-db',
  ])('writes what it reads: %s', (hash) => {
    expect(routeHash(parseHash(hash))).toBe(hash);
  });

  it('carries the explorer filters after a ?, only those that differ from the default', () => {
    const r = parseHash('#/run/r1/items/12.3?outcome=wrong&db=toxicology&q=count%20%28&sort=time&desc=1');
    expect(r).toEqual({
      page: 'items',
      runId: 'r1',
      item: { index: 12, sample: 3 },
      query: {
        outcome: 'wrong',
        difficulty: 'all',
        dbId: 'toxicology',
        search: 'count (',
        sort: 'time',
        descending: true,
      },
    });
    expect(parseHash(routeHash(r))).toEqual(r);
    expect(
      routeHash({
        page: 'items',
        runId: 'r',
        item: null,
        query: { outcome: 'all', difficulty: 'all', dbId: 'all', search: '', sort: 'index', descending: false },
      }),
    ).toBe('#/run/r/items');
    // Unknown values fall back to the default rather than hiding every item.
    expect(parseHash('#/run/r/items?outcome=nonsense&sort=x&difficulty=hardest')).toMatchObject({
      query: { outcome: 'all', sort: 'index', difficulty: 'all' },
    });
    // Spider's hardness levels are difficulties too (docs/spider-rules.md).
    expect(parseHash('#/run/r/items?difficulty=hard')).toMatchObject({ query: { difficulty: 'hard' } });
  });

  it('reads the per-question samples view and a compared question (written back: the table above)', () => {
    expect(parseHash('#/run/r1/question/1334')).toEqual({ page: 'question', runId: 'r1', index: 1334 });
    expect(parseHash('#/compare/a/b/question/7')).toEqual({ page: 'compare', runIds: ['a', 'b'], question: 7 });
  });

  it('ignores an item key that is not a number, and a broken escape', () => {
    expect(parseHash('#/run/r/items/x')).toEqual({ page: 'items', runId: 'r', item: null });
    expect(parseHash('#/run/%E0%A4%A')).toEqual({ page: 'run', runId: '%E0%A4%A' });
  });

  it("reads and writes the playground's question and editor state (SQL, formula, TS) in the address", () => {
    const sql = "SELECT name FROM t WHERE x = 'a & b' -- ?#";
    const r = {
      page: 'playground' as const,
      datasetId: 'd 1',
      index: 42,
      attempt: { sql, formula: '0.9 * ex + 0.1 * format', ts: true },
    };
    const hash = routeHash(r);
    expect(hash.startsWith('#/playground/d%201/42?')).toBe(true);
    expect(parseHash(hash)).toEqual(r);
    // The defaults are left out; a bare playground and a dataset without a question parse.
    expect(
      routeHash({ page: 'playground', datasetId: 'd', index: 3, attempt: { sql: '', formula: 'ex', ts: false } }),
    ).toBe('#/playground/d/3');
    expect(parseHash('#/playground')).toEqual({ page: 'playground', datasetId: null, index: null });
    expect(parseHash('#/playground/d')).toEqual({ page: 'playground', datasetId: 'd', index: null });
    expect(parseHash('#/playground/d/x')).toEqual({ page: 'playground', datasetId: 'd', index: null });
  });

  it('carries the run whose item opened the playground, and reads the addresses made before it', () => {
    const r = {
      page: 'playground' as const,
      datasetId: 'd',
      index: 7,
      runId: 'run 1',
      attempt: { sql: 'SELECT 1', formula: 'ex', ts: true },
    };
    const hash = routeHash(r);
    expect(hash).toBe('#/playground/d/7?run=run+1&sql=SELECT+1&ts=1');
    expect(parseHash(hash)).toEqual(r);
    // The run alone: the question opens with its stored SQL (no editor state in the address).
    expect(routeHash({ page: 'playground', datasetId: 'd', index: 7, runId: 'r' })).toBe('#/playground/d/7?run=r');
    expect(parseHash('#/playground/d/7?run=r')).toEqual({ page: 'playground', datasetId: 'd', index: 7, runId: 'r' });
    // An address without a run (as written before runs were carried) reads as before.
    expect(parseHash('#/playground/d/7?sql=SELECT%202&f=ts')).toEqual({
      page: 'playground',
      datasetId: 'd',
      index: 7,
      attempt: { sql: 'SELECT 2', formula: 'ts', ts: false },
    });
  });
});
