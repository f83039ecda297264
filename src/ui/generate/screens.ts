/** The Generate screen's state in the workbench's registry (docs/ui-state.md). */
import { pageState } from '../context/workbench.svelte.ts';
import { GenerateState } from './generate-state.svelte.ts';

/** The Generate screen's state, one for the page's life: a generation keeps going while the user looks elsewhere. */
export const generateState = pageState((wb) => new GenerateState(wb.services.engines));
