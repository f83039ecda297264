import { describe, expect, it } from 'vitest';
import { navGroups } from '../../../src/ui/shell/nav-groups.ts';
import { routeHash, type Page } from '../../../src/ui/shell/route.ts';

const ALL_PAGES: Page[] = [
  'datasets',
  'runs',
  'series',
  'run',
  'items',
  'generate',
  'rubrics',
  'rubric-runs',
  'rl',
  'compare',
  'probe',
  'playground',
];

describe('navGroups', () => {
  it('groups every screen in the order of the journey: data, runs and results, generation, rubrics, analysis', () => {
    const groups = navGroups({ page: 'demo' }, null);
    expect(groups.map((g) => g.label)).toEqual(['Data', 'Runs and results', 'Generation', 'Rubrics', 'Analysis']);
    expect(groups.map((g) => g.links.map((l) => l.label))).toEqual([
      ['Datasets'],
      ['Runs', 'Training runs', 'Dashboard', 'Items'],
      ['Generate'],
      ['Rubrics', 'Rubric runs'],
      ['RL', 'Compare', 'Reward hacking', 'Playground'],
    ]);
    // Each top-level screen once (the first page is the brand link, outside the groups).
    expect(groups.flatMap((g) => g.links.map((l) => l.page)).sort()).toEqual([...ALL_PAGES].sort());
  });

  it('marks the group of the page shown as current, and no group on the first page', () => {
    expect(navGroups({ page: 'demo' }, null).filter((g) => g.current)).toEqual([]);
    expect(
      navGroups({ page: 'items', runId: 'r1', item: null }, 'r1')
        .filter((g) => g.current)
        .map((g) => g.id),
    ).toEqual(['runs']);
    expect(
      navGroups({ page: 'probe', datasetId: null }, null)
        .filter((g) => g.current)
        .map((g) => g.id),
    ).toEqual(['analysis']);
  });

  it('points the run links at the run shown or last shown, and keeps the compared runs', () => {
    const hrefs = (route: Parameters<typeof navGroups>[0], runId: string | null) =>
      Object.fromEntries(navGroups(route, runId).flatMap((g) => g.links.map((l) => [l.page, routeHash(l.to)])));
    expect(hrefs({ page: 'runs' }, 'a b')).toMatchObject({
      run: '#/run/a%20b',
      items: '#/run/a%20b/items',
      rl: '#/run/a%20b/rl',
    });
    expect(hrefs({ page: 'runs' }, null)).toMatchObject({ run: '#/run', items: '#/items', rl: '#/rl' });
    expect(hrefs({ page: 'compare', runIds: ['x', 'y'] }, null).compare).toBe('#/compare/x/y');
  });
});
