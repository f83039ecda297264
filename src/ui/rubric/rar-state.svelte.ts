/**
 * State of the rubric-runs screen: RaR-style datasets (imported JSONL, or the example shipped
 * with the app), a run that generates answers with any engine (or replays a completions file)
 * and judges each with its question's rubric, the stored runs, and the open run's views. One
 * instance per page life, so a run goes on while the user looks at other screens.
 */
import type { RubricRepository } from '../../adapters/judge/idb-judge-cache.ts';
import type { RubricRepositories } from '../workbench/services.ts';
import type { EngineFactory } from '../../adapters/engines/engine-factory.ts';
import type {
  RarRepository,
  NewRarRun,
  RarDatasetRecord,
  RarRunHeader,
  StoredRarSample,
} from '../../adapters/judge/rar-store.ts';
import { summarizeRubricScores, type RubricSummary } from '../../core/rubric/aggregate.ts';
import { errorMessage, WorkbenchError } from '../../core/errors.ts';
import { Judge, type JudgeStats } from '../../core/rubric/judge.ts';
import type { WeightingName } from '../../core/rubric/model.ts';
import { RAR_POLICY_PROMPT_VERSION, pairCompletions, replayCompletions } from '../../core/rubric/rar-run.ts';
import type { Aggregation } from '../../core/rubric/score.ts';
import type { Normalization } from '../../core/rubric/scores.ts';
import { EngineSlot, type EngineChoice } from '../engine/engine-slot.svelte.ts';
import { explicitImplicitAgreement, scoreHistograms, type Agreement } from './analysis.ts';

export const EXAMPLE_RAR_URL = 'rubrics/example-rar.jsonl';

export type PolicyChoice = 'engine' | 'replay';

export class RarState {
  readonly policy: EngineSlot;
  readonly judge: EngineSlot;
  #datasets = $state.raw<RarDatasetRecord[]>([]);
  #runs = $state.raw<RarRunHeader[]>([]);
  #active = $state.raw<string[]>([]);
  #message = $state<string | null>(null);
  #error = $state<string | null>(null);

  #datasetId = $state<string | null>(null);
  #policyChoice = $state<PolicyChoice>('engine');
  #completionsFile = $state.raw<File | null>(null);
  #judgeChoice = $state<'none' | EngineChoice>('openai');
  #n = $state(2);
  #temperature = $state(0.7);
  #maxTokens = $state(512);
  #seed = $state(0);
  #withImplicit = $state(true);
  #withLikert = $state(true);
  #weighting = $state<WeightingName | 'as-given'>('as-given');
  #normalization = $state<Normalization>('positive');
  #clip = $state(true);
  #name = $state('');

  #running = $state(false);
  #runningId = $state<string | null>(null);
  #progress = $state.raw<{ done: number; total: number } | null>(null);
  #judgeStats = $state.raw<JudgeStats | null>(null);
  /** Plain field: the judge of the run in progress. */
  #activeJudge: Judge | null = null;
  #runError = $state<string | null>(null);
  #abort: AbortController | null = null;

  #openId = $state<string | null>(null);
  #openRun = $state.raw<RarRunHeader | null>(null);
  #openSamples = $state.raw<StoredRarSample[]>([]);
  #threshold = $state(0.5);

  get datasets(): RarDatasetRecord[] {
    return this.#datasets;
  }
  get runs(): RarRunHeader[] {
    return this.#runs;
  }
  get active(): string[] {
    return this.#active;
  }
  get message(): string | null {
    return this.#message;
  }
  get error(): string | null {
    return this.#error;
  }
  get datasetId(): string | null {
    return this.#datasetId;
  }
  get policyChoice(): PolicyChoice {
    return this.#policyChoice;
  }
  get completionsFile(): File | null {
    return this.#completionsFile;
  }
  get judgeChoice(): 'none' | EngineChoice {
    return this.#judgeChoice;
  }
  get n(): number {
    return this.#n;
  }
  get temperature(): number {
    return this.#temperature;
  }
  get maxTokens(): number {
    return this.#maxTokens;
  }
  get seed(): number {
    return this.#seed;
  }
  get withImplicit(): boolean {
    return this.#withImplicit;
  }
  get withLikert(): boolean {
    return this.#withLikert;
  }
  get weighting(): WeightingName | 'as-given' {
    return this.#weighting;
  }
  get normalization(): Normalization {
    return this.#normalization;
  }
  get clip(): boolean {
    return this.#clip;
  }
  get name(): string {
    return this.#name;
  }
  get running(): boolean {
    return this.#running;
  }
  get runningId(): string | null {
    return this.#runningId;
  }
  get progress(): { done: number; total: number } | null {
    return this.#progress;
  }
  /** The judge's counts during a run, read every second: "0 of 10 judged" can then say that every answer so far was unparseable. */
  get judgeStats(): JudgeStats | null {
    return this.#judgeStats;
  }
  get runError(): string | null {
    return this.#runError;
  }
  get openId(): string | null {
    return this.#openId;
  }
  get openRun(): RarRunHeader | null {
    return this.#openRun;
  }
  get openSamples(): StoredRarSample[] {
    return this.#openSamples;
  }
  get threshold(): number {
    return this.#threshold;
  }

  chooseDataset(id: string | null): void {
    this.#datasetId = id;
  }
  choosePolicy(choice: PolicyChoice): void {
    this.#policyChoice = choice;
  }
  chooseCompletionsFile(file: File | null): void {
    this.#completionsFile = file;
  }
  chooseJudge(choice: 'none' | EngineChoice): void {
    this.#judgeChoice = choice;
  }
  setN(n: number): void {
    this.#n = n;
  }
  setTemperature(t: number): void {
    this.#temperature = t;
  }
  setMaxTokens(n: number): void {
    this.#maxTokens = n;
  }
  setSeed(seed: number): void {
    this.#seed = seed;
  }
  setWithImplicit(on: boolean): void {
    this.#withImplicit = on;
  }
  setWithLikert(on: boolean): void {
    this.#withLikert = on;
  }
  chooseWeighting(w: WeightingName | 'as-given'): void {
    this.#weighting = w;
  }
  setNormalization(n: Normalization): void {
    this.#normalization = n;
  }
  setClip(on: boolean): void {
    this.#clip = on;
  }
  setName(name: string): void {
    this.#name = name;
  }

  readonly #scores = $derived(this.openSamples.map((s) => s.scores));
  readonly summary = $derived.by((): RubricSummary | null =>
    this.#scores.length ? summarizeRubricScores(this.#scores) : null,
  );
  readonly histograms = $derived(scoreHistograms(this.#scores));
  readonly agreement = $derived.by((): Agreement => explicitImplicitAgreement(this.#scores, this.threshold));

  #repo: Promise<{ rar: RarRepository; rubrics: RubricRepository }> | null = null;

  constructor(
    engines: EngineFactory,
    private readonly repositories: () => Promise<RubricRepositories>,
  ) {
    this.policy = new EngineSlot(engines, 'wb.rar.policy');
    this.judge = new EngineSlot(engines, 'wb.rar.judge');
  }

  repo(): Promise<{ rar: RarRepository; rubrics: RubricRepository }> {
    return (this.#repo ??= this.repositories());
  }

  async refresh(): Promise<void> {
    try {
      const { rar } = await this.repo();
      const [datasets, runs, active] = await Promise.all([rar.listDatasets(), rar.listRuns(), rar.activeRunIds()]);
      this.#datasets = datasets;
      this.#runs = runs;
      this.#active = active;
      if (!this.datasetId || !this.datasets.some((d) => d.id === this.datasetId))
        this.#datasetId = this.datasets[0]?.id ?? null;
    } catch (err) {
      this.#error = `Stored rubric datasets could not be read: ${errorMessage(err)}`;
    }
  }

  /** A run whose status is `running` but whose lock nobody holds was interrupted (closed tab, reload). */
  interrupted(run: RarRunHeader): boolean {
    return run.status === 'running' && !this.active.includes(run.id) && this.runningId !== run.id;
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
      if (this.error) break;
      if (this.message) done.push(this.message);
    }
    this.#message = done.length ? done.join(' ') : null;
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
    this.#error = null;
    this.#message = null;
    try {
      const { rar } = await this.repo();
      const d = await rar.importDataset(await read(), fileName, name);
      this.#message = `Imported "${d.name}": ${d.rows.length} questions, ${d.rows.reduce((n, r) => n + r.rubric.items.length, 0)} criteria.`;
      this.#datasetId = d.id;
      await this.refresh();
    } catch (err) {
      this.#error = errorMessage(err);
    }
  }

  async deleteDataset(id: string): Promise<void> {
    this.#error = null;
    try {
      await (await this.repo()).rar.deleteDataset(id);
      await this.refresh();
    } catch (err) {
      this.#error = errorMessage(err);
    }
  }

  async deleteRun(id: string): Promise<void> {
    await (await this.repo()).rar.deleteRun(id);
    if (this.openId === id) this.close();
    await this.refresh();
  }

  aggregations(): Aggregation[] {
    return [
      'explicit',
      ...(this.judgeChoice !== 'none' && this.withImplicit ? (['implicit'] as const) : []),
      ...(this.judgeChoice !== 'none' && this.withLikert ? (['likert'] as const) : []),
    ];
  }

  async #judge(signal: AbortSignal): Promise<Judge | null> {
    if (this.judgeChoice === 'none') return null;
    this.judge.chooseEngineKind(this.judgeChoice);
    const { engine, model } = await this.judge.ensureLoaded('judge');
    const { rubrics } = await this.repo();
    return (this.#activeJudge = new Judge({ engine, model: model.id, cache: rubrics.cache(), signal }));
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.#runError = null;
    const dataset = this.datasets.find((d) => d.id === this.datasetId);
    if (!dataset) {
      this.#runError = 'Choose a rubric dataset (import one, or add the example).';
      return;
    }
    if (!Number.isInteger(this.n) || this.n < 1 || this.n > 64) {
      this.#runError = `Samples per question must be a whole number from 1 to 64 (got ${this.n}).`;
      return;
    }
    await this.#drive(async (rar, signal, hooks) => {
      let policy: NewRarRun['policy'];
      if (this.policyChoice === 'replay') {
        const file = this.completionsFile;
        if (!file)
          throw new WorkbenchError(
            'MISSING_FILE',
            'choose a completions file (JSONL, one {"id" or "index", "completion"} per line)',
          );
        const text = await file.text();
        const jobs = pairCompletions(text, file.name, dataset.rows);
        const { sha256Text } = await import('../../adapters/import/pair-run.ts');
        policy = {
          kind: 'replay',
          file: { name: file.name, ...(await sha256Text(text)) },
          completions: Object.fromEntries(replayCompletions(jobs)),
        };
      } else {
        await this.policy.ensureLoaded('policy');
        policy = {
          kind: 'engine',
          engine: this.policy.engine!.kind,
          model: this.policy.recordedModel()!,
          prompt: RAR_POLICY_PROMPT_VERSION,
          params: {
            n: this.n,
            temperature: this.temperature,
            topP: 1,
            maxTokens: this.maxTokens,
            seed: this.seed,
            stop: [],
            logprobs: false,
          },
        };
      }
      const judge = await this.#judge(signal);
      const modelName = policy.kind === 'engine' ? policy.model.id : policy.file.name;
      const req: NewRarRun = {
        name: this.name.trim() || `${dataset.name} · ${modelName}${judge ? ` · judged by ${judge.info.model}` : ''}`,
        datasetId: dataset.id,
        policy,
        samplesPerQuestion: this.n,
        aggregations: this.aggregations(),
        explicit: { normalization: this.normalization, clip: this.clip, unresolved: 'null' },
        weighting: this.weighting,
      };
      return rar.start(req, { policy: policy.kind === 'engine' ? this.policy.engine : null, judge }, hooks);
    });
  }

  async resume(run: RarRunHeader): Promise<void> {
    if (this.running) return;
    this.#runError = null;
    await this.#drive(async (rar, signal, hooks) => {
      if (run.policy.kind === 'engine') {
        await this.#readyFor(
          this.policy,
          run.policy.engine,
          run.policy.model.id,
          `load the run's policy model first (${run.policy.engine} · ${run.policy.model.id}): only the samples not stored are generated`,
        );
      }
      let judge: Judge | null = null;
      if (run.judge) {
        await this.#readyFor(
          this.judge,
          run.judge.engine,
          run.judge.model,
          `load the run's judge first (${run.judge.engine} · ${run.judge.model})`,
        );
        const { rubrics } = await this.repo();
        judge = this.#activeJudge = new Judge({
          engine: this.judge.engine!,
          model: this.judge.model!.id,
          cache: rubrics.cache(),
          signal,
        });
      }
      return rar.resume(run.id, { policy: run.policy.kind === 'engine' ? this.policy.engine : null, judge }, hooks);
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

  async #drive(
    go: (
      rar: RarRepository,
      signal: AbortSignal,
      hooks: Parameters<RarRepository['start']>[2],
    ) => Promise<RarRunHeader>,
  ): Promise<void> {
    this.#running = true;
    this.#progress = null;
    this.#judgeStats = null;
    const poll = setInterval(() => {
      if (this.#activeJudge) this.#judgeStats = { ...this.#activeJudge.stats };
    }, 1000);
    this.#abort = new AbortController();
    const signal = this.#abort.signal;
    try {
      const { rar } = await this.repo();
      const done = await go(rar, signal, {
        signal,
        onStart: (run) => {
          this.#runningId = run.id;
          void this.refresh();
        },
        onProgress: (p) => (this.#progress = p),
      });
      await this.open(done.id);
    } catch (err) {
      this.#runError = `The run stopped: ${errorMessage(err)}`;
    } finally {
      clearInterval(poll);
      this.#activeJudge = null;
      this.#running = false;
      this.#runningId = null;
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
    this.#openId = id;
    this.#openRun = run ?? null;
    this.#openSamples = samples;
  }

  close(): void {
    this.#openId = null;
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
          }),
        )
        .join('\n') + '\n'
    );
  }
}
