/**
 * The workbench's composition (App.svelte, and the offline report's ReportApp.svelte, call it
 * once): the context root (context/workbench.svelte.ts), and the states built with it for the
 * page's life, as before any screen asks for them: the Datasets and Runs pages' forms, the
 * training runs (loaded by `start` beside the stored lists) and the first page's demo (whose run
 * the first page shows). Every other screen state is built by its feature's accessor when its
 * route first asks for it (docs/ui-state.md).
 */
import { createWorkbench, type Workbench } from './context/workbench.svelte.ts';
import type { WorkbenchServices } from './context/services.ts';
import { demoState } from './home/screens.ts';
import { seriesState } from './series/screens.ts';
import { importDraft, newRunDraft } from './workbench/screens.ts';

export function openWorkbench(services: WorkbenchServices): Workbench {
  const wb = createWorkbench(services);
  importDraft(wb);
  newRunDraft(wb);
  const series = seriesState(wb);
  wb.loadOnStart(() => series.start());
  const demo = demoState(wb);
  // The first page shows the demo run's dashboard.
  wb.showOnFirstPage(() => demo.state.runId);
  return wb;
}
