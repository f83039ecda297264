/** The reward playground's state in the workbench's registry (docs/ui-state.md). */
import { pageState } from '../context/workbench.svelte.ts';
import { routeHash } from '../shell/route.ts';
import { PlaygroundState } from './playground-state.svelte.ts';

/** The reward playground's state, one for the page's life; its page closes it (the worker is freed) on leaving. */
export const playgroundState = pageState(
  (wb) =>
    new PlaygroundState({
      datasets: wb.services.store.datasets,
      runs: wb.services.store.runs,
      service: wb.services.store.service,
      playground: wb.services.playground,
      // A kept attempt changed the scratch run: its dashboard, explorer and question page read it again.
      kept: () => {
        wb.forgetRunViews();
        void wb.runs.refresh();
      },
      writeAddress: (datasetId, index, attempt, runId) => {
        // The editor's state in the address, without a history entry per keystroke.
        const hash = routeHash({ page: 'playground', datasetId, index, attempt, ...(runId ? { runId } : {}) });
        if (location.hash !== hash) history.replaceState(null, '', hash);
      },
    }),
  (s) => s.close(),
);
