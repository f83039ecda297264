/** The training runs' states in the workbench's registry, and what changes a series' exclusions (docs/ui-state.md). */
import { mergeExclusions, type Exclusion } from '../../core/eval/exclusions.ts';
import { pageState, ScreenKind, type Workbench } from '../context/workbench.svelte.ts';
import { SeriesState } from './series-state.svelte.ts';
import { SeriesQuestionView, SeriesView } from './series-view.svelte.ts';

const SERIES_VIEWS = new ScreenKind(
  (wb, seriesId) => new SeriesView(seriesId, wb.services.series.analysis),
  (v) => v.cancel(),
);
const SERIES_QUESTIONS = new ScreenKind(
  (wb, key) => {
    const at = key.lastIndexOf('/');
    return new SeriesQuestionView(key.slice(0, at), Number(key.slice(at + 1)), wb.services.series.analysis);
  },
  (v) => v.cancel(),
);

/** Training runs: the list, the forms, an import under way and the folders followed (for the page's life; built with the workbench). */
export const seriesState = pageState((wb) => new SeriesState(wb.services.series, () => wb.storedChanged()));

/** A training run's view, built when its route opens (another series', or `closeSeriesView`, cancels its computation). */
export function seriesView(wb: Workbench, seriesId: string): SeriesView {
  return SERIES_VIEWS.of(wb).get(seriesId);
}

/** One question across a training run's steps, built when its route opens. */
export function seriesQuestionView(wb: Workbench, seriesId: string, index: number): SeriesQuestionView {
  return SERIES_QUESTIONS.of(wb).get(`${seriesId}/${index}`);
}

/** Disposes a series' view when its route closes (the page unmounts): the next visit builds a fresh one. */
export function closeSeriesView(wb: Workbench, view: SeriesView | SeriesQuestionView): void {
  if (view instanceof SeriesView) SERIES_VIEWS.of(wb).release(view);
  else SERIES_QUESTIONS.of(wb).release(view);
}

/** The questions excluded from every step of a training run (empty when the store keeps none). */
export async function seriesExclusions(wb: Workbench, seriesId: string): Promise<Exclusion[]> {
  return (await wb.services.store.runs.exclusions?.(seriesId)) ?? [];
}

/** Replaces them and has the series' numbers and its steps' dashboards computed again. */
async function setSeriesExclusions(wb: Workbench, seriesId: string, exclusions: readonly Exclusion[]): Promise<void> {
  await wb.services.store.runs.setExclusions?.(seriesId, 'series', exclusions);
  // The steps' dashboards honour the series' exclusions: read again when next shown.
  wb.forgetRunViews();
  seriesState(wb).touched(seriesId);
}

/** Excludes a question from a training run (replacing an earlier exclusion of it). */
export async function excludeFromSeries(wb: Workbench, seriesId: string, e: Exclusion): Promise<void> {
  const now = await seriesExclusions(wb, seriesId);
  // The new one first: it replaces an earlier exclusion of the question.
  await setSeriesExclusions(wb, seriesId, mergeExclusions([e], now));
}

export async function unexcludeFromSeries(wb: Workbench, seriesId: string, questionId: number): Promise<void> {
  const now = await seriesExclusions(wb, seriesId);
  await setSeriesExclusions(
    wb,
    seriesId,
    now.filter((x) => x.questionId !== questionId),
  );
}
