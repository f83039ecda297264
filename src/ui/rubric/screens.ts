/** The rubric screens' states in the workbench's registry (docs/ui-state.md). */
import { pageState } from '../context/workbench.svelte.ts';
import { RarState } from './rar-state.svelte.ts';
import { RubricsState } from './rubric-screen.svelte.ts';

/** The rubric screen's state (editor and scoring), one for the page's life. */
export const rubricsState = pageState(
  (wb) => new RubricsState(wb.services.store, wb.services.engines, wb.services.rubricRepositories),
);

/** The rubric runs screen's state (RaR datasets and runs), one for the page's life: a run keeps going while the user looks elsewhere. */
export const rarState = pageState((wb) => new RarState(wb.services.engines, wb.services.rubricRepositories));
