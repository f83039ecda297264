/**
 * The report's own address: `#/series` shows the training run (not one of the app's routes
 * yet; ui/shell/route.ts parses it as the first page). Everything else is the app's routes.
 */
import { routeHash } from '../ui/shell/route.ts';
import type { ReportPayload } from '../core/report/payload.ts';

export const SERIES_HASH = '#/series';

/** Where a report opens: the comparison when it carries one, else its run's dashboard. */
export function landingHash(payload: ReportPayload): string {
  const ids = payload.runs.map((f) => f.run.id);
  return payload.compare ? routeHash({ page: 'compare', runIds: ids }) : routeHash({ page: 'run', runId: ids[0]! });
}
