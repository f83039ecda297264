/**
 * The workbench's state, created once by the shell and handed to every screen through Svelte
 * context (`createWorkbench` / `useWorkbench`): it outlives route changes, so an import or a
 * run keeps going while the user looks elsewhere.
 */
import { getContext, setContext } from 'svelte';
import { DemoLibrary } from '../home/demo-library.svelte.ts';
import { DatasetsState } from './datasets.svelte.ts';
import { NewRunDraft } from './new-run-draft.svelte.ts';
import { ImportDraft } from './import-draft.svelte.ts';
import { Router } from '../shell/router.svelte.ts';
import { RunView } from './run-view.svelte.ts';
import { RunsState } from './runs.svelte.ts';
import type { WorkbenchServices } from './services.ts';
import { StorageState } from './storage.svelte.ts';
import { GenerateState } from '../generate/generate-state.svelte.ts';
import { RarState } from '../rubric/rar-state.svelte.ts';
import { ProbeState } from '../probe/probe-state.svelte.ts';
import { RubricScreen } from '../rubric/rubric-screen.svelte.ts';
import { WorkbenchError } from '../../core/errors.ts';

export class Workbench {
  readonly services: WorkbenchServices;
  readonly router = new Router();
  readonly storage: StorageState;
  readonly datasets: DatasetsState;
  readonly runs: RunsState;
  readonly importDraft = new ImportDraft();
  readonly newRun: NewRunDraft;
  readonly demo: DemoLibrary;
  /** Plain field: the cache behind `view`, which creates at most one RunView per run shown. */
  #cache: RunView | null = null;
  #version = $state(0);
  #view = $derived.by((): RunView | null => {
    void this.#version;
    const r = this.router.route;
    // The first page shows the demo run's dashboard.
    const id = r.page === 'run' || r.page === 'items' || r.page === 'question' ? r.runId : r.page === 'demo' ? this.demo.runId : null;
    if (!id) return null;
    if (this.#cache?.runId !== id) {
      this.#cache = new RunView(id, this.services.store, this.services.previews);
      void this.#cache.load();
    }
    return this.#cache;
  });

  constructor(services: WorkbenchServices) {
    this.services = services;
    this.newRun = new NewRunDraft((req) => services.store.service.checkReplay(req));
    const changed = () => void this.storage.refresh();
    this.storage = new StorageState(services.store);
    this.datasets = new DatasetsState(services.store, () => {
      changed();
      void this.runs.refresh();
    });
    this.runs = new RunsState(services.store, () => {
      changed();
      this.#cache = null;
      this.#version++;
    });
    this.demo = new DemoLibrary({ store: services.store, datasets: this.datasets, runs: this.runs, fetchDemoFile: services.fetchDemoFile });
  }

  #generate: GenerateState | null = null;
  #rubrics: RubricScreen | null = null;
  #rar: RarState | null = null;
  #probe: ProbeState | null = null;

  /** The Generate screen's state, made on first use: a generation keeps going while the user looks elsewhere. */
  get generate(): GenerateState {
    return (this.#generate ??= new GenerateState(this.services.engines));
  }

  /** The rubric screen's state (editor and scoring), made on first use. */
  get rubrics(): RubricScreen {
    return (this.#rubrics ??= new RubricScreen(this.services.store, this.services.engines, this.services.rubricDb));
  }

  /** The rubric runs screen's state (RaR datasets and runs), made on first use. */
  get rar(): RarState {
    return (this.#rar ??= new RarState(this.services.engines, this.services.rubricDb));
  }

  /** The reward-hacking probe's state, made on first use: a probe keeps going while the user looks elsewhere. */
  get probe(): ProbeState {
    return (this.#probe ??= new ProbeState(this.services.probe));
  }

  /** Loads what every screen lists; called once by the shell. */
  async start(): Promise<void> {
    await Promise.all([this.storage.refresh(), this.datasets.refresh(), this.runs.refresh()]);
  }

  /** The run of the dashboard or explorer route, shared by both (loaded once per run). */
  get view(): RunView | null {
    return this.#view;
  }

  /** Reloads the shown run (after it changed: a rename, a finished evaluation). */
  reloadRun(): void {
    void this.#cache?.load();
  }
}

const KEY = Symbol('workbench');

export function createWorkbench(services: WorkbenchServices): Workbench {
  const wb = new Workbench(services);
  setContext(KEY, wb);
  return wb;
}

export function useWorkbench(): Workbench {
  const wb = getContext<Workbench | undefined>(KEY);
  if (!wb) throw new WorkbenchError('INTERNAL', 'useWorkbench() was called outside the workbench shell (a screen rendered without createWorkbench above it)');
  return wb;
}
