/**
 * One stored run as the dashboard and the item explorer show it: header, samples, summary,
 * the questions' texts (from its dataset, when still stored), the explorer's query and cursor,
 * and the result tables of the open item (re-run in the SQL worker pool on demand).
 *
 * A finished run is read in two steps: its first page of samples (FIRST_PAGE, in (index, sample)
 * order) and its sample count, shown at once, then, after the first paint, every sample. Until
 * then (`complete` false) the explorer lists the first page under the default query (which is a
 * prefix of the whole list in the same order), and every other query, the summary and the
 * dashboard wait for the whole list.
 */
import { itemKeyText, parseItemKey, routeHash } from '../shell/route.ts';
import { errorMessage } from '../../core/errors.ts';
import type { ItemPreview } from '../../core/eval/executor.ts';
import { summarize, type Summary } from '../../core/eval/summary.ts';
import { excludedPresent, mergeExclusions, withoutExcluded, type Exclusion } from '../../core/eval/exclusions.ts';
import { DEFAULT_QUERY, ItemIndex, type ExplorerRow, type ItemQuery } from '../../core/views/item-query.ts';
import type { RunHeader, SampleRecord } from '../../core/run/types.ts';
import { ALL_DIFFICULTIES, type Difficulty, type ItemResult, type Question } from '../../core/types.ts';
import type { DatasetRepository, RunRepository, RunService } from '../../app/store-ports.ts';
import type { ItemKey } from '../shell/route.ts';
import type { GoldOverlayRecord } from '../../core/run/overlay-record.ts';
import type { VersionCheckRecord } from '../../core/run/version-effects.ts';

/**
 * What a run view reads: the run, its samples and its dataset's questions, and what is stored
 * with the run besides (the corrected-gold overlay, the version check; absent in test doubles).
 */
export interface RunViewStore {
  runs: Pick<RunRepository, 'get' | 'samples' | 'sampleCount' | 'exclusions' | 'setExclusions'>;
  /** The training runs the run is a step of (their exclusions hold for it too); absent in test doubles. */
  seriesOf?: (runId: string) => Promise<Array<{ id: string; name: string }>>;
  datasets: Pick<DatasetRepository, 'get'>;
  service?: Pick<
    RunService,
    'goldOverlay' | 'attachGoldOverlay' | 'removeGoldOverlay' | 'measureVersionEffects' | 'versionCheck'
  >;
  /** The trainer's score of each sample when the run is a step of a training run (SeriesService.trainerScores); absent in test doubles. */
  trainerScores?: (runId: string) => Promise<{
    step: number;
    scores: Array<number | null>;
    rewards?: Array<Record<string, number | null> | null>;
  } | null>;
}
import type { PreviewService } from '../../app/preview-service.ts';
import { nextTask } from '../shell/staged.svelte.ts';

export const PREVIEW_ROWS = 20;
/** Samples read and listed before the whole run (a screenful or two of rows). */
export const FIRST_PAGE = 100;

export interface PreviewState {
  key: string;
  loading: boolean;
  preview: ItemPreview | null;
  /** The result of the re-run (it should agree with the stored one; a timeout may not). */
  result: ItemResult | null;
  error: string | null;
  /** Why no rows are shown, when it is not the prediction's failure (PreviewService's `note`). */
  note?: string;
}

/** The explorer open at a sample, its list filtered to the sample's question (so the open row is in view). */
export function sampleInListHref(
  runId: string,
  s: Pick<SampleRecord, 'index' | 'sample' | 'dbId' | 'questionId'>,
): string {
  return routeHash({
    page: 'items',
    runId,
    item: { index: s.index, sample: s.sample },
    query: { ...DEFAULT_QUERY, dbId: s.dbId, search: String(s.questionId) },
  });
}

/** A sample's key in the explorer's rows and addresses (`index.sample`, route.ts's item key). */
export const keyOf = (s: { index: number; sample: number }): string => itemKeyText(s);

/** True when `q` lists the samples in stored order, unfiltered: the first page is its beginning. */
function firstPageServes(q: ItemQuery): boolean {
  return (
    q.outcome === 'all' &&
    q.difficulty === 'all' &&
    q.dbId === 'all' &&
    q.search.trim() === '' &&
    q.sort === 'index' &&
    !q.descending
  );
}

/** Resolves after the next paint (animation frame, then a task); hidden pages get no frames, hence the timer. */
function afterPaint(): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const go = () => {
      if (done) return;
      done = true;
      resolve();
    };
    setTimeout(go, 100);
    if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => setTimeout(go, 0));
  });
}

/** Rows built per task: 50,000 took ~10 ms at 500,000 samples, where all at once was one task of ~200 ms with the database list. */
const ROWS_PER_STEP = 50_000;

/**
 * The explorer's rows of a run's samples and its databases, STEP rows per task; null when
 * `current()` turns false meanwhile (a newer load).
 */
async function rowsInSteps(
  samples: readonly SampleRecord[],
  questions: readonly Question[] | null,
  current: () => boolean,
  trainerScores: ReadonlyArray<number | null> | null = null,
  trainerRewards: ReadonlyArray<Record<string, number | null> | null> | null = null,
): Promise<{ rows: ExplorerRow[]; dbIds: string[]; difficulties: Difficulty[] } | null> {
  const rows: ExplorerRow[] = new Array(samples.length);
  const dbIds = new Set<string>();
  const levels = new Set<Difficulty>();
  let last: string | null = null;
  for (let from = 0; from < samples.length; from += ROWS_PER_STEP) {
    if (from > 0) {
      await nextTask();
      if (!current()) return null;
    }
    const to = Math.min(samples.length, from + ROWS_PER_STEP);
    for (let i = from; i < to; i++) {
      const sample = samples[i]!;
      rows[i] = trainerScores
        ? {
            sample,
            question: questions?.[sample.index] ?? null,
            trainerScore: trainerScores[i] ?? null,
            ...(trainerRewards ? { trainerRewards: trainerRewards[i] ?? null } : {}),
          }
        : { sample, question: questions?.[sample.index] ?? null };
      // Samples of a question are consecutive: the set sees each database once per run of them.
      if (sample.dbId !== last) dbIds.add((last = sample.dbId));
      levels.add(sample.difficulty);
    }
  }
  return { rows, dbIds: [...dbIds].sort(), difficulties: ALL_DIFFICULTIES.filter((d) => levels.has(d)) };
}

/** What the run's pages show besides the run's data (the header, samples, rows, query and preview are `$state.raw`, apart). */
interface RunViewFields {
  /** The stored count of samples, read with the first page (`total` is the read count once complete). */
  storedTotal: number;
  /** True once every sample is read: the summary, filters, sorting and search need it. */
  complete: boolean;
  /** True while the run's header (and first page) is being read, or the whole run is re-read. */
  loading: boolean;
  error: string | null;
  cursor: string | null;
  /** What is being computed for the run: an overlay scored, or the version check. */
  extrasBusy: 'overlay' | 'version' | null;
  /** Why the last attach failed, naming the file (or why the stored overlay could not be read). */
  overlayError: string | null;
  /** Why the last version check failed (or why the stored one could not be read). */
  versionError: string | null;
}

export class RunView {
  readonly runId: string;
  readonly #store: RunViewStore;
  readonly #previews: PreviewService;
  #run = $state.raw<RunHeader | null>(null);
  /** Every sample, once read (`complete`); before that, empty. */
  #samples = $state.raw<SampleRecord[]>([]);
  /** The first FIRST_PAGE samples, listed while the rest is read. */
  #page = $state.raw<SampleRecord[]>([]);
  #s = $state<RunViewFields>({
    storedTotal: 0,
    complete: false,
    loading: true,
    error: null,
    cursor: null,
    extrasBusy: null,
    overlayError: null,
    versionError: null,
  });
  /** Plain field: only the latest load() writes its results. */
  #generation = 0;
  #settle: () => void = () => undefined;
  readonly #ready = new Promise<void>((resolve) => (this.#settle = resolve));
  #questions = $state.raw<readonly Question[] | null>(null);
  #query = $state.raw<ItemQuery>(DEFAULT_QUERY);
  #preview = $state.raw<PreviewState | null>(null);
  /** Stored with the run (docs/gold-overlays.md, docs/version-effects.md): read with it, replaced by attach / measure. */
  #overlay = $state.raw<GoldOverlayRecord | null>(null);
  #versionCheck = $state.raw<VersionCheckRecord | null>(null);

  /** The rows of every sample (with its question), built in steps once the whole run is read. */
  #allRows = $state.raw<ExplorerRow[]>([]);
  /** The training-run step whose trainer's scores the rows carry; null when the run is no step with scores. */
  #trainerStep = $state.raw<number | null>(null);
  #dbIds = $state.raw<string[]>([]);
  #difficulties = $state.raw<Difficulty[]>([]);

  /** The run's own exclusions, and those of each training run it is a step of (they hold for it too). */
  #ownExclusions = $state.raw<Exclusion[]>([]);
  #seriesExclusions = $state.raw<Array<{ id: string; name: string; exclusions: Exclusion[] }>>([]);
  #exclusions = $derived(mergeExclusions(this.#ownExclusions, ...this.#seriesExclusions.map((s) => s.exclusions)));
  /** Every metric of the dashboard is over the samples left: an excluded question counts nowhere. */
  #metricSamples = $derived(withoutExcluded(this.#samples, this.#exclusions));
  #summary = $derived.by((): Summary | null => {
    if (!this.#run || this.#metricSamples.length === 0) return null;
    return summarize(this.#metricSamples, this.#run.config.metrics);
  });
  #rows = $derived.by((): ExplorerRow[] =>
    this.#s.complete
      ? this.#allRows
      : this.#page.map((sample) => ({ sample, question: this.#questions?.[sample.index] ?? null })),
  );
  #index = $derived(new ItemIndex(this.#rows));
  // The rows are in (index, sample) order (the store's order): the default query lists them as they are.
  #visible = $derived.by((): ExplorerRow[] => {
    if (firstPageServes(this.#query)) return this.#rows;
    return this.#s.complete ? this.#index.query(this.#query) : [];
  });

  constructor(runId: string, store: RunViewStore, previews: PreviewService) {
    this.runId = runId;
    this.#store = store;
    this.#previews = previews;
  }

  /** The samples every metric reads: those of questions not excluded (all of them when none is). */
  get metricSamples(): readonly SampleRecord[] {
    return this.#metricSamples;
  }
  /** Excluded questions that are in the run (an exclusion of another dataset's id excludes nothing). */
  get excludedCount(): number {
    return excludedPresent(this.#samples, this.#exclusions);
  }
  /** Every question excluded from the run's metrics (its own and its training runs'), by question id. */
  get exclusions(): readonly Exclusion[] {
    return this.#exclusions;
  }
  /** The run's own exclusions (removable here) and each training run's (removable on its page). */
  get ownExclusions(): readonly Exclusion[] {
    return this.#ownExclusions;
  }
  get seriesExclusions(): ReadonlyArray<{ id: string; name: string; exclusions: readonly Exclusion[] }> {
    return this.#seriesExclusions;
  }
  get canExclude(): boolean {
    return this.#store.runs.setExclusions !== undefined;
  }
  /** Excludes a question from the run's metrics (replacing an earlier exclusion of it) and stores it. */
  async exclude(e: Exclusion): Promise<void> {
    // The new one first: it replaces an earlier exclusion of the question.
    const next = mergeExclusions([e], this.#ownExclusions);
    await this.#store.runs.setExclusions?.(this.runId, 'run', next);
    this.#ownExclusions = next;
  }
  /** Counts the question in the run's metrics again. */
  async unexclude(questionId: number): Promise<void> {
    const next = this.#ownExclusions.filter((x) => x.questionId !== questionId);
    await this.#store.runs.setExclusions?.(this.runId, 'run', next);
    this.#ownExclusions = next;
  }

  /** The step of a training run whose trainer's scores the rows carry (`ExplorerRow.trainerScore`); null when none. */
  get trainerStep(): number | null {
    return this.#trainerStep;
  }

  get run(): RunHeader | null {
    return this.#run;
  }
  /** Every sample of the run; empty until `complete`. */
  get samples(): readonly SampleRecord[] {
    return this.#samples;
  }
  /** What the screen shows of these fields, read-only: the methods below change them. */
  get state(): Readonly<RunViewFields> {
    return this.#s;
  }
  /** Number of samples of the run (the stored count until every sample is read). */
  get total(): number {
    return this.#s.complete ? this.#samples.length : this.#s.storedTotal;
  }
  /** Resolves when every sample is read, or when reading the run failed. */
  whenComplete(): Promise<void> {
    return this.#ready;
  }
  /**
   * Number of rows the query lists: known once the whole run is read, or when the query lists
   * the stored order unfiltered (the first page is its beginning, `total` its length); else null.
   */
  get shown(): number | null {
    if (this.#s.complete) return this.#visible.length;
    return firstPageServes(this.#query) ? this.#s.storedTotal : null;
  }
  get summary(): Summary | null {
    return this.#summary;
  }
  /** False when the run's dataset is no longer stored (an imported run file): no question texts. */
  get hasQuestions(): boolean {
    return this.#questions !== null;
  }
  get query(): ItemQuery {
    return this.#query;
  }
  get visible(): readonly ExplorerRow[] {
    return this.#visible;
  }
  get dbIds(): readonly string[] {
    return this.#dbIds;
  }

  /** The difficulty levels the run's samples have (BIRD's three, Spider's four, `unknown`), in table order. */
  get difficulties(): readonly Difficulty[] {
    return this.#difficulties;
  }
  get cursorPosition(): number {
    const key = this.#s.cursor === null ? null : parseItemKey(this.#s.cursor);
    return key === null
      ? -1
      : this.#visible.findIndex((r) => r.sample.index === key.index && r.sample.sample === key.sample);
  }
  /** The row of a sample, found by binary search over the rows' (index, sample) order. */
  row(key: ItemKey | null): ExplorerRow | null {
    if (!key) return null;
    const rows = this.#rows;
    let lo = 0;
    let hi = rows.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = rows[mid]!.sample;
      const d = s.index - key.index || s.sample - key.sample;
      if (d === 0) return rows[mid]!;
      if (d < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return null;
  }
  get preview(): PreviewState | null {
    return this.#preview;
  }
  /** The corrected-gold overlay stored with the run, or null. */
  get overlay(): GoldOverlayRecord | null {
    return this.#overlay;
  }
  /** The run's flagged samples re-run on the older SQLite, or null when not measured. */
  get versionCheck(): VersionCheckRecord | null {
    return this.#versionCheck;
  }
  get canAttachOverlay(): boolean {
    return this.#store.service?.attachGoldOverlay !== undefined;
  }
  get canMeasureVersions(): boolean {
    return this.#store.service?.measureVersionEffects !== undefined;
  }

  async #seriesExclusionsOf(): Promise<Array<{ id: string; name: string; exclusions: Exclusion[] }>> {
    const series = (await this.#store.seriesOf?.(this.runId)) ?? [];
    const out = [];
    for (const s of series) {
      const exclusions = (await this.#store.runs.exclusions?.(s.id)) ?? [];
      if (exclusions.length) out.push({ id: s.id, name: s.name, exclusions });
    }
    return out;
  }

  /** Reads the overlay and the version check stored with the run (a failure is shown, the run still is). */
  async #loadExtras(current: () => boolean): Promise<void> {
    const service = this.#store.service;
    try {
      const [overlay, check, own, series] = await Promise.all([
        service?.goldOverlay?.(this.runId),
        service?.versionCheck?.(this.runId),
        this.#store.runs.exclusions?.(this.runId),
        this.#seriesExclusionsOf(),
      ]);
      if (!current()) return;
      this.#ownExclusions = own ?? [];
      this.#seriesExclusions = series;
      this.#overlay = overlay ?? null;
      this.#versionCheck = check ?? null;
    } catch (err) {
      if (!current()) return;
      const why = `The overlay and version check stored with the run could not be read: ${errorMessage(err)}`;
      this.#s.overlayError = why;
      this.#s.versionError = why;
    }
  }

  /** Scores a corrected-gold overlay and stores it with the run (replacing one attached before). */
  async attachOverlay(file: { name: string; text: string }): Promise<void> {
    const attach = this.#store.service?.attachGoldOverlay;
    if (!attach || this.#s.extrasBusy) return;
    this.#s.extrasBusy = 'overlay';
    this.#s.overlayError = null;
    try {
      this.#overlay = await attach(this.runId, file);
    } catch (err) {
      this.#s.overlayError = `${file.name}: ${errorMessage(err)}`;
    } finally {
      this.#s.extrasBusy = null;
    }
  }

  async removeOverlay(): Promise<void> {
    await this.#store.service?.removeGoldOverlay?.(this.runId);
    this.#overlay = null;
  }

  /** Re-runs the run's version-sensitive samples on SQLite 3.39.3 (sql.js 1.8.0) and stores the verdicts. */
  async measureVersions(): Promise<void> {
    const measure = this.#store.service?.measureVersionEffects;
    if (!measure || this.#s.extrasBusy) return;
    this.#s.extrasBusy = 'version';
    this.#s.versionError = null;
    try {
      this.#versionCheck = await measure(this.runId);
    } catch (err) {
      this.#s.versionError = `SQLite 3.39.3: ${errorMessage(err)}`;
    } finally {
      this.#s.extrasBusy = null;
    }
  }

  /**
   * Reads the run: the first time, a finished run's first page and count, then (after the first
   * paint) every sample; again (a reload), every sample while the old ones stay shown. A newer
   * call supersedes an older one. Writes no state before its first await: it may be started
   * while a derived value is computed.
   */
  async load(): Promise<void> {
    const generation = ++this.#generation;
    const current = () => generation === this.#generation;
    try {
      const run = await this.#store.runs.get(this.runId);
      if (!current()) return;
      this.#s.loading = true;
      if (!run) {
        this.#s.error = 'This run is not in browser storage (it was deleted, or the link is from another browser).';
        return;
      }
      // Small records (an overlay keeps the changed samples only): read before the samples.
      await this.#loadExtras(current);
      if (!current()) return;
      const trainer = await this.#store.trainerScores?.(this.runId).catch(() => null);
      if (!current()) return;
      // In the stored (index, sample) order: parallel to the samples when every one is there.
      const scoresFor = (n: number) => (trainer && trainer.scores.length === n ? trainer.scores : null);
      const rewardsFor = (n: number) => (trainer?.rewards && trainer.rewards.length === n ? trainer.rewards : null);
      this.#trainerStep = trainer && trainer.scores.length > 0 ? trainer.step : null;
      let questions: readonly Question[] | null | undefined;
      // A running run's blocks are unsorted: a page would read them all anyway.
      if (!this.#s.complete && run.status !== 'running') {
        const [page, total, dataset] = await Promise.all([
          this.#store.runs.samples(this.runId, { offset: 0, limit: FIRST_PAGE }),
          this.#store.runs.sampleCount(this.runId),
          this.#store.datasets.get(run.dataset.id),
        ]);
        if (!current()) return;
        questions = dataset ? dataset.questions : null;
        this.#run = run;
        this.#page = page;
        this.#s.storedTotal = total;
        this.#questions = questions;
        this.#s.error = null;
        this.#s.loading = false;
        if (page.length >= total) {
          const built = await rowsInSteps(page, questions, current, scoresFor(page.length), rewardsFor(page.length));
          if (!built) return;
          this.#samples = page;
          this.#allRows = built.rows;
          this.#dbIds = built.dbIds;
          this.#difficulties = built.difficulties;
          this.#s.complete = true;
          return;
        }
        await afterPaint();
        if (!current()) return;
      }
      const [samples, dataset] = await Promise.all([
        this.#store.runs.samples(this.runId),
        questions === undefined ? this.#store.datasets.get(run.dataset.id) : Promise.resolve(undefined),
      ]);
      if (!current()) return;
      const texts = questions === undefined ? (dataset ? dataset.questions : null) : questions;
      const built = await rowsInSteps(samples, texts, current, scoresFor(samples.length), rewardsFor(samples.length));
      if (!built) return;
      this.#run = run;
      this.#samples = samples;
      this.#allRows = built.rows;
      this.#dbIds = built.dbIds;
      this.#difficulties = built.difficulties;
      this.#s.complete = true;
      this.#page = [];
      this.#questions = texts;
      this.#s.error = null;
    } catch (err) {
      if (current()) this.#s.error = `The run could not be read: ${errorMessage(err)}`;
    } finally {
      if (current()) {
        this.#s.loading = false;
        if (this.#s.complete || this.#s.error !== null) this.#settle();
      }
    }
  }

  setQuery(patch: Partial<ItemQuery>): void {
    this.#query = { ...this.#query, ...patch };
  }
  resetQuery(): void {
    this.#query = DEFAULT_QUERY;
  }

  setCursor(key: string | null): void {
    this.#s.cursor = key;
  }
  /** Moves the cursor by `step` rows of the visible list (clamped); returns the new position. */
  moveCursor(step: number): number {
    const n = this.#visible.length;
    if (n === 0) return -1;
    const at = this.cursorPosition;
    // Without a cursor, the first step down lands on the first row and the first step up on the last.
    const from = at >= 0 ? at : step > 0 ? -1 : n;
    const next = Math.max(0, Math.min(n - 1, from + step));
    this.#s.cursor = keyOf(this.#visible[next]!.sample);
    return next;
  }

  /** Re-runs the open item for its result tables (once per item). */
  async loadPreview(key: ItemKey): Promise<void> {
    const k = keyOf(key);
    if (this.#preview?.key === k) return;
    const row = this.row(key);
    const run = this.#run;
    if (!row || !run) return;
    this.#preview = { key: k, loading: true, preview: null, result: null, error: null };
    try {
      const { preview, result, note } = await this.#previews.preview(run, row.sample, PREVIEW_ROWS);
      if (this.#preview?.key === k)
        this.#preview = { key: k, loading: false, preview, result, error: null, ...(note ? { note } : {}) };
    } catch (err) {
      if (this.#preview?.key === k)
        this.#preview = { key: k, loading: false, preview: null, result: null, error: errorMessage(err) };
    }
  }
}
