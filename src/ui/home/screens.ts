/** The first page's demo in the workbench's registry (docs/ui-state.md). */
import { ScreenKind, type Workbench } from '../context/workbench.svelte.ts';
import { PAGE_LIFE } from '../shell/keyed-state.ts';
import { DemoState } from './demo-library.svelte.ts';

const DEMO = new ScreenKind(
  (wb) =>
    new DemoState({
      store: wb.services.store,
      datasets: wb.datasets,
      runs: wb.runs,
      fetchDemoFile: wb.services.fetchDemoFile,
    }),
);

/** The first page's demo, for the page's life (built with the workbench). */
export function demoState(wb: Workbench): DemoState {
  return DEMO.of(wb).get(PAGE_LIFE);
}
