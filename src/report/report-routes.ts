/**
 * Where a report opens: the comparison when it carries one, else its training run when it holds
 * one (the series view is the home of a training run's report), else its run's dashboard.
 */
import { routeHash } from '../ui/shell/route.ts';
import type { ReportPayload } from '../core/report/payload.ts';

export function landingHash(payload: Pick<ReportPayload, 'runs' | 'compare' | 'series'>): string {
  const ids = payload.runs.map((f) => f.run.id);
  if (payload.compare) return routeHash({ page: 'compare', runIds: ids });
  if (payload.series) return routeHash({ page: 'series', seriesId: payload.series.series.id });
  return routeHash({ page: 'run', runId: ids[0]! });
}
