/**
 * The reward playground's state: one question of a stored dataset, the SQL being edited, and
 * every signal of its last attempt (src/core/playground). Typing runs the attempt after a short
 * pause; an attempt still running when the next one is due is cancelled (its worker is
 * terminated), so a runaway query never holds the editor. The SQL, the formula and the TS
 * switch are written into the address (replaceState: a keystroke is not a history entry), once
 * per attempt when the pause after the last keystroke ends.
 */
import { errorMessage, isCancellation } from '../../core/errors.ts';
import { OFFICIAL_TIMEOUT_MS, OFFICIAL_VES_ITERATIONS } from '../../core/eval/constants.ts';
import type { MetricName } from '../../core/eval/executor.ts';
import type { AttemptReport, AttemptRequest, PlaygroundQuestion } from '../../core/playground/try-attempt.ts';
import { correctedGolds } from '../../core/playground/corrected-gold.ts';
import type { ExRule } from '../../core/compare/spider-ex.ts';
import type { GoldOverlayRecord } from '../../core/run/overlay-record.ts';
import type { SqlValue } from '../../core/types.ts';
import type { RunHeader } from '../../core/run/types.ts';
import { datasetExRule } from '../../app/ex-rule.ts';
import { tourSteps, type TourStep } from '../../core/playground/tour.ts';
import type { DatasetRecord, DatasetRepository, RunRepository, RunService } from '../../app/store-ports.ts';
import { DEFAULT_PLAYGROUND_FORMULA, type PlaygroundParams } from '../shell/route.ts';
import type { PlaygroundService } from '../../app/playground-service.ts';

/** Pause after the last keystroke before the attempt runs. */
const TYPING_PAUSE_MS = 350;
/** An attempt running longer than this is cancelled by the next keystroke; a quicker one may finish. */
const LONG_ATTEMPT_MS = 300;
/** First rows of each side shown and explained. */
const PLAYGROUND_ROWS = 50;

/** Tricks that can win: the tour looks for a question of the dataset on which each does. */
const WINNABLE = new Set(['empty', 'select-null', 'constant-answer', 'delete-table', 'temp-shadow', 'update-null']);
/** Questions (with a stored database) the tour tries per trick before it gives up. */
export const TOUR_SCAN = 40;

export interface TourOutcome {
  step: TourStep;
  /** The question the step ran on: the open one, or for a trick that can win, the first where it does. */
  question: PlaygroundQuestion;
  /** Questions tried for this step. */
  tried: number;
  /** The reward formula the step was scored with (the editor's when the tour ran). */
  formula: string;
  official: AttemptReport | null;
  error: string | null;
}

interface PlaygroundDeps {
  datasets: Pick<DatasetRepository, 'list' | 'get'>;
  /** The run whose item opened the playground (its EX rule, its formula). */
  runs: Pick<RunRepository, 'get'>;
  service: Pick<RunService, 'saveAttempt' | 'goldOverlay'>;
  playground: PlaygroundService;
  /** Called after an attempt was kept (the scratch run changed: views of it read it again). */
  kept?: () => void;
  /** Writes the editor's state (and the run, when one opened the playground) into the address. */
  writeAddress: (datasetId: string, index: number, params: PlaygroundParams, runId: string | null) => void;
}

/** The corrected gold of a question under the run's overlay (null: none, or the overlay cannot be read, with why). */
interface CorrectedGold {
  sql: string | null;
  error: string | null;
}

/** The question at gold position `i` of the dataset, as the playground needs it. */
function questionAt(ds: DatasetRecord, i: number): PlaygroundQuestion | null {
  const gold = ds.gold[i];
  if (!gold) return null;
  const q = ds.questions[i];
  return {
    index: i,
    questionId: q?.questionId ?? i,
    dbId: gold.dbId,
    difficulty: q?.difficulty ?? 'unknown',
    goldSql: gold.sql,
    question: q?.question ?? null,
    evidence: q?.evidence ?? '',
  };
}

/**
 * The gold position the playground opens a dataset on: the first question whose database is
 * stored (a question without one cannot run, and would open on "not scored"); null when none is.
 */
export function firstWithDatabase(ds: Pick<DatasetRecord, 'gold' | 'databases'>): number | null {
  const i = ds.gold.findIndex((g) => !!ds.databases[g.dbId]);
  return i < 0 ? null : i;
}

/** PlaygroundState's own fields (read through `state`). */
interface PlaygroundFields {
  index: number | null;
  sql: string;
  formula: string;
  ts: boolean;
  rves: boolean;
  /** The SQL and settings (formula, TS, R-VES) the report is for (the editor may have moved on). */
  reportFor: string | null;
  running: boolean;
  progress: string | null;
  error: string | null;
  touring: boolean;
  saving: boolean;
  saveError: string | null;
  /** Why the route's run could not be used (not stored, another dataset, its overlay unreadable). */
  runError: string | null;
  /** Attempts cancelled while their SQL ran (a newer attempt was due). */
  cancelled: number;
}

export class PlaygroundState {
  readonly #deps: PlaygroundDeps;
  #datasets = $state.raw<DatasetRecord[]>([]);
  #dataset = $state.raw<DatasetRecord | null>(null);
  #s = $state<PlaygroundFields>({
    index: null,
    sql: '',
    formula: DEFAULT_PLAYGROUND_FORMULA,
    ts: false,
    rves: false,
    reportFor: null,
    running: false,
    progress: null,
    error: null,
    touring: false,
    saving: false,
    saveError: null,
    runError: null,
    cancelled: 0,
  });
  #report = $state.raw<AttemptReport | null>(null);
  #tour = $state.raw<TourOutcome[] | null>(null);
  #saved = $state.raw<{ runId: string; index: number; sample: number } | null>(null);
  /** The run of the route's `run` (null without one, or when it is not of this dataset). */
  #openedRun = $state.raw<RunHeader | null>(null);
  #runId: string | null = null;
  /** The dataset and run the run fields were read for. */
  #runKey: string | null = null;
  #overlay = $state.raw<GoldOverlayRecord | null>(null);
  /** The overlay read once (null without one, or when it cannot be read: runError says why). */
  #corrections: ((q: PlaygroundQuestion) => string | null) | null = null;
  #controller: AbortController | null = null;
  #startedAt = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #seq = 0;

  constructor(deps: PlaygroundDeps) {
    this.#deps = deps;
  }

  /** The fields the screen shows, read-only: the methods below change them. */
  get state(): Readonly<PlaygroundFields> {
    return this.#s;
  }
  get datasets(): readonly DatasetRecord[] {
    return this.#datasets;
  }
  get dataset(): DatasetRecord | null {
    return this.#dataset;
  }
  get question(): PlaygroundQuestion | null {
    const ds = this.#dataset;
    const i = this.#s.index;
    return ds && i !== null ? questionAt(ds, i) : null;
  }
  /** The question's database is stored (an attempt can run). */
  get hasDatabase(): boolean {
    const q = this.question;
    return !!q && !!this.#dataset?.databases[q.dbId];
  }
  get report(): AttemptReport | null {
    return this.#report;
  }
  /**
   * The report shown was made for another SQL or other settings than the editor's (an attempt is
   * due or running): ticking TS or changing the formula makes it stale too, until the attempt
   * with them is scored.
   */
  get stale(): boolean {
    return this.#report !== null && this.#s.reportFor !== this.#editorKey();
  }

  #editorKey(): string {
    return JSON.stringify([this.#s.sql, this.#s.formula, this.#s.ts, this.#s.rves]);
  }
  get tour(): readonly TourOutcome[] | null {
    return this.#tour;
  }
  get saved(): { runId: string; index: number; sample: number } | null {
    return this.#saved;
  }
  /** The run whose item opened the playground, when it is a run of the open dataset. */
  get run(): RunHeader | null {
    return this.#openedRun;
  }
  /** The corrected-gold overlay stored with the run, if any. */
  get overlay(): GoldOverlayRecord | null {
    return this.#overlay;
  }
  /**
   * The EX rule of the attempts: the run's own when a run's item opened the playground (as its
   * dashboard says: BIRD's when it names none), else the one a run on the dataset gets by default.
   */
  get exRule(): ExRule {
    const run = this.#openedRun;
    if (run) return run.config.exRule ?? 'bird';
    return this.#dataset ? datasetExRule(this.#dataset) : 'bird';
  }
  /** The open question's corrected gold under the run's overlay. */
  get correctedGold(): CorrectedGold {
    const q = this.question;
    return q ? this.#correctedOf(q) : { sql: null, error: null };
  }
  #correctedOf(q: PlaygroundQuestion): CorrectedGold {
    const overlay = this.#overlay;
    const corrections = this.#corrections;
    if (!overlay || !corrections) return { sql: null, error: null };
    try {
      return { sql: corrections(q), error: null };
    } catch (err) {
      return { sql: null, error: `the run's overlay ${overlay.name}: ${errorMessage(err)}` };
    }
  }
  get tourSteps(): TourStep[] {
    const q = this.question;
    return q ? tourSteps({ goldSql: q.goldSql, question: q.question }) : [];
  }

  /**
   * Lists the datasets (for the picker) and opens the route's question with its editor state;
   * `runId`: the run whose item opened it (its EX rule and corrected-gold overlay apply).
   */
  async open(
    datasetId: string | null,
    index: number | null,
    params: PlaygroundParams | undefined,
    runId: string | null = null,
  ): Promise<void> {
    this.#datasets = await this.#deps.datasets.list();
    const ds = (datasetId ? await this.#deps.datasets.get(datasetId) : undefined) ?? null;
    const runChanged = await this.#openRun(ds, runId);
    const changed = ds?.id !== this.#dataset?.id || index !== this.#s.index || runChanged;
    this.#dataset = ds;
    this.#s.index = ds && index !== null && index < ds.gold.length ? index : null;
    if (changed) {
      this.#tour = null;
      this.#saved = null;
      this.#report = null;
      this.#s.reportFor = null;
    }
    const q = this.question;
    if (!q) return;
    const sql = params ? params.sql : changed ? q.goldSql : this.#s.sql;
    const same = params
      ? sql === this.#s.sql && params.formula === this.#s.formula && params.ts === this.#s.ts
      : !changed;
    if (params) {
      this.#s.formula = params.formula;
      this.#s.ts = params.ts;
    }
    this.#s.sql = sql;
    if (!same || this.#report === null) this.#schedule(0);
  }

  /**
   * Reads the route's run and its overlay at every opening (an overlay may have been attached or
   * removed since); the overlay's text is parsed again only when it changed. True when the run,
   * its rule or its overlay in force changed.
   */
  async #openRun(ds: DatasetRecord | null, runId: string | null): Promise<boolean> {
    const id = ds && runId ? runId : null;
    let run: RunHeader | null = null;
    let overlay: GoldOverlayRecord | null = null;
    let error: string | null = null;
    if (id && ds) {
      try {
        run = (await this.#deps.runs.get(id)) ?? null;
        if (!run) error = `run ${id} is not stored: the dataset's own EX rule applies, and no overlay.`;
        else if (run.dataset.id !== ds.id) {
          error = `run "${run.name}" is a run of dataset "${run.dataset.name}", not of "${ds.name}": its rule and overlay do not apply.`;
          run = null;
        } else overlay = (await this.#deps.service.goldOverlay?.(id)) ?? null;
      } catch (err) {
        error = `run ${id}: ${errorMessage(err)}`;
      }
    }
    const key = [ds?.id, id, run?.config.exRule, overlay?.name, overlay?.attachedAt, error].join('\n');
    if (key === this.#runKey) return false;
    this.#runKey = key;
    this.#runId = id;
    this.#openedRun = run;
    this.#overlay = overlay;
    this.#s.runError = error;
    try {
      this.#corrections = overlay ? correctedGolds(overlay) : null;
    } catch (err) {
      this.#corrections = null;
      this.#s.runError = `the overlay ${overlay?.name ?? ''} of run ${id} cannot be read: ${errorMessage(err)}`;
    }
    return true;
  }

  setSql(sql: string): void {
    if (sql === this.#s.sql) return;
    this.#s.sql = sql;
    this.#saved = null;
    this.#schedule(TYPING_PAUSE_MS);
  }
  setFormula(formula: string): void {
    this.#s.formula = formula;
    this.#schedule(TYPING_PAUSE_MS);
  }
  setTs(on: boolean): void {
    this.#s.ts = on;
    this.#schedule(0);
  }
  setRves(on: boolean): void {
    this.#s.rves = on;
    this.#schedule(0);
  }
  #metrics(): MetricName[] {
    return [...(this.#s.ts ? (['ts'] as const) : []), ...(this.#s.rves ? (['r-ves'] as const) : [])];
  }

  #request(q: PlaygroundQuestion, sql: string): AttemptRequest {
    return {
      question: q,
      sql,
      metrics: this.#metrics(),
      timeoutMs: OFFICIAL_TIMEOUT_MS,
      vesIterations: OFFICIAL_VES_ITERATIONS,
      formula: this.#s.formula,
      previewRows: PLAYGROUND_ROWS,
      exRule: this.exRule,
      correctedGoldSql: this.#correctedOf(q).sql,
    };
  }

  #schedule(ms: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    // A long attempt is cancelled at once (its worker is terminated): its result is outdated. A
    // quick one may finish; the next attempt cancels it if it still runs when it starts.
    if (this.#controller && performance.now() - this.#startedAt > LONG_ATTEMPT_MS) this.#controller.abort();
    this.#timer = setTimeout(() => {
      this.#writeAddress();
      void this.#run();
    }, ms);
  }

  /**
   * The editor's state into the address once per attempt, when the pause after the last keystroke
   * ends (not per keystroke: `history.replaceState` costs the page's thread about 2 ms a call).
   */
  #writeAddress(): void {
    const ds = this.#dataset;
    const i = this.#s.index;
    if (ds && i !== null)
      this.#deps.writeAddress(ds.id, i, { sql: this.#s.sql, formula: this.#s.formula, ts: this.#s.ts }, this.#runId);
  }

  async #run(): Promise<void> {
    this.#timer = null;
    const ds = this.#dataset;
    const q = this.question;
    if (!ds || !q || !this.hasDatabase) return;
    this.#controller?.abort();
    const seq = ++this.#seq;
    const controller = new AbortController();
    this.#controller = controller;
    this.#startedAt = performance.now();
    const sql = this.#s.sql;
    const key = this.#editorKey();
    this.#s.running = true;
    this.#s.progress = null;
    try {
      const report = await this.#deps.playground.attempt(ds, this.#request(q, sql), {
        signal: controller.signal,
        onEvent: (e) => {
          if (seq !== this.#seq) return;
          if (e.type === 'suite-progress')
            this.#s.progress = `building the test suite of ${e.dbId}: ${e.done} of ${e.total} candidate databases`;
          else if (e.type === 'db-loaded') this.#s.progress = `database ${e.dbId} loaded`;
        },
      });
      if (seq !== this.#seq) return;
      this.#report = report;
      this.#s.reportFor = key;
      this.#s.error = null;
    } catch (err) {
      if (controller.signal.aborted || isCancellation(err)) {
        this.#s.cancelled++;
        return;
      }
      if (seq !== this.#seq) return;
      this.#s.error = errorMessage(err);
    } finally {
      if (seq === this.#seq) {
        this.#s.running = false;
        this.#s.progress = null;
        this.#controller = null;
      }
    }
  }

  /**
   * Runs every tour step (official semantics, read-only when it writes, TS when on): the rewrites
   * and the tricks that cannot win on the open question, each trick that can win on the first of
   * the dataset's questions (the open one first, then up to TOUR_SCAN with a stored database)
   * where it does, so a student sees it earn its reward on a real question.
   */
  async runTour(): Promise<void> {
    const ds = this.#dataset;
    const here = this.question;
    // Every step's verdict needs the question's database: without it the gold itself would read "not scored".
    if (!ds || !here || !this.hasDatabase || this.#s.touring) return;
    this.#s.touring = true;
    const others = ds.gold
      .map((_, i) => i)
      .filter((i) => i !== here.index && !!ds.databases[ds.gold[i]!.dbId])
      .slice(0, TOUR_SCAN - 1)
      .map((i) => questionAt(ds, i)!);
    const out: TourOutcome[] = [];
    try {
      for (const first of tourSteps(here)) {
        const candidates: PlaygroundQuestion[] = WINNABLE.has(first.id) ? [here, ...others] : [here];
        let outcome: TourOutcome | null = null;
        /** The step on the open question, shown when it wins nowhere. */
        let onHere: TourOutcome | null = null;
        let tried = 0;
        for (const q of candidates) {
          const step: TourStep | undefined =
            q === here ? first : tourSteps({ goldSql: q.goldSql, question: q.question }).find((s) => s.id === first.id);
          if (!step) continue;
          tried++;
          outcome = await this.#tourAttempt(ds, q, step, tried);
          // A constant answer that missed: the literals of the gold's own answer, when it is one distinct row.
          const missed = outcome.official;
          if (step.id === 'constant-answer' && missed && missed.record.ex !== 1 && missed.preview) {
            const answer = {
              rows: missed.preview.goldRows as SqlValue[][],
              rowCount: missed.record.goldRowCount ?? -1,
            };
            const literal = tourSteps({ goldSql: q.goldSql, question: q.question }, answer).find(
              (s) => s.id === step.id,
            );
            if (literal && literal.sql !== step.sql) outcome = await this.#tourAttempt(ds, q, literal, tried);
          }
          if (q === here) onHere = outcome;
          if (outcome.official?.record.ex === 1) break;
        }
        if (outcome && outcome.official?.record.ex !== 1 && onHere) outcome = { ...onHere, tried };
        if (outcome) out.push(outcome);
        this.#tour = [...out];
      }
    } finally {
      this.#s.touring = false;
    }
  }

  async #tourAttempt(ds: DatasetRecord, q: PlaygroundQuestion, step: TourStep, tried: number): Promise<TourOutcome> {
    const formula = this.#s.formula;
    try {
      const official = await this.#deps.playground.attempt(ds, { ...this.#request(q, step.sql), census: false });
      return { step, question: q, tried, formula, official, error: null };
    } catch (err) {
      return { step, question: q, tried, formula, official: null, error: errorMessage(err) };
    }
  }

  /** Keeps the editor's SQL as a sample of the dataset's scratch run. */
  async save(): Promise<void> {
    const ds = this.#dataset;
    const i = this.#s.index;
    if (!ds || i === null || this.#s.saving) return;
    this.#s.saving = true;
    this.#s.saveError = null;
    try {
      const r = await this.#deps.service.saveAttempt({ datasetId: ds.id, index: i, sql: this.#s.sql });
      this.#saved = { runId: r.run.id, index: r.index, sample: r.sample };
      this.#deps.kept?.();
    } catch (err) {
      this.#s.saveError = errorMessage(err);
    } finally {
      this.#s.saving = false;
    }
  }

  /** Leaving the playground: nothing keeps running, the worker is freed. */
  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#controller?.abort();
    this.#seq++;
    this.#s.running = false;
    void this.#deps.playground.release();
  }
}
