/**
 * One stored run as the dashboard and the item explorer show it: header, samples, summary,
 * the questions' texts (from its dataset, when still stored), the explorer's query and cursor,
 * and the result tables of the open item (re-run in the SQL worker pool on demand).
 */
import { errorMessage } from '../../core/errors.ts';
import type { ItemPreview } from '../../core/eval/executor.ts';
import { summarize, type Summary } from '../../core/eval/summary.ts';
import { DEFAULT_QUERY, ItemIndex, type ExplorerRow, type ItemQuery } from '../../core/run/item-query.ts';
import type { RunHeader, SampleRecord } from '../../core/run/types.ts';
import type { ItemResult, Question } from '../../core/types.ts';
import type { WorkbenchStore } from '../../adapters/store/workbench-store.ts';
import type { ItemKey } from './route.ts';
import type { PreviewService } from './services.ts';

export const PREVIEW_ROWS = 20;

export interface PreviewState {
  key: string;
  loading: boolean;
  preview: ItemPreview | null;
  /** The result of the re-run (it should agree with the stored one; a timeout may not). */
  result: ItemResult | null;
  error: string | null;
}

export const keyOf = (s: { index: number; sample: number }): string => `${s.index}.${s.sample}`;

export class RunView {
  readonly runId: string;
  readonly #store: WorkbenchStore;
  readonly #previews: PreviewService;
  #run = $state.raw<RunHeader | null>(null);
  #samples = $state.raw<SampleRecord[]>([]);
  #questions = $state.raw<readonly Question[] | null>(null);
  #loading = $state(true);
  #error = $state<string | null>(null);
  #query = $state.raw<ItemQuery>(DEFAULT_QUERY);
  #cursor = $state<string | null>(null);
  #preview = $state.raw<PreviewState | null>(null);

  #summary = $derived.by((): Summary | null => (this.#run && this.#samples.length > 0 ? summarize(this.#samples, this.#run.config.metrics) : null));
  #rows = $derived.by((): ExplorerRow[] => this.#samples.map((sample) => ({ sample, question: this.#questions?.[sample.index] ?? null })));
  #index = $derived(new ItemIndex(this.#rows));
  #visible = $derived(this.#index.query(this.#query));
  #byKey = $derived(new Map(this.#rows.map((r) => [keyOf(r.sample), r])));
  #dbIds = $derived([...new Set(this.#samples.map((s) => s.dbId))].sort());

  constructor(runId: string, store: WorkbenchStore, previews: PreviewService) {
    this.runId = runId;
    this.#store = store;
    this.#previews = previews;
  }

  get run(): RunHeader | null {
    return this.#run;
  }
  get samples(): readonly SampleRecord[] {
    return this.#samples;
  }
  get loading(): boolean {
    return this.#loading;
  }
  get error(): string | null {
    return this.#error;
  }
  get summary(): Summary | null {
    return this.#summary;
  }
  /** False when the run's dataset is no longer stored (an imported run file): no question texts. */
  get hasQuestions(): boolean {
    return this.#questions !== null;
  }
  get query(): ItemQuery {
    return this.#query;
  }
  get visible(): readonly ExplorerRow[] {
    return this.#visible;
  }
  get dbIds(): readonly string[] {
    return this.#dbIds;
  }
  get cursor(): string | null {
    return this.#cursor;
  }
  get cursorPosition(): number {
    return this.#cursor === null ? -1 : this.#visible.findIndex((r) => keyOf(r.sample) === this.#cursor);
  }
  row(key: ItemKey | null): ExplorerRow | null {
    return key ? (this.#byKey.get(keyOf(key)) ?? null) : null;
  }
  get preview(): PreviewState | null {
    return this.#preview;
  }

  /** Writes no state before its first await: it may be started while a derived value is computed. */
  async load(): Promise<void> {
    try {
      const run = await this.#store.getRun(this.runId);
      this.#loading = true;
      if (!run) {
        this.#error = 'This run is not in browser storage (it was deleted, or the link is from another browser).';
        return;
      }
      const [samples, dataset] = await Promise.all([this.#store.samples(this.runId), this.#store.getDataset(run.dataset.id)]);
      this.#run = run;
      this.#samples = samples;
      this.#questions = dataset ? dataset.questions : null;
      this.#error = null;
    } catch (err) {
      this.#error = `The run could not be read: ${errorMessage(err)}`;
    } finally {
      this.#loading = false;
    }
  }

  setQuery(patch: Partial<ItemQuery>): void {
    this.#query = { ...this.#query, ...patch };
  }
  resetQuery(): void {
    this.#query = DEFAULT_QUERY;
  }

  setCursor(key: string | null): void {
    this.#cursor = key;
  }
  /** Moves the cursor by `step` rows of the visible list (clamped); returns the new position. */
  moveCursor(step: number): number {
    const n = this.#visible.length;
    if (n === 0) return -1;
    const at = this.cursorPosition;
    // Without a cursor, the first step down lands on the first row and the first step up on the last.
    const from = at >= 0 ? at : step > 0 ? -1 : n;
    const next = Math.max(0, Math.min(n - 1, from + step));
    this.#cursor = keyOf(this.#visible[next]!.sample);
    return next;
  }

  /** Re-runs the open item for its result tables (once per item). */
  async loadPreview(key: ItemKey): Promise<void> {
    const k = keyOf(key);
    if (this.#preview?.key === k) return;
    const row = this.#byKey.get(k);
    const run = this.#run;
    if (!row || !run) return;
    this.#preview = { key: k, loading: true, preview: null, result: null, error: null };
    try {
      const { preview, result } = await this.#previews.preview(run, row.sample, PREVIEW_ROWS);
      if (this.#preview?.key === k) this.#preview = { key: k, loading: false, preview, result, error: null };
    } catch (err) {
      if (this.#preview?.key === k) this.#preview = { key: k, loading: false, preview: null, result: null, error: errorMessage(err) };
    }
  }
}
