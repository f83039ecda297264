/**
 * The new-run form: dataset, subset, predictions file and configuration, checked as the user
 * types, turned into a `RunRequest`. The subset is chosen by the pure core (`selectSubset`).
 */
import { errorMessage, isWorkbenchError } from '../../core/errors.ts';
import { METRICS, type MetricName } from '../../core/eval/executor.ts';
import { DEFAULT_SUITE_SPEC } from '../../core/ts/suite.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig } from '../../core/run/types.ts';
import { parseIdList, selectSubset, type Subset } from '../../core/views/subset.ts';
import type { Difficulty } from '../../core/types.ts';
import type { DatasetRecord, ReplayCheck, RunRequest, RunService } from '../../adapters/store/workbench-store.ts';
import type { PredictionsInput } from '../../adapters/store/records.ts';
import type { PairingFinding } from '../../core/formats/pairing.ts';
import { APP_MAX_TIMEOUT_S } from '../../core/eval/constants.ts';
import { readUtf8File } from '../../adapters/utf8-text.ts';

export interface PredictionsFile {
  name: string;
  /** Text formats are read here; a Parquet file or an Inspect .eval log is kept as the File and read in the import worker. */
  input: PredictionsInput;
  bytes: number;
}

/** Pairs the chosen file with the chosen dataset before the run (the run service's checkReplay). */
export type ReplayChecker = RunService['checkReplay'];

export class NewRunDraft {
  readonly #checker: ReplayChecker | null;
  #check = $state.raw<ReplayCheck | null>(null);
  #checking = $state(false);
  #checkSeq = 0;
  #dataset = $state.raw<DatasetRecord | null>(null);
  #dbIds = $state.raw<string[]>([]);
  #difficulties = $state.raw<Difficulty[]>([]);
  #idsText = $state('');
  #sampleOn = $state(false);
  #sampleN = $state(100);
  #seed = $state(1);
  #predictions = $state.raw<PredictionsFile | null>(null);
  #predictionsError = $state<string | null>(null);
  #name = $state('');
  #nameTouched = false;
  #timeoutS = $state(DEFAULT_RUN_CONFIG.timeoutMs / 1000);
  #readOnly = $state(DEFAULT_RUN_CONFIG.readOnly);
  #metrics = $state.raw<MetricName[]>([...DEFAULT_RUN_CONFIG.metrics]);
  #fence = $state<RunConfig['fence']>(DEFAULT_RUN_CONFIG.fence);
  #verdictCache = $state(true);

  constructor(checker: ReplayChecker | null = null) {
    this.#checker = checker;
  }

  #subset = $derived.by((): { subset: Subset | null; error: string | null } => {
    const ds = this.#dataset;
    if (!ds) return { subset: null, error: null };
    try {
      const questionIds = parseIdList(this.#idsText);
      const sample = this.#sampleOn ? { n: this.#sampleN, seed: this.#seed } : null;
      return {
        subset: selectSubset(ds.questions, {
          dbIds: this.#dbIds,
          difficulties: this.#difficulties,
          questionIds,
          sample,
        }),
        error: null,
      };
    } catch (err) {
      return { subset: null, error: errorMessage(err) };
    }
  });

  /** Databases of the dataset with their question counts, stored ones first. */
  #dbChoices = $derived.by(() => {
    const ds = this.#dataset;
    if (!ds) return [];
    const counts = new Map<string, number>();
    for (const q of ds.questions) counts.set(q.dbId, (counts.get(q.dbId) ?? 0) + 1);
    return [...counts]
      .map(([id, n]) => ({ id, questions: n, stored: id in ds.databases }))
      .sort((a, b) => Number(b.stored) - Number(a.stored) || a.id.localeCompare(b.id));
  });

  #difficultyChoices = $derived.by(() => {
    const seen = new Set(this.#dataset?.questions.map((q) => q.difficulty) ?? []);
    return (['simple', 'moderate', 'challenging', 'unknown'] as const).filter((d) => seen.has(d));
  });

  get dataset(): DatasetRecord | null {
    return this.#dataset;
  }
  get dbIds(): readonly string[] {
    return this.#dbIds;
  }
  get difficulties(): readonly Difficulty[] {
    return this.#difficulties;
  }
  get idsText(): string {
    return this.#idsText;
  }
  get sampleOn(): boolean {
    return this.#sampleOn;
  }
  get sampleN(): number {
    return this.#sampleN;
  }
  get seed(): number {
    return this.#seed;
  }
  get predictions(): PredictionsFile | null {
    return this.#predictions;
  }
  get predictionsError(): string | null {
    return this.#predictionsError;
  }
  /** What pairing the file with the dataset finds (a run refuses a file with findings); empty until checked. */
  get findings(): readonly PairingFinding[] {
    return this.#check?.findings ?? [];
  }
  /** The file as paired with the dataset (samples, questions), once checked. */
  get checked(): ReplayCheck | null {
    return this.#check;
  }
  get checking(): boolean {
    return this.#checking;
  }
  get name(): string {
    return this.#name;
  }
  get timeoutS(): number {
    return this.#timeoutS;
  }
  get readOnly(): boolean {
    return this.#readOnly;
  }
  get metrics(): readonly MetricName[] {
    return this.#metrics;
  }
  get fence(): RunConfig['fence'] {
    return this.#fence;
  }
  get verdictCache(): boolean {
    return this.#verdictCache;
  }
  get subset(): Subset | null {
    return this.#subset.subset;
  }
  get subsetError(): string | null {
    return this.#subset.error;
  }
  get dbChoices(): readonly { id: string; questions: number; stored: boolean }[] {
    return this.#dbChoices;
  }
  get difficultyChoices(): readonly Difficulty[] {
    return this.#difficultyChoices;
  }
  /** Why the run cannot start yet, or null. */
  get blocker(): string | null {
    if (!this.#dataset) return 'Choose a dataset.';
    if (this.#subset.error) return this.#subset.error;
    if (!this.#subset.subset || this.#subset.subset.indices.length === 0)
      return 'The subset is empty: loosen the filters.';
    if (!this.#predictions) return 'Choose a predictions file.';
    if (this.#metrics.length === 0) return 'Choose at least one metric.';
    if (!(this.#timeoutS > 0)) return 'The timeout must be more than 0 seconds.';
    if (!this.#name.trim()) return 'Give the run a name.';
    return null;
  }

  setDataset(ds: DatasetRecord | null): void {
    if (ds?.id === this.#dataset?.id) return;
    this.#dataset = ds;
    this.#dbIds = [];
    this.#difficulties = [];
    this.#idsText = '';
    this.#autoName();
    void this.#recheck();
  }
  toggleDb(id: string, on: boolean): void {
    this.#dbIds = on ? [...new Set([...this.#dbIds, id])] : this.#dbIds.filter((d) => d !== id);
  }
  /** Only the databases that are stored (questions without a database score nothing). */
  onlyStoredDbs(): void {
    this.#dbIds = this.#dbChoices.filter((c) => c.stored).map((c) => c.id);
  }
  clearDbs(): void {
    this.#dbIds = [];
  }
  toggleDifficulty(d: Difficulty, on: boolean): void {
    this.#difficulties = on ? [...new Set([...this.#difficulties, d])] : this.#difficulties.filter((x) => x !== d);
  }
  setIdsText(t: string): void {
    this.#idsText = t;
  }
  setSample(on: boolean, n = this.#sampleN, seed = this.#seed): void {
    this.#sampleOn = on;
    if (Number.isFinite(n)) this.#sampleN = n;
    if (Number.isFinite(seed)) this.#seed = seed;
  }
  async setPredictionsFile(file: File | null): Promise<void> {
    this.#predictionsError = null;
    if (!file) {
      this.#predictions = null;
      return;
    }
    try {
      // Reading is asynchronous; parsing and pairing happen in the import worker at start.
      const input: PredictionsInput = /\.(parquet|pq|eval)$/i.test(file.name)
        ? { name: file.name, blob: file }
        : { name: file.name, text: await readUtf8File(file) };
      this.#predictions = { name: file.name, input, bytes: file.size };
      this.#autoName();
      void this.#recheck();
    } catch (err) {
      this.#predictions = null;
      this.#predictionsError = isWorkbenchError(err)
        ? err.message
        : `${file.name} could not be read: ${errorMessage(err)}`;
    }
  }
  setName(name: string): void {
    this.#name = name;
    this.#nameTouched = name.trim() !== '';
  }
  setTimeoutS(s: number): void {
    if (Number.isFinite(s)) this.#timeoutS = Math.min(APP_MAX_TIMEOUT_S, s);
  }
  setReadOnly(on: boolean): void {
    this.#readOnly = on;
  }
  setVerdictCache(on: boolean): void {
    this.#verdictCache = on;
  }
  toggleMetric(m: MetricName, on: boolean): void {
    const next = on ? [...new Set([...this.#metrics, m])] : this.#metrics.filter((x) => x !== m);
    this.#metrics = METRICS.filter((x) => next.includes(x));
  }
  setFence(f: RunConfig['fence']): void {
    this.#fence = f;
    void this.#recheck();
  }

  /** Pairs the current file with the current dataset in the import worker; a newer choice wins. */
  async #recheck(): Promise<void> {
    const seq = ++this.#checkSeq;
    this.#check = null;
    const ds = this.#dataset;
    const p = this.#predictions;
    if (!this.#checker || !ds || !p) return;
    this.#checking = true;
    try {
      const check = await this.#checker({ datasetId: ds.id, predictions: p.input, fence: this.#fence });
      if (seq === this.#checkSeq) this.#check = check;
    } catch (err) {
      if (seq === this.#checkSeq) this.#predictionsError = isWorkbenchError(err) ? err.message : errorMessage(err);
    } finally {
      if (seq === this.#checkSeq) this.#checking = false;
    }
  }

  #autoName(): void {
    if (this.#nameTouched) return;
    const pred = this.#predictions?.name.replace(/\.(json|jsonl|sql|parquet|eval)$/i, '');
    this.#name = [pred, this.#dataset?.name].filter(Boolean).join(' on ');
  }

  toRequest(): RunRequest | null {
    const ds = this.#dataset;
    const subset = this.#subset.subset;
    if (this.blocker || !ds || !subset || !this.#predictions) return null;
    return {
      name: this.#name.trim(),
      datasetId: ds.id,
      subset: { description: subset.description, indices: subset.indices },
      predictions: this.#predictions.input,
      config: {
        ...DEFAULT_RUN_CONFIG,
        metrics: [...this.#metrics],
        timeoutMs: Math.round(this.#timeoutS * 1000),
        readOnly: this.#readOnly,
        fence: this.#fence,
        verdictCache: this.#verdictCache,
        // Metric ts: the suite's seed and size are part of the run (docs/test-suite.md).
        ...(this.#metrics.includes('ts') ? { suite: { ...DEFAULT_SUITE_SPEC } } : {}),
      },
    };
  }
}
