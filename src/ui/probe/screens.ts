/** The reward-hacking probe's state in the workbench's registry (docs/ui-state.md). */
import { pageState } from '../context/workbench.svelte.ts';
import { ProbeState } from './probe-state.svelte.ts';

/** The reward-hacking probe's state, one for the page's life: a probe keeps going while the user looks elsewhere. */
export const probeState = pageState((wb) => new ProbeState(wb.services.probe));
