/**
 * State of the rubric-runs screen: RaR-style datasets (imported JSONL, or the example shipped
 * with the app), a run that generates answers with any engine (or replays a completions file)
 * and judges each with its question's rubric, the stored runs, and the open run's views. One
 * instance per page life, so a run goes on while the user looks at other screens.
 */
import { JudgeChecksState } from './judge-checks.svelte.ts';
import { LabelState } from './label-state.svelte.ts';
import type { RubricRepositories } from '../context/services.ts';
import type { EngineFactory } from '../../app/engine-ports.ts';
import type { RarDatasetRecord, RarRunHeader, StoredRarSample } from '../../app/rar-records.ts';
import type { LoadedEngine, RarRunHooks, RubricRunService } from '../../app/rubric-run-service.ts';
import { summarizeRubricScores, type RubricSummary } from '../../core/rubric/aggregate.ts';
import { errorMessage, WorkbenchError } from '../../core/errors.ts';
import type { Judge, JudgeStats } from '../../core/rubric/judge.ts';
import type { WeightingName } from '../../core/rubric/model.ts';
import {
  aggregateByGroup,
  judgedAggregationIds,
  summarizeAggregations,
  type AggregationSummary,
  type AggregationValue,
} from '../../core/rubric/aggregations.ts';
import { applyWeighting } from '../../core/rubric/model.ts';
import type { Aggregation } from '../../core/rubric/score.ts';
import type { Normalization } from '../../core/rubric/scores.ts';
import { EngineSlot, type EngineChoice } from '../engine/engine-slot.svelte.ts';
import { explicitImplicitAgreement, scoreHistograms, type Agreement } from './analysis.ts';

const EXAMPLE_RAR_URL = 'rubrics/example-rar.jsonl';

type PolicyChoice = 'engine' | 'replay';

/** The rubric-runs screen's own fields (stored lists, the open run's samples and the progress are `$state.raw`, apart). */
interface RarFields {
  /** What the last import did, or null. */
  message: string | null;
  /** Why reading, importing or deleting a dataset failed, or null. */
  error: string | null;
  /** The dataset a new run uses. */
  datasetId: string | null;
  /** Generate the answers with the policy engine, or replay a completions file. */
  policyChoice: PolicyChoice;
  judgeChoice: 'none' | EngineChoice;
  /** Samples per question. */
  n: number;
  temperature: number;
  maxTokens: number;
  seed: number;
  withImplicit: boolean;
  withLikert: boolean;
  weighting: WeightingName | 'as-given';
  /** Explicit aggregation: denominator and clipping. */
  normalization: Normalization;
  clip: boolean;
  /** The new run's name (empty: one made of the dataset and models). */
  name: string;
  running: boolean;
  /** Id of the run in progress, once stored. */
  runningId: string | null;
  runError: string | null;
  /** The run whose views are shown. */
  openId: string | null;
  /** A score at or above it passes (the explicit/implicit agreement). */
  threshold: number;
}

export class RarState {
  readonly policy: EngineSlot;
  readonly judge: EngineSlot;
  /** The judge checks of the open run (repeat, position bias, preferred vs perturbed). */
  readonly checks: JudgeChecksState;
  /** Human labels of the open run and their agreement with the judge. */
  readonly labels: LabelState;
  #datasets = $state.raw<RarDatasetRecord[]>([]);
  #runs = $state.raw<RarRunHeader[]>([]);
  #active = $state.raw<string[]>([]);
  #s = $state<RarFields>({
    message: null,
    error: null,
    datasetId: null,
    policyChoice: 'engine',
    judgeChoice: 'openai',
    n: 2,
    temperature: 0.7,
    maxTokens: 512,
    seed: 0,
    withImplicit: true,
    withLikert: true,
    weighting: 'as-given',
    normalization: 'positive',
    clip: true,
    name: '',
    running: false,
    runningId: null,
    runError: null,
    openId: null,
    threshold: 0.5,
  });
  #completionsFile = $state.raw<File | null>(null);
  #progress = $state.raw<{ done: number; total: number } | null>(null);
  #judgeStats = $state.raw<JudgeStats | null>(null);
  /** Plain field: the judge of the run in progress. */
  #activeJudge: Judge | null = null;
  #abort: AbortController | null = null;

  #openRun = $state.raw<RarRunHeader | null>(null);
  #openSamples = $state.raw<StoredRarSample[]>([]);

  get datasets(): RarDatasetRecord[] {
    return this.#datasets;
  }
  get runs(): RarRunHeader[] {
    return this.#runs;
  }
  get active(): string[] {
    return this.#active;
  }
  /** The form, the run in progress and the open run's id, read-only: the methods below change them. */
  get state(): Readonly<RarFields> {
    return this.#s;
  }
  get completionsFile(): File | null {
    return this.#completionsFile;
  }
  get progress(): { done: number; total: number } | null {
    return this.#progress;
  }
  /** The judge's counts during a run, read every second: "0 of 10 judged" can then say that every answer so far was unparseable. */
  get judgeStats(): JudgeStats | null {
    return this.#judgeStats;
  }
  get openRun(): RarRunHeader | null {
    return this.#openRun;
  }
  get openSamples(): StoredRarSample[] {
    return this.#openSamples;
  }

  chooseDataset(id: string | null): void {
    this.#s.datasetId = id;
  }
  choosePolicy(choice: PolicyChoice): void {
    this.#s.policyChoice = choice;
  }
  chooseCompletionsFile(file: File | null): void {
    this.#completionsFile = file;
  }
  chooseJudge(choice: 'none' | EngineChoice): void {
    this.#s.judgeChoice = choice;
  }
  setN(n: number): void {
    this.#s.n = n;
  }
  setTemperature(t: number): void {
    this.#s.temperature = t;
  }
  setMaxTokens(n: number): void {
    this.#s.maxTokens = n;
  }
  setSeed(seed: number): void {
    this.#s.seed = seed;
  }
  setWithImplicit(on: boolean): void {
    this.#s.withImplicit = on;
  }
  setWithLikert(on: boolean): void {
    this.#s.withLikert = on;
  }
  chooseWeighting(w: WeightingName | 'as-given'): void {
    this.#s.weighting = w;
  }
  setNormalization(n: Normalization): void {
    this.#s.normalization = n;
  }
  setClip(on: boolean): void {
    this.#s.clip = on;
  }
  setName(name: string): void {
    this.#s.name = name;
  }

  readonly #scores = $derived(this.openSamples.map((s) => s.scores));
  /**
   * The registry's aggregations of the open run's samples, by key `index.sample`: each question's
   * own rubric (with the run's weighting), the replayed file's `rule_score` as the rule reward,
   * group-rank among the question's samples. Derived from the stored verdicts, so runs stored
   * before the registry get them too; a sample whose dataset row is gone gets none.
   */
  readonly sampleAggregations = $derived.by((): Map<string, AggregationValue[]> => {
    const run = this.openRun;
    const rows = new Map(
      (this.datasets.find((d) => d.id === run?.dataset.id)?.rows ?? []).map((r) => [r.index, r] as const),
    );
    if (!run || rows.size === 0) return new Map();
    const rules = run.policy.kind === 'replay' ? run.policy.rules : undefined;
    const samples = this.openSamples.filter((s) => rows.has(s.index));
    const rubrics = new Map(
      [...rows.values()].map((r) => [
        r.index,
        run.weighting === 'as-given' ? r.rubric : applyWeighting(r.rubric, run.weighting),
      ]),
    );
    const values = aggregateByGroup(
      samples,
      (s) => s.index,
      (s) => ({ items: rubrics.get(s.index)!.items, scores: s.scores, rule: rules?.[s.index]?.[s.sample] ?? null }),
      judgedAggregationIds(samples.map((s) => s.scores)),
      run.explicit,
    );
    return new Map(samples.map((s, i) => [`${s.index}.${s.sample}`, values[i]!]));
  });
  readonly aggregationSummary = $derived.by((): AggregationSummary[] =>
    summarizeAggregations(
      this.openSamples.map((s) => this.sampleAggregations.get(`${s.index}.${s.sample}`)),
      judgedAggregationIds(this.#scores),
    ),
  );
  readonly summary = $derived.by((): RubricSummary | null =>
    this.#scores.length ? summarizeRubricScores(this.#scores) : null,
  );
  readonly histograms = $derived(scoreHistograms(this.#scores));
  readonly agreement = $derived.by((): Agreement => explicitImplicitAgreement(this.#scores, this.#s.threshold));

  #repo: Promise<RubricRepositories> | null = null;

  constructor(
    engines: EngineFactory,
    private readonly repositories: () => Promise<RubricRepositories>,
  ) {
    this.policy = new EngineSlot(engines, 'wb.rar.policy');
    this.judge = new EngineSlot(engines, 'wb.rar.judge');
    this.checks = new JudgeChecksState(() => this);
    this.labels = new LabelState(
      () => {
        const run = this.openRun;
        if (!run) return null;
        return {
          run,
          samples: this.openSamples,
          rows: this.datasets.find((d) => d.id === run.dataset.id)?.rows ?? [],
          aggregations: this.sampleAggregations,
        };
      },
      async () => (await this.repo()).labels,
    );
  }

  repo(): Promise<RubricRepositories> {
    return (this.#repo ??= this.repositories());
  }

  async refresh(): Promise<void> {
    try {
      const { rar } = await this.repo();
      const [datasets, runs, active] = await Promise.all([rar.listDatasets(), rar.listRuns(), rar.activeRunIds()]);
      this.#datasets = datasets;
      this.#runs = runs;
      this.#active = active;
      if (!this.#s.datasetId || !this.datasets.some((d) => d.id === this.#s.datasetId))
        this.#s.datasetId = this.datasets[0]?.id ?? null;
    } catch (err) {
      this.#s.error = `Stored rubric datasets could not be read: ${errorMessage(err)}`;
    }
  }

  /** A run whose status is `running` but whose lock nobody holds was interrupted (closed tab, reload). */
  interrupted(run: RarRunHeader): boolean {
    return run.status === 'running' && !this.active.includes(run.id) && this.#s.runningId !== run.id;
  }

  async importFile(file: File): Promise<void> {
    // A Parquet split (as released on the hub) is read by byte range; JSONL as text.
    await this.#import(async () => (/\.parquet$/i.test(file.name) ? file : file.text()), file.name);
  }

  /** Several files at once (a release's train / val / test splits): one dataset each, stopping at the first that fails. */
  async importFiles(files: readonly File[]): Promise<void> {
    const done: string[] = [];
    for (const f of files) {
      await this.importFile(f);
      if (this.#s.error) break;
      if (this.#s.message) done.push(this.#s.message);
    }
    this.#s.message = done.length ? done.join(' ') : null;
  }

  async importExample(): Promise<void> {
    await this.#import(
      async () => {
        const res = await fetch(new URL(EXAMPLE_RAR_URL, document.baseURI));
        if (!res.ok)
          throw new WorkbenchError(
            'FAILED',
            `the example dataset could not be read (${res.status} ${res.statusText}): reload the page (or reinstall the app)`,
          );
        return res.text();
      },
      'example-rar.jsonl',
      'Example: medicine and science (RaR)',
    );
  }

  async #import(read: () => Promise<string | Blob>, fileName: string, name?: string): Promise<void> {
    this.#s.error = null;
    this.#s.message = null;
    try {
      const { rar } = await this.repo();
      const d = await rar.importDataset(await read(), fileName, name);
      this.#s.message = `Imported "${d.name}": ${d.rows.length} questions, ${d.rows.reduce((n, r) => n + r.rubric.items.length, 0)} criteria.`;
      this.#s.datasetId = d.id;
      await this.refresh();
    } catch (err) {
      this.#s.error = errorMessage(err);
    }
  }

  async deleteDataset(id: string): Promise<void> {
    this.#s.error = null;
    try {
      await (await this.repo()).rar.deleteDataset(id);
      await this.refresh();
    } catch (err) {
      this.#s.error = errorMessage(err);
    }
  }

  async deleteRun(id: string): Promise<void> {
    await (await this.repo()).rar.deleteRun(id);
    if (this.#s.openId === id) this.close();
    await this.refresh();
  }

  aggregations(): Aggregation[] {
    return [
      'explicit',
      ...(this.#s.judgeChoice !== 'none' && this.#s.withImplicit ? (['implicit'] as const) : []),
      ...(this.#s.judgeChoice !== 'none' && this.#s.withLikert ? (['likert'] as const) : []),
    ];
  }

  /** The judge slot's engine, loaded on demand (null: no judge). */
  #judgeLoader(): (() => Promise<LoadedEngine>) | null {
    const choice = this.#s.judgeChoice;
    if (choice === 'none') return null;
    return () => {
      this.judge.chooseEngineKind(choice);
      return this.judge.ensureLoaded('judge');
    };
  }

  async start(): Promise<void> {
    if (this.#s.running) return;
    this.#s.runError = null;
    const dataset = this.datasets.find((d) => d.id === this.#s.datasetId);
    if (!dataset) {
      this.#s.runError = 'Choose a rubric dataset (import one, or add the example).';
      return;
    }
    if (!Number.isInteger(this.#s.n) || this.#s.n < 1 || this.#s.n > 64) {
      this.#s.runError = `Samples per question must be a whole number from 1 to 64 (got ${this.#s.n}).`;
      return;
    }
    await this.#drive(async (runs, hooks) => {
      const file = this.completionsFile;
      if (this.#s.policyChoice === 'replay' && !file)
        throw new WorkbenchError(
          'MISSING_FILE',
          'choose a completions file (JSONL, one {"id" or "index", "completion"} per line)',
        );
      return runs.start(
        {
          name: this.#s.name,
          datasetId: dataset.id,
          policy:
            this.#s.policyChoice === 'replay'
              ? { kind: 'replay', file: file! }
              : {
                  kind: 'engine',
                  load: async () => {
                    await this.policy.ensureLoaded('policy');
                    return { engine: this.policy.engine!, model: this.policy.recordedModel()! };
                  },
                  params: {
                    n: this.#s.n,
                    temperature: this.#s.temperature,
                    topP: 1,
                    maxTokens: this.#s.maxTokens,
                    seed: this.#s.seed,
                    stop: [],
                    logprobs: false,
                  },
                },
          judge: this.#judgeLoader(),
          samplesPerQuestion: this.#s.n,
          aggregations: this.aggregations(),
          explicit: { normalization: this.#s.normalization, clip: this.#s.clip, unresolved: 'null' },
          weighting: this.#s.weighting,
        },
        hooks,
      );
    });
  }

  async resume(run: RarRunHeader): Promise<void> {
    if (this.#s.running) return;
    this.#s.runError = null;
    await this.#drive(async (runs, hooks) => {
      if (run.policy.kind === 'engine') {
        await this.#readyFor(
          this.policy,
          run.policy.engine,
          run.policy.model.id,
          `load the run's policy model first (${run.policy.engine} · ${run.policy.model.id}): only the samples not stored are generated`,
        );
      }
      let judge: LoadedEngine | null = null;
      if (run.judge) {
        await this.#readyFor(
          this.judge,
          run.judge.engine,
          run.judge.model,
          `load the run's judge first (${run.judge.engine} · ${run.judge.model})`,
        );
        judge = { engine: this.judge.engine!, model: this.judge.model! };
      }
      return runs.resume(run.id, { policy: run.policy.kind === 'engine' ? this.policy.engine : null, judge }, hooks);
    });
  }

  /**
   * The slot holds the engine a run recorded: already loaded, or loaded now when the slot's
   * fields describe it (same kind and model); else `missing` says what to load.
   */
  async #readyFor(slot: EngineSlot, engine: string, modelId: string, missing: string): Promise<void> {
    if (slot.engine?.kind === engine && slot.model?.id === modelId) return;
    if (slot.slot.engineKind !== engine || slot.chosenModelId() !== modelId)
      throw new WorkbenchError('BAD_OPTION', missing);
    await slot.ensureLoaded(engine === 'openai' ? 'server' : 'model');
  }

  async #drive(go: (runs: RubricRunService, hooks: RarRunHooks) => Promise<RarRunHeader>): Promise<void> {
    this.#s.running = true;
    this.#progress = null;
    this.#judgeStats = null;
    const poll = setInterval(() => {
      if (this.#activeJudge) this.#judgeStats = { ...this.#activeJudge.stats };
    }, 1000);
    this.#abort = new AbortController();
    const signal = this.#abort.signal;
    try {
      const { rarRuns } = await this.repo();
      const done = await go(rarRuns, {
        signal,
        onJudge: (judge) => (this.#activeJudge = judge),
        onStart: (run) => {
          this.#s.runningId = run.id;
          void this.refresh();
        },
        onProgress: (p) => (this.#progress = p),
      });
      await this.open(done.id);
    } catch (err) {
      this.#s.runError = `The run stopped: ${errorMessage(err)}`;
    } finally {
      clearInterval(poll);
      this.#activeJudge = null;
      this.#s.running = false;
      this.#s.runningId = null;
      this.#abort = null;
      await this.refresh();
    }
  }

  cancel(): void {
    this.#abort?.abort();
    void this.policy.engine?.interrupt();
  }

  async open(id: string): Promise<void> {
    const { rar } = await this.repo();
    const [run, samples] = await Promise.all([rar.getRun(id), rar.samples(id)]);
    this.#s.openId = id;
    this.#openRun = run ?? null;
    this.#openSamples = samples;
  }

  close(): void {
    this.#s.openId = null;
    this.#openRun = null;
    this.#openSamples = [];
  }

  /** The open run as JSON Lines: one sample per line with its question id, completion and scores. */
  exportJsonl(): string {
    const run = this.openRun;
    return (
      this.openSamples
        .map((s) =>
          JSON.stringify({
            run: run?.id,
            id: s.rowId,
            index: s.index,
            sample: s.sample,
            completion: s.completion,
            generation: s.generation,
            scores: s.scores,
            aggregations: this.sampleAggregations.get(`${s.index}.${s.sample}`) ?? [],
          }),
        )
        .join('\n') + '\n'
    );
  }
}
