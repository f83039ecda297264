/** The current route, kept in step with `location.hash` (back and forward buttons included). */
import { parseHash, routeHash, type Route } from './route.ts';

export class Router {
  #route = $state.raw<Route>(parseHash(location.hash));
  /** The run last shown on the dashboard or the explorer, for the navigation links. */
  #lastRunId = $state<string | null>(null);

  constructor() {
    window.addEventListener('hashchange', () => this.#set(parseHash(location.hash)));
    this.#set(this.#route);
  }

  get route(): Route {
    return this.#route;
  }
  get lastRunId(): string | null {
    return this.#lastRunId;
  }

  #set(route: Route): void {
    this.#route = route;
    if (
      (route.page === 'run' || route.page === 'items' || route.page === 'rl' || route.page === 'question') &&
      route.runId
    )
      this.#lastRunId = route.runId;
  }

  go(route: Route, opts: { replace?: boolean } = {}): void {
    const hash = routeHash(route);
    if (opts.replace) history.replaceState(null, '', hash);
    else if (location.hash !== hash) history.pushState(null, '', hash);
    this.#set(route);
  }

  /** Forgets a run that was deleted. */
  forgetRun(runId: string): void {
    if (this.#lastRunId === runId) this.#lastRunId = null;
  }
}
