/**
 * The app's places as hash routes (`#/runs`, `#/run/<id>/items/<index>.<sample>`), parsed and
 * written here so that links, the address bar and the back button agree. Pure.
 */
export type Route =
  | { page: 'demo' }
  | { page: 'datasets'; datasetId: string | null }
  | { page: 'runs' }
  | { page: 'run'; runId: string | null }
  | { page: 'items'; runId: string | null; item: ItemKey | null }
  | { page: 'rl'; runId: string | null }
  | { page: 'compare'; runIds: string[] }
  | { page: 'generate' }
  | { page: 'rubrics' }
  | { page: 'rubric-runs' }
  | { page: 'probe'; datasetId: string | null };

export interface ItemKey {
  index: number;
  sample: number;
}

export type Page = Route['page'];

export const itemKeyText = (k: ItemKey): string => `${k.index}.${k.sample}`;

function parseItemKey(s: string | undefined): ItemKey | null {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(s ?? '');
  return m ? { index: Number(m[1]), sample: Number(m[2] ?? 0) } : null;
}

export function parseHash(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  switch (parts[0]) {
    case 'datasets':
      return { page: 'datasets', datasetId: parts[1] ?? null };
    case 'runs':
      return { page: 'runs' };
    case 'run':
      if (parts[2] === 'rl') return { page: 'rl', runId: parts[1] ?? null };
      if (parts[2] === 'items') return { page: 'items', runId: parts[1] ?? null, item: parseItemKey(parts[3]) };
      return { page: 'run', runId: parts[1] ?? null };
    case 'items':
      return { page: 'items', runId: null, item: null };
    case 'rl':
      return { page: 'rl', runId: null };
    case 'compare':
      return { page: 'compare', runIds: parts.slice(1) };
    case 'rubrics':
      return { page: 'rubrics' };
    case 'rubric-runs':
      return { page: 'rubric-runs' };
    case 'generate':
      return { page: 'generate' };
    case 'probe':
      return { page: 'probe', datasetId: parts[1] ?? null };
    default:
      return { page: 'demo' };
  }
}

export function routeHash(route: Route): string {
  const e = encodeURIComponent;
  switch (route.page) {
    case 'demo':
      return '#/';
    case 'datasets':
      return route.datasetId ? `#/datasets/${e(route.datasetId)}` : '#/datasets';
    case 'runs':
      return '#/runs';
    case 'run':
      return route.runId ? `#/run/${e(route.runId)}` : '#/run';
    case 'items':
      if (!route.runId) return '#/items';
      return `#/run/${e(route.runId)}/items${route.item ? '/' + itemKeyText(route.item) : ''}`;
    case 'rl':
      return route.runId ? `#/run/${e(route.runId)}/rl` : '#/rl';
    case 'compare':
      return ['#/compare', ...route.runIds.map(e)].join('/');
    case 'rubrics':
      return '#/rubrics';
    case 'rubric-runs':
      return '#/rubric-runs';
    case 'generate':
      return '#/generate';
    case 'probe':
      return route.datasetId ? `#/probe/${e(route.datasetId)}` : '#/probe';
  }
}
