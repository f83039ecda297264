/** The rubric screens' states in the workbench's registry (docs/ui-state.md). */
import { ScreenKind, type Workbench } from '../context/workbench.svelte.ts';
import { PAGE_LIFE } from '../shell/keyed-state.ts';
import { RarState } from './rar-state.svelte.ts';
import { RubricsState } from './rubric-screen.svelte.ts';

const RUBRICS = new ScreenKind(
  (wb) => new RubricsState(wb.services.store, wb.services.engines, wb.services.rubricRepositories),
);
const RAR = new ScreenKind((wb) => new RarState(wb.services.engines, wb.services.rubricRepositories));

/** The rubric screen's state (editor and scoring), one for the page's life. */
export function rubricsState(wb: Workbench): RubricsState {
  return RUBRICS.of(wb).get(PAGE_LIFE);
}

/** The rubric runs screen's state (RaR datasets and runs), one for the page's life: a run keeps going while the user looks elsewhere. */
export function rarState(wb: Workbench): RarState {
  return RAR.of(wb).get(PAGE_LIFE);
}
