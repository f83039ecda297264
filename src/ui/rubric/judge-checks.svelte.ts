/**
 * The judge checks of a stored rubric run, in the app: the core's repeat consistency, position
 * bias and preferred-vs-perturbed (core/rubric/judge-checks.ts, the functions `rubric check`
 * runs) with the Rubric runs screen's judge engine, over the open run's samples and its
 * dataset's rubrics. Judge answers go through the same IndexedDB judge cache (each repeat under
 * keys of its own), so running a check again replays them.
 */
import { errorMessage } from '../../core/errors.ts';
import { AGGREGATION_IDS } from '../../core/rubric/aggregations.ts';
import {
  perturbReferences,
  positionBias,
  preferredVsPerturbed,
  repeatCache,
  repeatConsistency,
  samplePairs,
  type CheckSample,
  type PerturbedReport,
  type RepeatReport,
  type SwapReport,
} from '../../core/rubric/judge-checks.ts';
import { Judge } from '../../core/rubric/judge.ts';
import { applyWeighting } from '../../core/rubric/model.ts';
import type { RarRow } from '../../core/rubric/rar-dataset.ts';
import type { RarState } from './rar-state.svelte.ts';

interface ChecksFields {
  /** Repeats for the repeat check (0: off). */
  repeat: number;
  swap: boolean;
  /** Preferred vs perturbed, the perturbed answers written by the judge engine from each row's reference. */
  perturb: boolean;
  running: boolean;
  step: string | null;
  error: string | null;
  skipped: Array<{ id: string; reason: string }>;
}

interface ChecksResult {
  runId: string;
  repeat: RepeatReport | null;
  swap: SwapReport | null;
  perturbed: PerturbedReport | null;
}

export class JudgeChecksState {
  #s = $state<ChecksFields>({
    repeat: 3,
    swap: true,
    perturb: true,
    running: false,
    step: null,
    error: null,
    skipped: [],
  });
  #result = $state.raw<ChecksResult | null>(null);
  #abort: AbortController | null = null;

  constructor(private readonly rarOf: () => RarState) {}

  get state(): Readonly<ChecksFields> {
    return this.#s;
  }
  get result(): ChecksResult | null {
    return this.#result;
  }
  setRepeat(k: number): void {
    this.#s.repeat = Number.isInteger(k) && k >= 0 ? k : 0;
  }
  setSwap(on: boolean): void {
    this.#s.swap = on;
  }
  setPerturb(on: boolean): void {
    this.#s.perturb = on;
  }
  cancel(): void {
    this.#abort?.abort();
  }

  async run(): Promise<void> {
    if (this.#s.running) return;
    const r = this.rarOf();
    const run = r.openRun;
    this.#s.error = null;
    this.#s.skipped = [];
    if (!run) return;
    if (this.#s.repeat === 1) {
      this.#s.error = 'The repeat check needs 2 or more repeats (0 leaves it out).';
      return;
    }
    if (this.#s.repeat === 0 && !this.#s.swap && !this.#s.perturb) {
      this.#s.error = 'Choose a check: repeats, position bias or preferred vs perturbed.';
      return;
    }
    if (r.state.judgeChoice === 'none') {
      this.#s.error = 'Choose the judge engine (under “3. Judge”): the checks ask it again.';
      return;
    }
    const rows: readonly RarRow[] = r.datasets.find((d) => d.id === run.dataset.id)?.rows ?? [];
    const rubricOf = (row: RarRow) =>
      run.weighting === 'as-given' ? row.rubric : applyWeighting(row.rubric, run.weighting);
    const samples: CheckSample[] = [...r.openSamples]
      .sort((a, b) => a.index - b.index || a.sample - b.sample)
      .flatMap((s) => {
        const row = rows[s.index];
        return row
          ? [
              {
                row: row.id,
                index: s.index,
                sample: s.sample,
                question: row.question,
                reference: row.referenceAnswer,
                rubric: rubricOf(row),
                response: s.completion,
              },
            ]
          : [];
      });
    this.#s.running = true;
    this.#abort = new AbortController();
    const signal = this.#abort.signal;
    try {
      r.judge.chooseEngineKind(r.state.judgeChoice);
      const { engine, model } = await r.judge.ensureLoaded('judge');
      const cache = (await r.repo()).rubrics.cache();
      const judge = new Judge({ engine, model: model.id, cache, signal });
      const out: ChecksResult = { runId: run.id, repeat: null, swap: null, perturbed: null };
      if (this.#s.repeat >= 2) {
        this.#s.step = `repeat check: ${samples.length} samples × ${this.#s.repeat} repeats`;
        out.repeat = await repeatConsistency({
          samples,
          k: this.#s.repeat,
          judgeFor: (k) => new Judge({ engine, model: model.id, cache: repeatCache(cache, k), signal }),
          concurrency: 2,
        });
      }
      let perturbedPairs = null;
      if (this.#s.perturb) {
        this.#s.step = 'writing perturbed answers from the references';
        const made = await perturbReferences({
          rows: rows.map((row) => ({ ...row, rubric: rubricOf(row) })),
          engine,
          model: model.id,
          params: { temperature: 0, topP: 1, maxTokens: 1024, seed: 0, stop: [], logprobs: false },
          cache,
        });
        this.#s.skipped = made.skipped;
        perturbedPairs = made.pairs;
      }
      if (this.#s.swap) {
        const pairs = samplePairs(samples);
        const all = pairs.length
          ? pairs
          : (perturbedPairs ?? []).map((p) => ({
              id: p.id,
              question: p.question,
              rubric: p.rubric,
              x: p.reference,
              y: p.perturbed,
            }));
        this.#s.step = `position bias: ${all.length} pairs, each judged in both orders`;
        out.swap = await positionBias({ pairs: all, judge });
      }
      if (perturbedPairs) {
        this.#s.step = `preferred vs perturbed: ${perturbedPairs.length} pairs`;
        out.perturbed = await preferredVsPerturbed({
          pairs: perturbedPairs,
          judge,
          aggregations: [...AGGREGATION_IDS],
          explicit: run.explicit,
        });
      }
      this.#result = out;
    } catch (err) {
      this.#s.error = `The checks stopped: ${errorMessage(err)}`;
    } finally {
      this.#s.running = false;
      this.#s.step = null;
      this.#abort = null;
    }
  }
}
