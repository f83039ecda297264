/** The Datasets and Runs pages' forms in the workbench's registry (docs/ui-state.md). */
import { ScreenKind, type Workbench } from '../context/workbench.svelte.ts';
import { PAGE_LIFE } from '../shell/keyed-state.ts';
import { ImportDraft } from './import-draft.svelte.ts';
import { NewRunDraft } from './new-run-draft.svelte.ts';

const IMPORT_DRAFT = new ScreenKind(() => new ImportDraft());
const NEW_RUN = new ScreenKind((wb) => new NewRunDraft((req) => wb.services.store.service.checkReplay(req)));

/** The Datasets page's import form, for the page's life (built with the workbench). */
export function importDraft(wb: Workbench): ImportDraft {
  return IMPORT_DRAFT.of(wb).get(PAGE_LIFE);
}

/** The Runs page's new-run form, for the page's life (built with the workbench). */
export function newRunDraft(wb: Workbench): NewRunDraft {
  return NEW_RUN.of(wb).get(PAGE_LIFE);
}
