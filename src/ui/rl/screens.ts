/** The RL and Compare screens' states in the workbench's registry (docs/ui-state.md). */
import { ScreenKind, type Workbench } from '../context/workbench.svelte.ts';
import { PAGE_LIFE } from '../shell/keyed-state.ts';
import { CompareView } from './compare-view.svelte.ts';
import { RlView } from './rl-view.svelte.ts';

const COMPARE = new ScreenKind(
  (wb) => new CompareView(wb.services.store),
  (v) => v.cancel(),
);
const RL = new ScreenKind(
  (wb, runId) => new RlView(runId, wb.services.store, wb.services.parquetBlob),
  (v) => v.cancel(),
);

/** The Compare screen's state, built when its route opens (the route's runs are chosen with `setRunIds`); `closeCompareView` when it closes. */
export function compareView(wb: Workbench): CompareView {
  return COMPARE.of(wb).get(PAGE_LIFE);
}

/** Disposes the Compare screen's state when its route closes (the page unmounts): the next visit builds a fresh one. */
export function closeCompareView(wb: Workbench, view: CompareView): void {
  COMPARE.of(wb).release(view);
}

/** The RL view of a run, built when its route opens; another run's view, or `closeRlView`, cancels its computation. */
export function rlView(wb: Workbench, runId: string): RlView {
  return RL.of(wb).get(runId);
}

/** Disposes a run's RL view when its route closes: the next visit builds a fresh one. */
export function closeRlView(wb: Workbench, view: RlView): void {
  RL.of(wb).release(view);
}
