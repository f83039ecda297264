import { describe, expect, it } from 'vitest';
import { parseHash, routeHash, type Route } from '../../../src/ui/shell/route.ts';
import { percent2, points, pValue } from '../../../src/ui/rl/compare-format.ts';

describe('RL view and comparison routes', () => {
  it.each<[string, Route]>([
    ['#/run/r1/rl', { page: 'rl', runId: 'r1' }],
    ['#/rl', { page: 'rl', runId: null }],
    ['#/compare', { page: 'compare', runIds: [] }],
    ['#/compare/a', { page: 'compare', runIds: ['a'] }],
    ['#/compare/a/b%2Fc/d', { page: 'compare', runIds: ['a', 'b/c', 'd'] }],
  ])('reads %j', (hash, route) => {
    expect(parseHash(hash)).toEqual(route);
  });

  it('writes what it reads', () => {
    for (const hash of ['#/run/r%20x/rl', '#/rl', '#/compare', '#/compare/a/b%2Fc'])
      expect(routeHash(parseHash(hash))).toBe(hash);
  });
});

describe('comparison number formats', () => {
  it('writes points with a sign, percentages and p-values as the CLI table does', () => {
    expect([points(2.5), points(-1), points(0), points(NaN)]).toEqual(['+2.50', '-1.00', '0.00', '–']);
    expect([percent2(12.345), percent2(NaN)]).toEqual(['12.35', '–']);
    expect([pValue(0.5), pValue(0.00001234)]).toEqual(['0.5000', '1.23e-5']);
  });
});
