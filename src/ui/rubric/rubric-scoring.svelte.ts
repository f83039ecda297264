/**
 * The rubric screen's scoring panel: its settings, the judge engine (any engine of the app: the
 * CPU engine, WebLLM or an OpenAI-compatible server; none when the rubric is all programmatic),
 * the progress, and the run-level views derived from the stored scores. The scoring itself
 * (every sample judged, cached, aggregated and stored) is src/app/rubric-scoring-service.ts.
 */
import type { RubricRepository, StoredRubricRun } from '../../app/rubric-ports.ts';
import type { WorkbenchStore } from '../../app/store-ports.ts';
import { errorMessage } from '../../core/errors.ts';
import { summarizeRubricScores, type RubricSummary } from '../../core/rubric/aggregate.ts';
import {
  judgedAggregationIds,
  summarizeAggregations,
  type AggregationSummary,
  type AggregationValue,
} from '../../core/rubric/aggregations.ts';
import type { Judge, JudgeStats } from '../../core/rubric/judge.ts';
import type { Rubric } from '../../core/rubric/model.ts';
import type { ExplicitOptions, Normalization } from '../../core/rubric/scores.ts';
import type { SampleRecord } from '../../core/run/types.ts';
import { EngineSlot, type EngineChoice } from '../engine/engine-slot.svelte.ts';
import type { EngineFactory } from '../../app/engine-ports.ts';
import {
  createRubricScoringService,
  runAggregations,
  type RubricScoringService,
} from '../../app/rubric-scoring-service.ts';
import {
  exMatrix,
  judgeAnswered,
  explicitImplicitAgreement,
  scoreHistograms,
  scoreOf,
  type Agreement,
  type ExMatrix,
  type JudgeScoreKind,
} from './analysis.ts';

export type JudgeChoice = 'none' | EngineChoice;

export const needsJudge = (rubric: Rubric): boolean => rubric.items.some((i) => i.check.kind === 'judge');

/** The scoring panel's own fields (the stored scores, the run's samples and the judge's counts are `$state.raw`, apart). */
interface ScoringFields {
  /** The stored run to score (its id; empty for none). */
  runId: string;
  judgeChoice: JudgeChoice;
  /** Implicit and Likert need a judge; explicit is always computed. */
  withImplicit: boolean;
  withLikert: boolean;
  /** The user's pick for "Judge vs EX"; null until they choose (`matrixScore` is the one in force). */
  matrixScoreChosen: JudgeScoreKind | null;
  /** A score at or above it passes (the judge-vs-EX matrix and the agreement). */
  threshold: number;
  /** Explicit aggregation: denominator, clipping, and what an item without a verdict does. */
  normalization: Normalization;
  clip: boolean;
  /** The user's pick for a criterion without a verdict; null until they choose (`unresolved` is the one in force). */
  unresolvedChosen: ExplicitOptions['unresolved'] | null;
  running: boolean;
  /** Samples scored so far, of `total`. */
  done: number;
  total: number;
  error: string | null;
  /** What was written into the run's samples by the last scoring. */
  written: string | null;
}

export class ScoringState {
  #s = $state<ScoringFields>({
    runId: '',
    judgeChoice: 'none',
    withImplicit: true,
    withLikert: true,
    matrixScoreChosen: null,
    threshold: 0.5,
    normalization: 'positive',
    clip: true,
    unresolvedChosen: null,
    running: false,
    done: 0,
    total: 0,
    error: null,
    written: null,
  });
  /** The judge engine, chosen and loaded apart from the Generate screen's policy. */
  readonly judge: EngineSlot;
  #stats = $state.raw<JudgeStats | null>(null);
  #scored = $state.raw<StoredRubricRun | null>(null);
  #samples = $state.raw<SampleRecord[]>([]);
  #abort: AbortController | null = null;
  readonly #service: RubricScoringService;

  /** The panel's settings and the scoring in progress, read-only: the methods below change them. */
  get state(): Readonly<ScoringFields> {
    return this.#s;
  }
  /** The score "Judge vs EX" compares with EX: the implicit one when the judge gave it, else (no judge) the explicit one, until the user chooses. */
  get matrixScore(): JudgeScoreKind {
    return (
      this.#s.matrixScoreChosen ??
      (this.#scored?.samples.some((s) => s.scores.implicit) !== false ? 'implicit' : 'explicit')
    );
  }
  /**
   * What the explicit score does with a criterion without a verdict. Until the user chooses:
   * left out without a judge (the programmatic criteria still give a score: with 'null', a rubric
   * with judge criteria would give none at all), no score with one (every criterion must be decided).
   */
  get unresolved(): ExplicitOptions['unresolved'] {
    return this.#s.unresolvedChosen ?? (this.#s.judgeChoice === 'none' ? 'skip' : 'null');
  }
  get stats(): JudgeStats | null {
    return this.#stats;
  }
  get scored(): StoredRubricRun | null {
    return this.#scored;
  }
  get samples(): SampleRecord[] {
    return this.#samples;
  }

  /** Another run to score: what was stored for it with `rubric` is shown. */
  async chooseRun(runId: string, rubric: Rubric | null): Promise<void> {
    this.#s.runId = runId;
    await this.show(rubric);
  }
  chooseJudge(choice: JudgeChoice): void {
    this.#s.judgeChoice = choice;
  }
  setWithImplicit(on: boolean): void {
    this.#s.withImplicit = on;
  }
  setWithLikert(on: boolean): void {
    this.#s.withLikert = on;
  }
  chooseMatrixScore(kind: JudgeScoreKind): void {
    this.#s.matrixScoreChosen = kind;
  }
  setThreshold(t: number): void {
    this.#s.threshold = t;
  }
  setNormalization(n: Normalization): void {
    this.#s.normalization = n;
  }
  setClip(on: boolean): void {
    this.#s.clip = on;
  }
  setUnresolved(u: ExplicitOptions['unresolved']): void {
    this.#s.unresolvedChosen = u;
  }

  readonly summary = $derived.by((): RubricSummary | null =>
    this.scored ? summarizeRubricScores(this.#scores) : null,
  );
  readonly #runByKey = $derived(new Map(this.samples.map((s) => [`${s.index}.${s.sample}`, s])));
  /**
   * The aggregates are over the samples EX could score: one without a database was
   * never run, so the checks that still apply to it would lift the mean; those are counted apart.
   */
  readonly #scorable = $derived(
    (this.scored?.samples ?? []).filter((s) => this.#runByKey.get(`${s.index}.${s.sample}`)?.status !== 'missing-db'),
  );
  /** Rubric-scored samples whose database is missing: left out of every aggregate, counted here. */
  readonly unscorable = $derived((this.scored?.samples.length ?? 0) - this.#scorable.length);
  readonly #scores = $derived(this.#scorable.map((s) => s.scores));
  /** The registry's aggregations this scoring can give (those whose judgings it has). */
  readonly aggregationIds = $derived(judgedAggregationIds(this.#scores));
  /** Each scored sample's aggregations, by key `index.sample` (none for a sample without a database). */
  readonly aggregations = $derived.by((): Map<string, AggregationValue[]> => {
    const scored = this.scored;
    if (!scored) return new Map();
    const values = runAggregations(scored, this.#runByKey, this.aggregationIds);
    return new Map(
      scored.samples.flatMap((s, i) => (values[i] ? [[`${s.index}.${s.sample}`, values[i]] as const] : [])),
    );
  });
  readonly aggregationSummary = $derived.by((): AggregationSummary[] =>
    summarizeAggregations(
      this.#scorable.map((s) => this.aggregations.get(`${s.index}.${s.sample}`)),
      this.aggregationIds,
    ),
  );
  /** What a person reads for a sample key `index.sample`: its question id, and its sample when the run has several. */
  label(key: string): string {
    const s = this.#runByKey.get(key);
    if (!s) return key;
    const multi = this.samples.some((x) => x.sample > 0);
    return `#${s.questionId}${multi ? ` · s${s.sample}` : ''}`;
  }
  readonly histograms = $derived(scoreHistograms(this.#scores));
  /** Some judge answered: without one the "judge" side of the matrix is the SQL and regex checks alone. */
  readonly judged = $derived(judgeAnswered(this.#scores));
  readonly agreement = $derived.by((): Agreement | null => explicitImplicitAgreement(this.#scores, this.#s.threshold));
  readonly matrix = $derived.by((): ExMatrix | null => {
    const all = this.scored?.samples ?? [];
    if (all.length === 0) return null;
    const byKey = new Map(this.samples.map((s) => [`${s.index}.${s.sample}`, s]));
    return exMatrix(
      all.map((s) => {
        const run = byKey.get(`${s.index}.${s.sample}`);
        return {
          key: `${s.index}.${s.sample}`,
          ex: run?.ex ?? 0,
          score: scoreOf(s.scores, this.matrixScore),
          unscored: run?.status === 'missing-db',
        };
      }),
      this.#s.threshold,
    );
  });

  constructor(
    private readonly store: WorkbenchStore,
    private readonly repo: () => Promise<RubricRepository>,
    engines: EngineFactory,
  ) {
    this.judge = new EngineSlot(engines, 'wb.judge');
    this.#service = createRubricScoringService({
      runs: store.runs,
      datasets: store.datasets,
      databaseSchemas: (runId) => store.service.databaseSchemas(runId),
      rubrics: repo,
      now: () => new Date().toISOString(),
    });
  }

  /** Shows what was stored for (run, rubric), if anything. */
  async show(rubric: Rubric | null): Promise<void> {
    if (!this.#s.runId || !rubric) return;
    const [stored, samples] = await Promise.all([
      (await this.repo()).getScores(this.#s.runId, rubric.id),
      this.store.runs.samples(this.#s.runId),
    ]);
    this.#samples = samples;
    this.#scored = stored ?? null;
  }

  get explicitOptions(): ExplicitOptions {
    return { normalization: this.#s.normalization, clip: this.#s.clip, unresolved: this.unresolved };
  }

  /**
   * The stored verdicts with the rubric's current weights and the explicit options: no judge
   * call, no cache lookup. Refused when a criterion's text or check changed (its verdicts would
   * be stale): then score again, which replays the cached judge answers.
   */
  async reaggregate(rubric: Rubric): Promise<void> {
    const scored = this.scored;
    if (!scored) return;
    const next = await this.#service.reaggregate(scored, $state.snapshot(rubric) as Rubric, this.explicitOptions);
    if (!next) {
      this.#s.error =
        'Criteria were added, removed or reworded since this run was scored: score it again (judge answers come from the cache).';
      return;
    }
    this.#s.error = null;
    this.#scored = next;
    await this.writeIntoRun(next);
  }

  /** The scores go into the run's own samples too (the service says how); the panel says so. */
  private async writeIntoRun(result: StoredRubricRun): Promise<void> {
    const n = await this.#service.writeIntoRun(result, this.#samples);
    this.#s.written = `Written into the run's ${n} samples: its exports and best-of-n by rubric score use “${result.rubric.title}”.`;
  }

  cancel(): void {
    this.#abort?.abort();
  }

  async score(rubric: Rubric): Promise<void> {
    if (this.#s.running) return;
    this.#s.error = null;
    this.#s.written = null;
    this.#stats = null;
    const run = this.#s.runId ? await this.store.runs.get(this.#s.runId) : undefined;
    if (!run) {
      this.#s.error = 'Choose a stored run to score.';
      return;
    }
    // Without a judge, judge criteria are recorded as skipped (the panel says so) and the
    // programmatic ones are still decided.
    const choice = this.#s.judgeChoice;
    let poll: ReturnType<typeof setInterval> | undefined;
    let judge: Judge | null = null;
    this.#s.running = true;
    this.#abort = new AbortController();
    try {
      const result = await this.#service.score(
        {
          run,
          rubric: $state.snapshot(rubric) as Rubric,
          judge:
            choice === 'none'
              ? null
              : () => {
                  this.judge.chooseEngineKind(choice);
                  return this.judge.ensureLoaded('judge');
                },
          withImplicit: this.#s.withImplicit,
          withLikert: this.#s.withLikert,
          explicit: this.explicitOptions,
        },
        {
          signal: this.#abort.signal,
          onSamples: (samples) => {
            this.#samples = samples;
            this.#s.total = samples.length;
            this.#s.done = 0;
          },
          // The judge's counts while a sample is judged (retries of unparseable answers can take a
          // minute before the first sample is done): the progress line says what is happening.
          onJudge: (j) => {
            judge = j;
            poll = setInterval(() => (this.#stats = { ...j.stats }), 1000);
          },
          onProgress: ({ done }) => {
            this.#s.done = done;
            if (judge) this.#stats = { ...judge.stats };
          },
        },
      );
      this.#scored = result;
      await this.writeIntoRun(result);
    } catch (err) {
      this.#s.error = `Scoring stopped: ${errorMessage(err)}`;
    } finally {
      clearInterval(poll);
      this.#s.running = false;
      this.#abort = null;
    }
  }
}
