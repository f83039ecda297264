/**
 * Datasets screen state: the stored datasets, the import in progress (progress, cancel, its
 * error), dataset cards loaded on demand, gold self-tests and deletion.
 */
import { errorMessage, isCancellation } from '../../core/errors.ts';
import { formatDate, plural } from '../shell/format.ts';
import { sameDatasetFiles } from '../../app/dataset-identity.ts';
import type { EvalEvent } from '../../core/eval/executor.ts';
import type {
  DatasetCard,
  DatasetRecord,
  GoldSelfTestResult,
  ImportProgress,
  ImportSource,
  WorkbenchStore,
} from '../../app/store-ports.ts';

interface SelfTestState {
  running: boolean;
  done: number;
  total: number;
  result: GoldSelfTestResult | null;
  error: string | null;
}

/** The datasets screen's own fields (the stored list and cards are `$state.raw`, apart). */
interface DatasetsFields {
  /** The stored list was read once (or failed: `listError`). */
  loaded: boolean;
  listError: string | null;
  importing: boolean;
  importError: string | null;
  importNote: string | null;
}

export class DatasetsState {
  readonly #store: WorkbenchStore;
  readonly #onChange: () => void;
  #s = $state<DatasetsFields>({
    loaded: false,
    listError: null,
    importing: false,
    importError: null,
    importNote: null,
  });
  #list = $state.raw<DatasetRecord[]>([]);
  #progress = $state.raw<ImportProgress | null>(null);
  #cards = $state.raw<Record<string, DatasetCard>>({});
  #cardErrors = $state.raw<Record<string, string>>({});
  #selfTests = $state.raw<Record<string, SelfTestState>>({});
  #importAbort: AbortController | null = null;
  #selfTestAborts = new Map<string, AbortController>();

  /** `onChange` runs after anything that changes what is stored (storage usage, runs list). */
  constructor(store: WorkbenchStore, onChange: () => void) {
    this.#store = store;
    this.#onChange = onChange;
  }

  /** What the screen shows of the list and the import, read-only: the methods below change it. */
  get state(): Readonly<DatasetsFields> {
    return this.#s;
  }
  get list(): readonly DatasetRecord[] {
    return this.#list;
  }
  get progress(): ImportProgress | null {
    return this.#progress;
  }
  card(id: string): DatasetCard | null {
    return this.#cards[id] ?? null;
  }
  cardError(id: string): string | null {
    return this.#cardErrors[id] ?? null;
  }
  selfTest(id: string): SelfTestState | null {
    return this.#selfTests[id] ?? null;
  }
  byId(id: string): DatasetRecord | null {
    return this.#list.find((d) => d.id === id) ?? null;
  }

  async refresh(): Promise<void> {
    try {
      this.#list = await this.#store.datasets.list();
      this.#s.listError = null;
    } catch (err) {
      this.#s.listError = `The stored datasets could not be read: ${errorMessage(err)}`;
    } finally {
      this.#s.loaded = true;
    }
  }

  /** Imports a dataset; resolves with it, or null when it failed or was cancelled (see importError). */
  async import(source: ImportSource): Promise<DatasetRecord | null> {
    if (this.#s.importing) return null;
    const abort = new AbortController();
    this.#importAbort = abort;
    this.#s.importing = true;
    this.#s.importError = null;
    this.#s.importNote = null;
    this.#progress = { phase: 'reading', file: '', doneBytes: 0, totalBytes: 0 };
    try {
      const ds = await this.#store.datasets.import(source, {
        signal: abort.signal,
        onProgress: (p) => (this.#progress = p),
      });
      const before = this.#list;
      const twin = before.find((d) => d.id !== ds.id && sameDatasetFiles(d, ds));
      this.#s.importNote = before.some((d) => d.id === ds.id)
        ? `"${ds.name}" is already stored with these same files (imported ${formatDate(ds.createdAt)}): nothing new was stored.`
        : `Imported "${ds.name}": ${plural(ds.questions.length, 'question')}, ${plural(Object.keys(ds.databases).length, 'database')}.` +
          (twin ? ` It has the same files as "${twin.name}"; delete one of them if you need only one.` : '');
      await this.refresh();
      return ds;
    } catch (err) {
      this.#s.importError =
        isCancellation(err) || abort.signal.aborted
          ? 'Import cancelled: nothing of it was stored, and everything stored before is unchanged.'
          : `Import failed: ${errorMessage(err)}`;
      return null;
    } finally {
      this.#s.importing = false;
      this.#progress = null;
      this.#importAbort = null;
      this.#onChange();
    }
  }

  cancelImport(): void {
    this.#importAbort?.abort();
  }

  clearImportMessages(): void {
    this.#s.importError = null;
    this.#s.importNote = null;
  }

  async loadCard(id: string): Promise<void> {
    try {
      const card = await this.#store.datasets.card(id);
      this.#cards = { ...this.#cards, [id]: card };
    } catch (err) {
      this.#cardErrors = { ...this.#cardErrors, [id]: errorMessage(err) };
    }
  }

  #setSelfTest(id: string, patch: Partial<SelfTestState>): void {
    const prev = this.#selfTests[id] ?? { running: false, done: 0, total: 0, result: null, error: null };
    this.#selfTests = { ...this.#selfTests, [id]: { ...prev, ...patch } };
  }

  async runSelfTest(id: string): Promise<void> {
    if (this.#selfTests[id]?.running) return;
    const abort = new AbortController();
    this.#selfTestAborts.set(id, abort);
    this.#setSelfTest(id, {
      running: true,
      done: 0,
      total: this.byId(id)?.gold.length ?? 0,
      result: null,
      error: null,
    });
    try {
      const result = await this.#store.service.goldSelfTest(id, {
        signal: abort.signal,
        onEvent: (e: EvalEvent) => {
          if (e.type === 'item') this.#setSelfTest(id, { done: e.done, total: e.total });
        },
      });
      this.#setSelfTest(id, { running: false, result });
    } catch (err) {
      this.#setSelfTest(id, {
        running: false,
        error: isCancellation(err) ? 'Self-test cancelled.' : errorMessage(err),
      });
    } finally {
      this.#selfTestAborts.delete(id);
      this.#onChange();
    }
  }

  cancelSelfTest(id: string): void {
    this.#selfTestAborts.get(id)?.abort();
  }

  async remove(id: string): Promise<string | null> {
    try {
      await this.#store.datasets.delete(id);
      const { [id]: _card, ...cards } = this.#cards;
      this.#cards = cards;
      await this.refresh();
      return null;
    } catch (err) {
      return `The dataset could not be deleted: ${errorMessage(err)}`;
    } finally {
      this.#onChange();
    }
  }
}
