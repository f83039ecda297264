/**
 * The app's places as hash routes (`#/runs`, `#/run/<id>/items/<index>.<sample>`), parsed and
 * written here so that links, the address bar and the back button agree. Pure.
 *
 * The explorer's filters ride after a `?` (`#/run/<id>/items?outcome=wrong&db=toxicology`) so
 * that a filtered list can be shared and survives a reload; only the fields that differ from
 * the default query are written.
 */
import { DEFAULT_QUERY, OUTCOMES, SORT_KEYS, type ItemQuery } from '../../core/views/item-query.ts';
import { ALL_DIFFICULTIES } from '../../core/types.ts';
import { BUCKETS, type Bucket } from '../../core/series/stats.ts';

export type Route =
  | { page: 'demo' }
  | { page: 'datasets'; datasetId: string | null }
  | { page: 'runs' }
  | { page: 'run'; runId: string | null }
  | { page: 'items'; runId: string | null; item: ItemKey | null; query?: ItemQuery }
  /** Every sample of one question of a run (`#/run/<id>/question/<gold index>`). */
  | { page: 'question'; runId: string; index: number }
  | { page: 'rl'; runId: string | null }
  /** `question`: one question of both runs side by side (`#/compare/<a>/<b>/question/<gold index>`). */
  | { page: 'compare'; runIds: string[]; question?: number }
  | { page: 'generate' }
  | { page: 'rubrics' }
  | { page: 'rubric-runs' }
  | { page: 'probe'; datasetId: string | null }
  /**
   * The reward playground (`#/playground/<dataset>/<gold index>?run=…&sql=…&f=…&ts=1`): the editor's
   * SQL, the reward formula and the TS switch ride in the address, so an attempt can be shared
   * and survives a reload; `run`: the run whose item opened it (its EX rule, its corrected-gold overlay).
   */
  | {
      page: 'playground';
      datasetId: string | null;
      index: number | null;
      runId?: string;
      attempt?: PlaygroundParams;
    }
  /**
   * Training runs: the list and forms (`#/series`), one series (`#/series/<id>?bucket=learned&sort=flips`:
   * the question grid's filter and order ride in the address), one question across its steps
   * (`#/series/<id>/question/<gold index>`).
   */
  | { page: 'series'; seriesId: string | null; question?: number; grid?: GridQuery };

/** The question grid of a series: which bucket, sorted by what. */
export interface GridQuery {
  bucket: Bucket | null;
  sort: GridSort;
  descending: boolean;
}

export const GRID_SORTS = ['index', 'first', 'last', 'flips'] as const;
export type GridSort = (typeof GRID_SORTS)[number];
export const DEFAULT_GRID: GridQuery = { bucket: null, sort: 'index', descending: false };

function parseGridQuery(search: string): GridQuery {
  const p = new URLSearchParams(search);
  const bucket = p.get('bucket');
  const sort = p.get('sort');
  return {
    bucket: bucket && (BUCKETS as readonly string[]).includes(bucket) ? (bucket as Bucket) : null,
    sort: sort && (GRID_SORTS as readonly string[]).includes(sort) ? (sort as GridSort) : 'index',
    descending: p.get('desc') === '1',
  };
}

function gridQueryText(q: GridQuery): string {
  const p = new URLSearchParams();
  if (q.bucket) p.set('bucket', q.bucket);
  if (q.sort !== 'index') p.set('sort', q.sort);
  if (q.descending) p.set('desc', '1');
  const text = p.toString();
  return text ? '?' + text : '';
}

/** The playground's editor state as the address carries it. */
export interface PlaygroundParams {
  sql: string;
  formula: string;
  ts: boolean;
}

export const DEFAULT_PLAYGROUND_FORMULA = 'ex';

function parsePlaygroundParams(search: string): PlaygroundParams {
  const p = new URLSearchParams(search);
  return { sql: p.get('sql') ?? '', formula: p.get('f') ?? DEFAULT_PLAYGROUND_FORMULA, ts: p.get('ts') === '1' };
}

/** The playground's query: the run (`run`), then the editor's state (`sql`, `f`, `ts`), defaults left out. */
function playgroundParamsText(a: PlaygroundParams | undefined, runId?: string): string {
  const p = new URLSearchParams();
  if (runId) p.set('run', runId);
  if (a?.sql) p.set('sql', a.sql);
  if (a && a.formula !== DEFAULT_PLAYGROUND_FORMULA) p.set('f', a.formula);
  if (a?.ts) p.set('ts', '1');
  const text = p.toString();
  return text ? '?' + text : '';
}

export interface ItemKey {
  index: number;
  sample: number;
}

export type Page = Route['page'];

export const itemKeyText = (k: ItemKey): string => `${k.index}.${k.sample}`;

export function parseItemKey(s: string | undefined): ItemKey | null {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(s ?? '');
  return m ? { index: Number(m[1]), sample: Number(m[2] ?? 0) } : null;
}

const DIFFICULTIES = new Set(['all', ...ALL_DIFFICULTIES]);

/** The explorer query in `search` (a `URLSearchParams` text); unknown values fall back to the default. */
function parseQuery(search: string): ItemQuery {
  const p = new URLSearchParams(search);
  const q: ItemQuery = { ...DEFAULT_QUERY };
  const outcome = p.get('outcome');
  if (outcome && OUTCOMES.some((o) => o.id === outcome)) q.outcome = outcome as ItemQuery['outcome'];
  const difficulty = p.get('difficulty');
  if (difficulty && DIFFICULTIES.has(difficulty)) q.difficulty = difficulty as ItemQuery['difficulty'];
  const db = p.get('db');
  if (db) q.dbId = db;
  q.search = p.get('q') ?? '';
  const sort = p.get('sort');
  if (sort && SORT_KEYS.some((k) => k.id === sort)) q.sort = sort as ItemQuery['sort'];
  q.descending = p.get('desc') === '1';
  return q;
}

/** `?outcome=…&…` for the fields of `q` that differ from the default query; '' when none does. */
export function queryText(q: ItemQuery): string {
  const p = new URLSearchParams();
  if (q.outcome !== DEFAULT_QUERY.outcome) p.set('outcome', q.outcome);
  if (q.difficulty !== DEFAULT_QUERY.difficulty) p.set('difficulty', q.difficulty);
  if (q.dbId !== DEFAULT_QUERY.dbId) p.set('db', q.dbId);
  if (q.search !== '') p.set('q', q.search);
  if (q.sort !== DEFAULT_QUERY.sort) p.set('sort', q.sort);
  if (q.descending) p.set('desc', '1');
  const text = p.toString();
  return text ? '?' + text : '';
}

export function parseHash(hash: string): Route {
  const at = hash.indexOf('?');
  const search = at >= 0 ? hash.slice(at + 1) : null;
  if (at >= 0) hash = hash.slice(0, at);
  const parts = hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((p) => {
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
      if (parts[2] === 'items') {
        const route: Route = { page: 'items', runId: parts[1] ?? null, item: parseItemKey(parts[3]) };
        return search !== null ? { ...route, query: parseQuery(search) } : route;
      }
      if (parts[2] === 'question' && parts[1] && /^\d+$/.test(parts[3] ?? ''))
        return { page: 'question', runId: parts[1], index: Number(parts[3]) };
      return { page: 'run', runId: parts[1] ?? null };
    case 'items':
      return { page: 'items', runId: null, item: null };
    case 'rl':
      return { page: 'rl', runId: null };
    case 'compare': {
      const q = parts.indexOf('question');
      if (q > 0 && /^\d+$/.test(parts[q + 1] ?? ''))
        return { page: 'compare', runIds: parts.slice(1, q), question: Number(parts[q + 1]) };
      return { page: 'compare', runIds: parts.slice(1) };
    }
    case 'rubrics':
      return { page: 'rubrics' };
    case 'rubric-runs':
      return { page: 'rubric-runs' };
    case 'generate':
      return { page: 'generate' };
    case 'probe':
      return { page: 'probe', datasetId: parts[1] ?? null };
    case 'series': {
      const seriesId = parts[1] ?? null;
      if (seriesId && parts[2] === 'question' && /^\d+$/.test(parts[3] ?? ''))
        return { page: 'series', seriesId, question: Number(parts[3]) };
      const route: Route = { page: 'series', seriesId };
      return seriesId && search !== null ? { ...route, grid: parseGridQuery(search) } : route;
    }
    case 'playground': {
      const index = /^\d+$/.test(parts[2] ?? '') ? Number(parts[2]) : null;
      const route: Route = { page: 'playground', datasetId: parts[1] ?? null, index };
      if (search === null) return route;
      const p = new URLSearchParams(search);
      const runId = p.get('run');
      // A query with only the run opens the question with its stored SQL, as a bare address does.
      const attempt =
        runId === null || [...p.keys()].some((k) => k !== 'run') ? { attempt: parsePlaygroundParams(search) } : {};
      return { ...route, ...(runId ? { runId } : {}), ...attempt };
    }
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
      return `#/run/${e(route.runId)}/items${route.item ? '/' + itemKeyText(route.item) : ''}${route.query ? queryText(route.query) : ''}`;
    case 'question':
      return `#/run/${e(route.runId)}/question/${route.index}`;
    case 'rl':
      return route.runId ? `#/run/${e(route.runId)}/rl` : '#/rl';
    case 'compare':
      return [
        '#/compare',
        ...route.runIds.map(e),
        ...(route.question !== undefined ? ['question', String(route.question)] : []),
      ].join('/');
    case 'rubrics':
      return '#/rubrics';
    case 'rubric-runs':
      return '#/rubric-runs';
    case 'generate':
      return '#/generate';
    case 'probe':
      return route.datasetId ? `#/probe/${e(route.datasetId)}` : '#/probe';
    case 'series':
      if (!route.seriesId) return '#/series';
      if (route.question !== undefined) return `#/series/${e(route.seriesId)}/question/${route.question}`;
      return `#/series/${e(route.seriesId)}${route.grid ? gridQueryText(route.grid) : ''}`;
    case 'playground': {
      const base = [
        '#/playground',
        ...(route.datasetId ? [e(route.datasetId)] : []),
        ...(route.datasetId && route.index !== null ? [String(route.index)] : []),
      ].join('/');
      return base + playgroundParamsText(route.attempt, route.datasetId ? route.runId : undefined);
    }
  }
}
