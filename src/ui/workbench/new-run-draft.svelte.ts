/**
 * The new-run form: dataset, subset, predictions file and configuration, checked as the user
 * types, turned into a `RunRequest`. The subset is chosen by the pure core (`selectSubset`).
 */
import { errorMessage, isWorkbenchError } from '../../core/errors.ts';
import type { RunConfig } from '../../core/run/types.ts';
import { parseIdList, selectSubset, type Subset } from '../../core/views/subset.ts';
import { ALL_DIFFICULTIES, type Difficulty } from '../../core/types.ts';
import type { DatasetRecord, ReplayCheck, RunRequest, RunService } from '../../app/store-ports.ts';
import type { PredictionsInput } from '../../app/records.ts';
import type { PairingFinding } from '../../core/formats/pairing.ts';
import { readUtf8File } from '../shell/utf8-file.ts';
import { RunConfigDraft } from './run-config-draft.svelte.ts';
import type { KeyValueStore } from '../shell/key-value.ts';

interface PredictionsFile {
  name: string;
  /** Text formats are read here; a Parquet file or an Inspect .eval log is kept as the File and read in the import worker. */
  input: PredictionsInput;
  bytes: number;
}

/** Pairs the chosen file with the chosen dataset before the run (the run service's checkReplay). */
type ReplayChecker = RunService['checkReplay'];

/** The last dataset chosen in the form, kept across reloads. */
export const LAST_DATASET_KEY = 'rlvr-workbench:new-run:dataset';

/** The new-run form's own fields (the chosen dataset, filters, file and its check are `$state.raw`, apart; the configuration is `config`). */
interface NewRunFields {
  /** The chosen file is being paired with the chosen dataset (checkReplay). */
  checking: boolean;
  /** Question ids typed to keep (comma or space separated); empty keeps all. */
  idsText: string;
  /** Draw a random sample of `sampleN` questions with `seed`. */
  sampleOn: boolean;
  sampleN: number;
  seed: number;
  /** Why the chosen predictions file could not be read or paired. */
  predictionsError: string | null;
  /** The run's name: from the file and dataset until the user types one. */
  name: string;
}

export class NewRunDraft extends RunConfigDraft {
  readonly #checker: ReplayChecker | null;
  readonly #memory: KeyValueStore | null;
  #s = $state<NewRunFields>({
    checking: false,
    idsText: '',
    sampleOn: false,
    sampleN: 100,
    seed: 1,
    predictionsError: null,
    name: '',
  });
  #check = $state.raw<ReplayCheck | null>(null);
  #checkSeq = 0;
  #dataset = $state.raw<DatasetRecord | null>(null);
  #dbIds = $state.raw<string[]>([]);
  #difficulties = $state.raw<Difficulty[]>([]);
  #predictions = $state.raw<PredictionsFile | null>(null);
  #nameTouched = false;

  constructor(checker: ReplayChecker | null = null, memory: KeyValueStore | null = globalThis.localStorage ?? null) {
    super();
    this.#checker = checker;
    this.#memory = memory;
  }

  /** Id of the dataset last chosen in the form (kept across reloads), or null. */
  get rememberedDatasetId(): string | null {
    try {
      return this.#memory?.getItem(LAST_DATASET_KEY) ?? null;
    } catch {
      return null;
    }
  }
  /** After a run started: the name typed for it is not the next run's; the next one is named from its file. */
  started(): void {
    this.#nameTouched = false;
    this.#s.name = '';
    this.#autoName();
  }

  #subset = $derived.by((): { subset: Subset | null; error: string | null } => {
    const ds = this.#dataset;
    if (!ds) return { subset: null, error: null };
    try {
      const questionIds = parseIdList(this.#s.idsText);
      const sample = this.#s.sampleOn ? { n: this.#s.sampleN, seed: this.#s.seed } : null;
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
    return ALL_DIFFICULTIES.filter((d) => seen.has(d));
  });

  /** What the form shows of its own fields, read-only: the methods below change it. */
  get state(): Readonly<NewRunFields> {
    return this.#s;
  }
  get dataset(): DatasetRecord | null {
    return this.#dataset;
  }
  get dbIds(): readonly string[] {
    return this.#dbIds;
  }
  get difficulties(): readonly Difficulty[] {
    return this.#difficulties;
  }
  get predictions(): PredictionsFile | null {
    return this.#predictions;
  }
  /** What pairing the file with the dataset finds (a run refuses a file with findings); empty until checked. */
  get findings(): readonly PairingFinding[] {
    return this.#check?.findings ?? [];
  }
  /** The file as paired with the dataset (samples, questions), once checked. */
  get checked(): ReplayCheck | null {
    return this.#check;
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
    if (this.configBlocker) return this.configBlocker;
    if (!this.#s.name.trim()) return 'Give the run a name.';
    return null;
  }

  /** The user's choice: kept for the next visit (setDataset alone is the form's default). */
  chooseDataset(ds: DatasetRecord | null): void {
    try {
      if (ds) this.#memory?.setItem(LAST_DATASET_KEY, ds.id);
    } catch {
      // storage refused (private mode, quota): the choice holds for this visit only
    }
    this.setDataset(ds);
  }
  setDataset(ds: DatasetRecord | null): void {
    if (ds?.id === this.#dataset?.id) return;
    this.#dataset = ds;
    this.#dbIds = [];
    this.#difficulties = [];
    this.#s.idsText = '';
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
    this.#s.idsText = t;
  }
  setSample(on: boolean, n = this.#s.sampleN, seed = this.#s.seed): void {
    this.#s.sampleOn = on;
    if (Number.isFinite(n)) this.#s.sampleN = n;
    if (Number.isFinite(seed)) this.#s.seed = seed;
  }
  async setPredictionsFile(file: File | null): Promise<void> {
    this.#s.predictionsError = null;
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
      this.#s.predictionsError = isWorkbenchError(err)
        ? err.message
        : `${file.name} could not be read: ${errorMessage(err)}`;
    }
  }
  setName(name: string): void {
    this.#s.name = name;
    this.#nameTouched = name.trim() !== '';
  }
  override setFence(f: RunConfig['fence']): void {
    super.setFence(f);
    void this.#recheck();
  }

  /** Pairs the current file with the current dataset in the import worker; a newer choice wins. */
  async #recheck(): Promise<void> {
    const seq = ++this.#checkSeq;
    this.#check = null;
    const ds = this.#dataset;
    const p = this.#predictions;
    if (!this.#checker || !ds || !p) return;
    this.#s.checking = true;
    try {
      const check = await this.#checker({ datasetId: ds.id, predictions: p.input, fence: this.config.fence });
      if (seq === this.#checkSeq) this.#check = check;
    } catch (err) {
      if (seq === this.#checkSeq) this.#s.predictionsError = isWorkbenchError(err) ? err.message : errorMessage(err);
    } finally {
      if (seq === this.#checkSeq) this.#s.checking = false;
    }
  }

  #autoName(): void {
    if (this.#nameTouched) return;
    const pred = this.#predictions?.name.replace(/\.(json|jsonl|sql|parquet|eval)$/i, '');
    this.#s.name = [pred, this.#dataset?.name].filter(Boolean).join(' on ');
  }

  toRequest(): RunRequest | null {
    const ds = this.#dataset;
    const subset = this.#subset.subset;
    if (this.blocker || !ds || !subset || !this.#predictions) return null;
    return {
      name: this.#s.name.trim(),
      datasetId: ds.id,
      subset: { description: subset.description, indices: subset.indices },
      predictions: this.#predictions.input,
      config: this.toConfig(),
    };
  }
}
