/**
 * The workbench's state, created once by the shell and handed to every screen through Svelte
 * context (`createWorkbench` / `useWorkbench`): it outlives route changes, so an import or a
 * run keeps going while the user looks elsewhere. It builds every screen's state with the
 * services of the composition root, one lifecycle for all (docs/ui-state.md): a screen's
 * state is made when its route first asks for it and kept per route key (`KeyedState`).
 */
import type { Exclusion } from '../../core/eval/exclusions.ts';
import { getContext, setContext } from 'svelte';
import { DemoState } from '../home/demo-library.svelte.ts';
import { DatasetsState } from '../workbench/datasets.svelte.ts';
import { NewRunDraft } from '../workbench/new-run-draft.svelte.ts';
import { ImportDraft } from '../workbench/import-draft.svelte.ts';
import { KeyedState, PAGE_LIFE } from '../shell/keyed-state.ts';
import { Router } from '../shell/router.svelte.ts';
import { RunView } from '../workbench/run-view.svelte.ts';
import { RunsState } from '../workbench/runs.svelte.ts';
import type { WorkbenchServices } from './services.ts';
import { StorageState } from '../workbench/storage.svelte.ts';
import { GenerateState } from '../generate/generate-state.svelte.ts';
import { RarState } from '../rubric/rar-state.svelte.ts';
import { ProbeState } from '../probe/probe-state.svelte.ts';
import { RubricsState } from '../rubric/rubric-screen.svelte.ts';
import { CompareView } from '../rl/compare-view.svelte.ts';
import { RlView } from '../rl/rl-view.svelte.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { PlaygroundState } from '../playground/playground-state.svelte.ts';
import { routeHash } from '../shell/route.ts';
import { SeriesState } from '../series/series-state.svelte.ts';
import { SeriesQuestionView, SeriesView } from '../series/series-view.svelte.ts';

class Workbench {
  readonly services: WorkbenchServices;
  readonly router = new Router();
  readonly storage: StorageState;
  readonly datasets: DatasetsState;
  readonly runs: RunsState;
  readonly importDraft = new ImportDraft();
  readonly newRun: NewRunDraft;
  readonly demo: DemoState;
  /** Training runs: the list, the forms, an import under way and the folders followed (for the page's life). */
  readonly series: SeriesState;
  /** The run shown by the dashboard, the explorer and the question page, keyed by its id (loaded once per run). */
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
  #view = $derived.by((): RunView | null => {
    void this.#version;
    const r = this.router.route;
    // The first page shows the demo run's dashboard.
    const id =
      r.page === 'run' || r.page === 'items' || r.page === 'question'
        ? r.runId
        : r.page === 'demo'
          ? this.demo.state.runId
          : null;
    return id ? this.#runViews.get(id) : null;
  });

  constructor(services: WorkbenchServices) {
    this.services = services;
    this.newRun = new NewRunDraft((req) => services.store.service.checkReplay(req));
    // What is stored changed: its figure is read again until the browser has counted it.
    const changed = () => void this.storage.settle();
    this.storage = new StorageState(services.store);
    this.datasets = new DatasetsState(services.store, () => {
      changed();
      void this.runs.refresh();
    });
    this.runs = new RunsState(
      services.store,
      () => {
        changed();
        this.#runViews.clear();
        this.#version++;
      },
      (runId) => services.series.service.trainerScores(runId),
      services.parquetBlob,
      (runId) => services.series.service.ofRun(runId),
    );
    this.series = new SeriesState(services.series, () => {
      changed();
      void this.runs.refresh();
    });
    this.demo = new DemoState({
      store: services.store,
      datasets: this.datasets,
      runs: this.runs,
      fetchDemoFile: services.fetchDemoFile,
    });
  }

  readonly #generate = new KeyedState(() => new GenerateState(this.services.engines));
  readonly #rubrics = new KeyedState(
    () => new RubricsState(this.services.store, this.services.engines, this.services.rubricRepositories),
  );
  readonly #rar = new KeyedState(() => new RarState(this.services.engines, this.services.rubricRepositories));
  readonly #probe = new KeyedState(() => new ProbeState(this.services.probe));
  readonly #compare = new KeyedState(
    () => new CompareView(this.services.store),
    (v) => v.cancel(),
  );
  readonly #seriesViews = new KeyedState(
    (seriesId) => new SeriesView(seriesId, this.services.series.analysis),
    (v) => v.cancel(),
  );
  readonly #seriesQuestions = new KeyedState(
    (key) => {
      const at = key.lastIndexOf('/');
      return new SeriesQuestionView(key.slice(0, at), Number(key.slice(at + 1)), this.services.series.analysis);
    },
    (v) => v.cancel(),
  );
  readonly #rl = new KeyedState(
    (runId) => new RlView(runId, this.services.store, this.services.parquetBlob),
    (v) => v.cancel(),
  );
  readonly #playground = new KeyedState(
    () =>
      new PlaygroundState({
        datasets: this.services.store.datasets,
        runs: this.services.store.runs,
        service: this.services.store.service,
        playground: this.services.playground,
        // A kept attempt changed the scratch run: its dashboard, explorer and question page read it again.
        kept: () => {
          this.#runViews.clear();
          this.#version++;
          void this.runs.refresh();
        },
        writeAddress: (datasetId, index, attempt, runId) => {
          // The editor's state in the address, without a history entry per keystroke.
          const hash = routeHash({ page: 'playground', datasetId, index, attempt, ...(runId ? { runId } : {}) });
          if (location.hash !== hash) history.replaceState(null, '', hash);
        },
      }),
    (s) => s.close(),
  );

  /** The Generate screen's state, one for the page's life: a generation keeps going while the user looks elsewhere. */
  get generate(): GenerateState {
    return this.#generate.get(PAGE_LIFE);
  }

  /** The rubric screen's state (editor and scoring), one for the page's life. */
  get rubrics(): RubricsState {
    return this.#rubrics.get(PAGE_LIFE);
  }

  /** The rubric runs screen's state (RaR datasets and runs), one for the page's life: a run keeps going while the user looks elsewhere. */
  get rar(): RarState {
    return this.#rar.get(PAGE_LIFE);
  }

  /** The reward-hacking probe's state, one for the page's life: a probe keeps going while the user looks elsewhere. */
  get probe(): ProbeState {
    return this.#probe.get(PAGE_LIFE);
  }

  /** The Compare screen's state, built when its route opens (the route's runs are chosen with `setRunIds`); `closeView` when it closes. */
  compareView(): CompareView {
    return this.#compare.get(PAGE_LIFE);
  }

  /** The RL view of a run, built when its route opens; another run's view, or `closeView`, cancels its computation. */
  rlView(runId: string): RlView {
    return this.#rl.get(runId);
  }

  /** A training run's view, built when its route opens (another series', or `closeView`, cancels its computation). */
  seriesView(seriesId: string): SeriesView {
    return this.#seriesViews.get(seriesId);
  }

  /** One question across a training run's steps, built when its route opens. */
  seriesQuestionView(seriesId: string, index: number): SeriesQuestionView {
    return this.#seriesQuestions.get(`${seriesId}/${index}`);
  }

  /** Disposes a view when its route closes (the page unmounts): the next visit builds a fresh one. */
  closeView(view: RlView | CompareView | SeriesView | SeriesQuestionView): void {
    if (view instanceof RlView) this.#rl.release(view);
    else if (view instanceof SeriesView) this.#seriesViews.release(view);
    else if (view instanceof SeriesQuestionView) this.#seriesQuestions.release(view);
    else this.#compare.release(view);
  }

  /** The reward playground's state, one for the page's life; its page closes it (the worker is freed) on leaving. */
  get playground(): PlaygroundState {
    return this.#playground.get(PAGE_LIFE);
  }

  /** Loads what every screen lists; called once by the shell. */
  async start(): Promise<void> {
    await Promise.all([this.storage.refresh(), this.datasets.refresh(), this.runs.refresh(), this.series.start()]);
    // The stores are open now (the lists were read from them): the first figure may have come
    // before the browser counted what they hold (after a restart), so it is read again.
    void this.storage.settle();
  }

  /** Whether this host runs SQL on the dataset's databases (the app), so links to the playground and the probe lead somewhere. */
  get runsSql(): boolean {
    return this.services.readOnlyReport !== true;
  }

  /** The run of the dashboard or explorer route, shared by both (loaded once per run). */
  get view(): RunView | null {
    return this.#view;
  }

  /** The questions excluded from every step of a training run (empty when the store keeps none). */
  async seriesExclusions(seriesId: string): Promise<Exclusion[]> {
    return (await this.services.store.runs.exclusions?.(seriesId)) ?? [];
  }
  /** Replaces them and has the series' numbers and its steps' dashboards computed again. */
  async setSeriesExclusions(seriesId: string, exclusions: readonly Exclusion[]): Promise<void> {
    await this.services.store.runs.setExclusions?.(seriesId, 'series', exclusions);
    // The steps' dashboards honour the series' exclusions: read again when next shown.
    this.#runViews.clear();
    this.#version++;
    this.series.touched(seriesId);
  }
  /** Excludes a question from a training run (replacing an earlier exclusion of it). */
  async excludeFromSeries(seriesId: string, e: Exclusion): Promise<void> {
    const now = await this.seriesExclusions(seriesId);
    await this.setSeriesExclusions(
      seriesId,
      [...now.filter((x) => x.questionId !== e.questionId), e].sort((a, b) => a.questionId - b.questionId),
    );
  }
  async unexcludeFromSeries(seriesId: string, questionId: number): Promise<void> {
    const now = await this.seriesExclusions(seriesId);
    await this.setSeriesExclusions(
      seriesId,
      now.filter((x) => x.questionId !== questionId),
    );
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
