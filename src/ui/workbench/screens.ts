/** The Datasets and Runs pages' forms in the workbench's registry (docs/ui-state.md). */
import { pageState } from '../context/workbench.svelte.ts';
import { ImportDraft } from './import-draft.svelte.ts';
import { NewRunDraft } from './new-run-draft.svelte.ts';

/** The Datasets page's import form, for the page's life (built with the workbench). */
export const importDraft = pageState(() => new ImportDraft());

/** The Runs page's new-run form, for the page's life (built with the workbench). */
export const newRunDraft = pageState((wb) => new NewRunDraft((req) => wb.services.store.service.checkReplay(req)));
