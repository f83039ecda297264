/** The first page's demo in the workbench's registry (docs/ui-state.md). */
import { pageState } from '../context/workbench.svelte.ts';
import { DemoState } from './demo-library.svelte.ts';

/** The first page's demo, for the page's life (built with the workbench). */
export const demoState = pageState(
  (wb) =>
    new DemoState({
      store: wb.services.store,
      datasets: wb.datasets,
      runs: wb.runs,
      fetchDemoFile: wb.services.fetchDemoFile,
    }),
);
