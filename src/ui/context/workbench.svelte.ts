/**
 * The workbench's state, created once by the shell and handed to every screen through Svelte
 * context (`createWorkbench` / `useWorkbench`): it outlives route changes, so an import or a
 * run keeps going while the user looks elsewhere. It holds what every screen shares and no
 * feature owns (the router, the services, the stored lists, the shown run), and a registry of
 * the screens' states (`screen`): each feature asks it for its own state with its own
 * `ScreenKind`, so this file imports no feature (docs/ui-state.md). A screen's state is made
 * when its route first asks for it and kept per route key (`KeyedState`).
 */
import { getContext, setContext } from 'svelte';
import { DatasetsState } from './datasets.svelte.ts';
import { KeyedState, PAGE_LIFE } from '../shell/keyed-state.ts';
import { Router } from '../shell/router.svelte.ts';
import { RunView } from './run-view.svelte.ts';
import { RunsState } from './runs.svelte.ts';
import type { WorkbenchServices } from './services.ts';
import { StorageState } from './storage.svelte.ts';
import { WorkbenchError } from '../../core/errors.ts';

/**
 * A kind of screen state, declared once at a feature's module level (a constant: its identity is
 * the registry's key): how the workbench builds it for a route key, and how it disposes of it.
 */
export class ScreenKind<S> {
  readonly make: (wb: Workbench, key: string) => S;
  readonly dispose: ((state: S) => void) | undefined;

  constructor(make: (wb: Workbench, key: string) => S, dispose?: (state: S) => void) {
    this.make = make;
    this.dispose = dispose;
  }

  /** The workbench's one `KeyedState` of this kind (built on first use, kept for the workbench's life). */
  of(wb: Workbench): KeyedState<S> {
    return wb.screen(this);
  }
}

/**
 * The accessor of a state kept for the page's life, one per workbench (a form, a generation or a
 * probe that goes on while the user looks elsewhere): declared once at a feature's module level,
 * `export const fooState = pageState((wb) => new FooState(...))`.
 */
export function pageState<S>(make: (wb: Workbench) => S, dispose?: (state: S) => void): (wb: Workbench) => S {
  const kind = new ScreenKind<S>((wb) => make(wb), dispose);
  return (wb) => kind.of(wb).get(PAGE_LIFE);
}

export class Workbench {
  readonly services: WorkbenchServices;
  readonly router = new Router();
  readonly storage: StorageState;
  readonly datasets: DatasetsState;
  readonly runs: RunsState;
  /** The screens' states by kind: one `KeyedState` per `ScreenKind`, for the workbench's life. */
  readonly #screens = new Map<ScreenKind<unknown>, KeyedState<unknown>>();
  /** Loads what a feature lists at start (the training runs), beside the lists of `start`. */
  readonly #starts: Array<() => Promise<void>> = [];
  /** The run shown by the dashboard, the explorer, the question page and the first page, keyed by its id (loaded once per run). */
  readonly #runViews = new KeyedState((id) => {
    const view = new RunView(
      id,
      {
        ...this.services.store,
        trainerScores: (runId) => this.services.series.service.trainerScores(runId),
        seriesOf: (runId) => this.services.series.service.ofRun(runId),
      },
      this.services.previews,
    );
    void view.load();
    return view;
  });
  #version = $state(0);
  /** The run the first page shows (the demo's), set by the composition. */
  #firstPageRun: () => string | null = () => null;
  #view = $derived.by((): RunView | null => {
    void this.#version;
    const r = this.router.route;
    const id =
      r.page === 'run' || r.page === 'items' || r.page === 'question'
        ? r.runId
        : r.page === 'demo'
          ? this.#firstPageRun()
          : null;
    return id ? this.#runViews.get(id) : null;
  });

  constructor(services: WorkbenchServices) {
    this.services = services;
    this.storage = new StorageState(services.store);
    this.datasets = new DatasetsState(services.store, () => this.storedChanged());
    this.runs = new RunsState(
      services.store,
      () => {
        this.#storageChanged();
        this.forgetRunViews();
      },
      (runId) => services.series.service.trainerScores(runId),
      services.parquetBlob,
      (runId) => services.series.service.ofRun(runId),
    );
  }

  /** The states of a kind, one `KeyedState` for the workbench's life (the same one on every call). */
  screen<S>(kind: ScreenKind<S>): KeyedState<S> {
    let states = this.#screens.get(kind as ScreenKind<unknown>) as KeyedState<S> | undefined;
    if (!states) {
      states = new KeyedState<S>((key) => kind.make(this, key), kind.dispose);
      this.#screens.set(kind as ScreenKind<unknown>, states as KeyedState<unknown>);
    }
    return states;
  }

  /** Has the first page show the run `runId` names (the demo's dashboard) as `view`. */
  showOnFirstPage(runId: () => string | null): void {
    this.#firstPageRun = runId;
  }

  /** Has `start` load `load` too (called before it, by the shell's composition). */
  loadOnStart(load: () => Promise<void>): void {
    this.#starts.push(load);
  }

  /** Loads what every screen lists; called once by the shell. */
  async start(): Promise<void> {
    await Promise.all([
      this.storage.refresh(),
      this.datasets.refresh(),
      this.runs.refresh(),
      ...this.#starts.map((load) => load()),
    ]);
    // The stores are open now (the lists were read from them): the first figure may have come
    // before the browser counted what they hold (after a restart), so it is read again.
    void this.storage.settle();
  }

  // What is stored changed: its figure is read again until the browser has counted it.
  #storageChanged(): void {
    void this.storage.settle();
  }

  /** Datasets or runs were stored or deleted elsewhere (an import, a training run): the storage figure and the runs are read again. */
  storedChanged(): void {
    this.#storageChanged();
    void this.runs.refresh();
  }

  /** A stored run changed under its view (its samples, its exclusions): the dashboard, explorer and question page read it again when next shown. */
  forgetRunViews(): void {
    this.#runViews.clear();
    this.#version++;
  }

  /** Whether this host runs SQL on the dataset's databases (the app), so links to the playground and the probe lead somewhere. */
  get runsSql(): boolean {
    return this.services.readOnlyReport !== true;
  }

  /** The run of the dashboard, explorer or question route, shared by them (loaded once per run); on the first page, the demo's. */
  get view(): RunView | null {
    return this.#view;
  }

  /** Reloads the shown run (after it changed: a rename, a finished evaluation). */
  reloadRun(): void {
    void this.#runViews.current?.load();
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
  if (!wb)
    throw new WorkbenchError(
      'INTERNAL',
      'useWorkbench() was called outside the workbench shell (a screen rendered without createWorkbench above it)',
    );
  return wb;
}
