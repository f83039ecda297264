/** The reward-hacking probe's state in the workbench's registry (docs/ui-state.md). */
import { ScreenKind, type Workbench } from '../context/workbench.svelte.ts';
import { PAGE_LIFE } from '../shell/keyed-state.ts';
import { ProbeState } from './probe-state.svelte.ts';

const PROBE = new ScreenKind((wb) => new ProbeState(wb.services.probe));

/** The reward-hacking probe's state, one for the page's life: a probe keeps going while the user looks elsewhere. */
export function probeState(wb: Workbench): ProbeState {
  return PROBE.of(wb).get(PAGE_LIFE);
}
