/**
 * The navigation, grouped in the order of the user's journey: bring data, run and read the
 * results, generate with a model, judge with rubrics, analyse for RL. Pure, so that the grouping
 * is tested without a browser.
 */
import type { Page, Route } from './route.ts';

interface NavLink {
  page: Page;
  label: string;
  to: Route;
}

interface NavGroup {
  id: 'data' | 'runs' | 'generation' | 'rubrics' | 'analysis';
  label: string;
  links: NavLink[];
  /** The group of the page shown. */
  current: boolean;
}

/** `runId`: the run the dashboard, explorer and RL links open (the one shown or last shown). */
export function navGroups(route: Route, runId: string | null): NavGroup[] {
  const groups: Omit<NavGroup, 'current'>[] = [
    {
      id: 'data',
      label: 'Data',
      links: [{ page: 'datasets', label: 'Datasets', to: { page: 'datasets', datasetId: null } }],
    },
    {
      id: 'runs',
      label: 'Runs and results',
      links: [
        { page: 'runs', label: 'Runs', to: { page: 'runs' } },
        { page: 'series', label: 'Training runs', to: { page: 'series', seriesId: null } },
        { page: 'run', label: 'Dashboard', to: { page: 'run', runId } },
        { page: 'items', label: 'Items', to: { page: 'items', runId, item: null } },
      ],
    },
    {
      id: 'generation',
      label: 'Generation',
      links: [{ page: 'generate', label: 'Generate', to: { page: 'generate' } }],
    },
    {
      id: 'rubrics',
      label: 'Rubrics',
      links: [
        { page: 'rubrics', label: 'Rubrics', to: { page: 'rubrics' } },
        { page: 'rubric-runs', label: 'Rubric runs', to: { page: 'rubric-runs' } },
      ],
    },
    {
      id: 'analysis',
      label: 'Analysis',
      links: [
        { page: 'rl', label: 'RL', to: { page: 'rl', runId } },
        {
          page: 'compare',
          label: 'Compare',
          to: { page: 'compare', runIds: route.page === 'compare' ? route.runIds : [] },
        },
        { page: 'probe', label: 'Reward hacking', to: { page: 'probe', datasetId: null } },
        { page: 'playground', label: 'Playground', to: { page: 'playground', datasetId: null, index: null } },
      ],
    },
  ];
  return groups.map((g) => ({ ...g, current: g.links.some((l) => l.page === route.page) }));
}
