/**
 * Comparison of stored runs (checkpoints) on the same questions: the first chosen run is the
 * baseline A, every other run is B against it. Computed by the core's `compareRuns` with the
 * CLI's defaults (10,000 paired bootstrap resamples, mulberry32 seed 0), so the numbers match
 * `npm run cli -- compare` on the exported run files. The bootstrap runs in the analysis worker
 * (workers/analysis.api.ts), which reads both runs' samples from IndexedDB itself: the page
 * holds only the run headers and the result, with progress and cancel.
 */
import type { AnalysisProgress, WorkbenchStore } from '../../app/store-ports.ts';
import { errorMessage, isCancellation } from '../../core/errors.ts';
import { compareRuns, type RunComparison } from '../../core/rl/compare.ts';
import { excludedPresent, mergeExclusions, withoutExcluded } from '../../core/eval/exclusions.ts';
import { compareExplanations, compareJson } from '../../core/rl/compare-report.ts';
import { mulberry32 } from '../../core/util/rng.ts';
import type { RunFile, RunHeader } from '../../core/run/types.ts';
import { downloadText, safeFileName } from '../shell/download.ts';
import { nextTask } from '../shell/staged.svelte.ts';
import type { GoldChoice } from '../../core/run/overlay-record.ts';

export const RESAMPLES = 10_000;
export const SEED = 0;

export interface ComparedPair {
  a: Pick<RunFile, 'run'>;
  b: Pick<RunFile, 'run'>;
  result: RunComparison | null;
  explanations: Record<string, string>;
  error: string | null;
}

/** The comparison's own fields (the runs, headers, pairs and progress are `$state.raw`, apart). */
interface CompareFields {
  /** How many reads of run headers are under way (`loading` while any is). */
  pending: number;
  /** A pair is being compared (in the analysis worker); `progress` says how far. */
  computing: boolean;
  /** The user stopped the comparison; `recompute()` starts it again. */
  cancelled: boolean;
  /** Which gold: `corrected` scores each run against its own stored overlay (a run without one keeps the official gold). */
  gold: GoldChoice;
}

export class CompareView {
  readonly #store: WorkbenchStore;
  #s = $state<CompareFields>({ pending: 0, computing: false, cancelled: false, gold: 'official' });
  #runIds = $state.raw<readonly string[]>([]);
  #headers = $state.raw<ReadonlyMap<string, RunHeader>>(new Map());
  #errors = $state.raw<ReadonlyMap<string, string>>(new Map());

  #pairs = $state.raw<ComparedPair[]>([]);
  #progress = $state.raw<AnalysisProgress | null>(null);
  /** The names of the overlays stored with the chosen runs, by run id (docs/gold-overlays.md). */
  #overlayNames = $state.raw<ReadonlyMap<string, string>>(new Map());
  /** Bumped by every new choice of runs: a comparison of an older choice is dropped (and its worker stopped). */
  #generation = 0;
  #job: AbortController | null = null;

  constructor(store: WorkbenchStore) {
    this.#store = store;
  }

  /** The comparison's load, computation and gold, read-only: the methods below change it. */
  get state(): Readonly<CompareFields> {
    return this.#s;
  }
  get runIds(): readonly string[] {
    return this.#runIds;
  }
  get loading(): boolean {
    return this.#s.pending > 0;
  }
  /** The overlays of the chosen runs (their names, joined), or null when none has one: then no choice is offered. */
  get overlayNames(): string | null {
    const names = this.#runIds.flatMap((id) => this.#overlayNames.get(id) ?? []);
    return names.length > 0 ? [...new Set(names)].join(', ') : null;
  }
  /** Compares the chosen runs again against the chosen gold (each run's own overlay for `corrected`). */
  setGold(gold: GoldChoice): void {
    if (gold === this.#s.gold) return;
    this.#s.gold = gold;
    if (this.#runIds.length >= 2) void this.recompute();
  }
  get errors(): ReadonlyMap<string, string> {
    return this.#errors;
  }
  get pairs(): readonly ComparedPair[] {
    return this.#pairs;
  }
  /** How far the pair being compared is (reading samples, bootstrap buckets). */
  get progress(): AnalysisProgress | null {
    return this.#progress;
  }
  /** Every chosen run is loaded and compared (or failed to load). */
  get ready(): boolean {
    return (
      this.#runIds.every((id) => this.#headers.has(id) || this.#errors.has(id)) &&
      this.#s.pending === 0 &&
      !this.#s.computing
    );
  }

  /** One pair: in the worker, or on the page with a store that has no worker (test doubles). */
  async #comparePair(a: RunHeader, b: RunHeader, signal: AbortSignal): Promise<RunComparison> {
    const analysis = this.#store.analysis;
    if (analysis) {
      return analysis.compare(
        a.id,
        b.id,
        { resamples: RESAMPLES, seed: SEED, gold: this.#s.gold },
        { signal, onProgress: (p) => void (signal.aborted || (this.#progress = p)) },
      );
    }
    // The exported samples carry their corrected verdict (`corrected`) when the run has an overlay.
    const corrected = (f: RunFile): RunFile =>
      this.#s.gold === 'official'
        ? f
        : {
            ...f,
            samples: f.samples.map((s) => (s.corrected ? { ...s, ex: s.corrected.ex, status: s.corrected.status } : s)),
          };
    const [fa, fb] = (await Promise.all([this.#store.runs.export(a.id), this.#store.runs.export(b.id)])).map(
      corrected,
    ) as [RunFile, RunFile];
    // A question excluded from either run is left out of both, as in the worker.
    const own = (id: string) => this.#store.runs.exclusions?.(id) ?? Promise.resolve([]);
    const exclusions = mergeExclusions(...(await Promise.all([own(a.id), own(b.id)])));
    const kept = (f: RunFile): RunFile => ({ ...f, samples: [...withoutExcluded(f.samples, exclusions)] });
    const comparison = compareRuns(kept(fa), kept(fb), { resamples: RESAMPLES, makeRng: () => mulberry32(SEED) });
    const excluded = excludedPresent([...fa.samples, ...fb.samples], exclusions);
    return excluded > 0 ? { ...comparison, excluded } : comparison;
  }

  /** Compares the baseline with every other chosen run, one pair at a time, showing each as it is done. */
  async recompute(): Promise<void> {
    const generation = ++this.#generation;
    this.#job?.abort();
    const job = new AbortController();
    this.#job = job;
    const headers = this.#runIds.map((id) => this.#headers.get(id)).filter((h): h is RunHeader => h !== undefined);
    this.#pairs = [];
    this.#s.cancelled = false;
    this.#progress = null;
    if (headers.length < 2) return;
    this.#s.computing = true;
    const [a, ...rest] = headers as [RunHeader, ...RunHeader[]];
    const pairs: ComparedPair[] = [];
    try {
      for (const b of rest) {
        try {
          const result = await this.#comparePair(a, b, job.signal);
          // The result's message (7,812 questions at 500,000 samples) is received in one task and drawn in the next ones.
          await nextTask();
          if (generation !== this.#generation) return;
          pairs.push({
            a: { run: a },
            b: { run: b },
            result,
            explanations: compareExplanations(result.overall),
            error: null,
          });
        } catch (err) {
          if (generation !== this.#generation) return;
          if (isCancellation(err)) {
            this.#s.cancelled = true;
            return;
          }
          pairs.push({ a: { run: a }, b: { run: b }, result: null, explanations: {}, error: errorMessage(err) });
        }
        this.#pairs = [...pairs];
      }
    } finally {
      if (generation === this.#generation) {
        this.#s.computing = false;
        this.#progress = null;
      }
    }
  }

  /** Stops the comparison under way (the worker is terminated); the pairs done so far stay. */
  cancel(): void {
    this.#job?.abort();
  }

  /** Chooses the runs (baseline first) and reads the headers not read yet. */
  async setRunIds(ids: readonly string[]): Promise<void> {
    this.#runIds = [...new Set(ids)];
    const missing = this.#runIds.filter((id) => !this.#headers.has(id));
    if (missing.length === 0) return this.recompute();
    this.#s.pending++;
    const overlays = new Map(this.#overlayNames);
    try {
      const loaded = await Promise.all(
        missing.map(async (id): Promise<[string, RunHeader | string]> => {
          try {
            const [header, overlay] = await Promise.all([
              this.#store.runs.get(id),
              this.#store.service?.goldOverlay?.(id).catch(() => undefined),
            ]);
            if (overlay) overlays.set(id, overlay.name);
            return [id, header ?? `run ${id} is not in browser storage (deleted?)`];
          } catch (err) {
            return [id, `run ${id} could not be read: ${errorMessage(err)}`];
          }
        }),
      );
      const headers = new Map(this.#headers);
      const errors = new Map(this.#errors);
      for (const [id, v] of loaded) {
        if (typeof v === 'string') errors.set(id, v);
        else headers.set(id, v);
      }
      this.#headers = headers;
      this.#errors = errors;
      this.#overlayNames = overlays;
    } finally {
      this.#s.pending--;
    }
    await this.recompute();
  }

  /** The comparison as the CLI's `compare --out` writes it. */
  download(pair: ComparedPair): void {
    if (!pair.result) return;
    const meta = { runA: pair.a.run.name, runB: pair.b.run.name, seed: SEED, resamples: RESAMPLES };
    const name = `compare-${safeFileName(pair.a.run.name)}-vs-${safeFileName(pair.b.run.name)}.json`;
    downloadText(name, JSON.stringify(compareJson(pair.result, meta), null, 1), 'application/json');
  }
}
