/** The Generate screen's state in the workbench's registry (docs/ui-state.md). */
import { ScreenKind, type Workbench } from '../context/workbench.svelte.ts';
import { PAGE_LIFE } from '../shell/keyed-state.ts';
import { GenerateState } from './generate-state.svelte.ts';

const GENERATE = new ScreenKind((wb) => new GenerateState(wb.services.engines));

/** The Generate screen's state, one for the page's life: a generation keeps going while the user looks elsewhere. */
export function generateState(wb: Workbench): GenerateState {
  return GENERATE.of(wb).get(PAGE_LIFE);
}
