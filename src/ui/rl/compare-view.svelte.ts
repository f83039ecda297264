/**
 * Comparison of stored runs (checkpoints) on the same questions: the first chosen run is the
 * baseline A, every other run is B against it. Computed by the core's `compareRuns` with the
 * CLI's defaults (10,000 paired bootstrap resamples, mulberry32 seed 0), so the numbers match
 * `npm run cli -- compare` on the exported run files.
 */
import type { WorkbenchStore } from '../../adapters/store/workbench-store.ts';
import { errorMessage } from '../../core/errors.ts';
import { compareRuns, type RunComparison } from '../../core/rl/compare.ts';
import { compareExplanations, compareJson } from '../../core/rl/compare-report.ts';
import { mulberry32 } from '../../core/rl/rng.ts';
import type { RunFile } from '../../core/run/types.ts';
import { downloadText, safeFileName } from '../shell/download.ts';

export const RESAMPLES = 10_000;
export const SEED = 0;

export interface ComparedPair {
  a: RunFile;
  b: RunFile;
  result: RunComparison | null;
  explanations: Record<string, string>;
  error: string | null;
}

export class CompareView {
  readonly #store: WorkbenchStore;
  #runIds = $state.raw<readonly string[]>([]);
  #files = $state.raw<ReadonlyMap<string, RunFile>>(new Map());
  #errors = $state.raw<ReadonlyMap<string, string>>(new Map());
  #loading = $state(0);

  #pairs = $state.raw<ComparedPair[]>([]);
  #computing = $state(false);
  /** Bumped by every new choice of runs: a comparison of an older choice is dropped. */
  #generation = 0;

  constructor(store: WorkbenchStore) {
    this.#store = store;
  }

  get runIds(): readonly string[] {
    return this.#runIds;
  }
  get loading(): boolean {
    return this.#loading > 0;
  }
  get errors(): ReadonlyMap<string, string> {
    return this.#errors;
  }
  get pairs(): readonly ComparedPair[] {
    return this.#pairs;
  }
  /** Every chosen run is loaded and compared (or failed to load). */
  get ready(): boolean {
    return this.#runIds.every((id) => this.#files.has(id) || this.#errors.has(id)) && this.#loading === 0 && !this.#computing;
  }

  /**
   * Compares the baseline with every other chosen run, one pair per task (the bootstrap takes
   * about a second for 500 questions), so the page can say it is comparing in the meantime.
   */
  async #compare(): Promise<void> {
    const generation = ++this.#generation;
    const files = this.#runIds.map((id) => this.#files.get(id)).filter((f): f is RunFile => f !== undefined);
    this.#pairs = [];
    if (files.length < 2) return;
    this.#computing = true;
    const [a, ...rest] = files as [RunFile, ...RunFile[]];
    const pairs: ComparedPair[] = [];
    try {
      for (const b of rest) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        if (generation !== this.#generation) return;
        try {
          const result = compareRuns(a, b, { resamples: RESAMPLES, makeRng: () => mulberry32(SEED) });
          pairs.push({ a, b, result, explanations: compareExplanations(result.overall), error: null });
        } catch (err) {
          pairs.push({ a, b, result: null, explanations: {}, error: errorMessage(err) });
        }
        this.#pairs = [...pairs];
      }
    } finally {
      if (generation === this.#generation) this.#computing = false;
    }
  }

  /** Chooses the runs (baseline first) and loads the ones not read yet. */
  async setRunIds(ids: readonly string[]): Promise<void> {
    this.#runIds = [...new Set(ids)];
    const missing = this.#runIds.filter((id) => !this.#files.has(id));
    if (missing.length === 0) return this.#compare();
    this.#loading++;
    try {
      const loaded = await Promise.all(
        missing.map(async (id): Promise<[string, RunFile | string]> => {
          try {
            return [id, await this.#store.runs.export(id)];
          } catch (err) {
            return [id, `run ${id} could not be read: ${errorMessage(err)}`];
          }
        }),
      );
      const files = new Map(this.#files);
      const errors = new Map(this.#errors);
      for (const [id, v] of loaded) {
        if (typeof v === 'string') errors.set(id, v);
        else files.set(id, v);
      }
      this.#files = files;
      this.#errors = errors;
    } finally {
      this.#loading--;
    }
    await this.#compare();
  }

  /** The comparison as the CLI's `compare --out` writes it. */
  download(pair: ComparedPair): void {
    if (!pair.result) return;
    const meta = { runA: pair.a.run.name, runB: pair.b.run.name, seed: SEED, resamples: RESAMPLES };
    const name = `compare-${safeFileName(pair.a.run.name)}-vs-${safeFileName(pair.b.run.name)}.json`;
    downloadText(name, JSON.stringify(compareJson(pair.result, meta), null, 1), 'application/json');
  }
}
