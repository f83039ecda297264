/**
 * Blind labelling of an open rubric run: a queue of (response, criterion) items, or of whole
 * responses, shown one at a time without the judge's verdict; each label stored at once in
 * IndexedDB with its labeller and time, and the labeller's place in the queue too, so a
 * reload resumes there. Labels are exported and imported as JSON Lines (core/rubric/labels.ts)
 * and compared with the judge and the aggregations (core/rubric/agreement.ts).
 */
import type { LabelMode } from '../../app/label-records.ts';
import type { LabelRepository } from '../../app/rubric-ports.ts';
import type { RarRunHeader, StoredRarSample } from '../../app/rar-records.ts';
import { errorMessage } from '../../core/errors.ts';
import { agreementReport, type AgreementReport, type JudgedResponse } from '../../core/rubric/agreement.ts';
import type { AggregationValue } from '../../core/rubric/aggregations.ts';
import {
  checkLabeller,
  labelKey,
  labelsToJsonl,
  parseLabelsJsonl,
  responseHash,
  type HumanLabel,
} from '../../core/rubric/labels.ts';
import type { RubricItem } from '../../core/rubric/model.ts';
import type { RarRow } from '../../core/rubric/rar-dataset.ts';

const LABELLER_KEY = 'wb.labeller';
const MODE_KEY = 'wb.label.mode';
const THRESHOLD_KEY = 'wb.label.threshold';

interface LabelSource {
  run: RarRunHeader;
  samples: readonly StoredRarSample[];
  rows: readonly RarRow[];
  /** The registry's aggregations by key `index.sample`. */
  aggregations: ReadonlyMap<string, readonly AggregationValue[]>;
}

interface QueueItem {
  sample: StoredRarSample;
  row: RarRow;
  /** Null: the whole response. */
  item: RubricItem | null;
  /** Hash of the completion (how labels name the response). */
  response: string;
}

function readStored(key: string): string {
  try {
    return localStorage.getItem(key) ?? '';
  } catch {
    return '';
  }
}
function writeStored(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    // storage disabled: the value lasts for this page only
  }
}

export class LabelState {
  #s = $state({
    labeller: readStored(LABELLER_KEY),
    mode: (readStored(MODE_KEY) === 'responses' ? 'responses' : 'criteria') as LabelMode,
    threshold: Number.isFinite(Number.parseFloat(readStored(THRESHOLD_KEY)))
      ? Number.parseFloat(readStored(THRESHOLD_KEY))
      : 0.5,
    position: 0,
    /** Writes of the place (`position`) to the store not finished yet. */
    placeWrites: 0,
    loadedFor: null as string | null,
    message: null as string | null,
    error: null as string | null,
  });
  #labels = $state.raw<HumanLabel[]>([]);

  constructor(
    private readonly source: () => LabelSource | null,
    private readonly repo: () => Promise<LabelRepository>,
  ) {}

  get message(): string | null {
    return this.#s.message;
  }
  get error(): string | null {
    return this.#s.error;
  }
  get labeller(): string {
    return this.#s.labeller;
  }
  get mode(): LabelMode {
    return this.#s.mode;
  }
  get threshold(): number {
    return this.#s.threshold;
  }
  get labels(): HumanLabel[] {
    return this.#labels;
  }
  get position(): number {
    return this.#s.position;
  }
  /** Whether the place shown is the one stored (a reload returns to it). */
  get placeStored(): boolean {
    return this.#s.placeWrites === 0;
  }
  /** Labels are read for the open run (false while they load). */
  get ready(): boolean {
    const s = this.source();
    return !!s && this.#s.loadedFor === this.#loadKey(s.run.id);
  }

  readonly #hashes = $derived.by(() => {
    const s = this.source();
    return new Map((s?.samples ?? []).map((x) => [`${x.index}.${x.sample}`, responseHash(x.completion)]));
  });

  /** The queue of the open run: samples by question then sample; per sample its judge criteria, or the sample itself. */
  readonly queue = $derived.by((): QueueItem[] => {
    const s = this.source();
    if (!s) return [];
    const rows = new Map(s.rows.map((r) => [r.index, r]));
    const out: QueueItem[] = [];
    const sorted = [...s.samples].sort((a, b) => a.index - b.index || a.sample - b.sample);
    for (const sample of sorted) {
      const row = rows.get(sample.index);
      if (!row) continue;
      const response = this.#hashes.get(`${sample.index}.${sample.sample}`)!;
      if (this.#s.mode === 'responses') out.push({ sample, row, item: null, response });
      else
        for (const item of row.rubric.items) if (item.check.kind === 'judge') out.push({ sample, row, item, response });
    }
    return out;
  });

  readonly #mine = $derived.by(() => {
    const m = new Map<string, HumanLabel>();
    for (const l of this.#labels) if (l.labeller === this.#s.labeller) m.set(labelKey(l), l);
    return m;
  });

  #keyOf(q: QueueItem): string {
    const s = this.source()!;
    return labelKey({
      labeller: this.#s.labeller,
      dataset: s.run.dataset.file.sha256,
      question: q.row.id,
      response: q.response,
      criterion: q.item?.id ?? null,
    });
  }

  get current(): QueueItem | null {
    return this.queue[this.#s.position] ?? null;
  }
  /** The labeller's own label of a queue item, if any. */
  labelOf(q: QueueItem): HumanLabel | null {
    return this.#mine.get(this.#keyOf(q)) ?? null;
  }
  /** How many items of the queue the labeller has labelled. */
  readonly doneCount = $derived.by(() => this.queue.filter((q) => this.#mine.has(this.#keyOf(q))).length);

  readonly report = $derived.by((): AgreementReport | null => {
    const s = this.source();
    if (!s) return null;
    const rows = new Map(s.rows.map((r) => [r.index, r]));
    const responses: JudgedResponse[] = [];
    for (const x of s.samples) {
      const row = rows.get(x.index);
      if (!row) continue;
      responses.push({
        dataset: s.run.dataset.file.sha256,
        question: x.rowId,
        response: this.#hashes.get(`${x.index}.${x.sample}`)!,
        index: x.index,
        sample: x.sample,
        items: row.rubric.items,
        criteria: x.scores.criteria,
        aggregations: s.aggregations.get(`${x.index}.${x.sample}`) ?? [],
      });
    }
    return agreementReport(responses, this.#labels, this.#s.threshold);
  });

  #loadKey(runId: string): string {
    return JSON.stringify([runId, this.#s.labeller, this.#s.mode]);
  }

  /** Reads the dataset's labels and the labeller's place in the open run's queue. */
  async load(): Promise<void> {
    const s = this.source();
    if (!s) return;
    const key = this.#loadKey(s.run.id);
    try {
      const repo = await this.repo();
      const [labels, position] = await Promise.all([
        repo.list(s.run.dataset.file.sha256),
        this.#s.labeller ? repo.position(this.#s.labeller, s.run.id, this.#s.mode) : Promise.resolve(0),
      ]);
      this.#labels = labels;
      this.#s.position = position;
      this.#s.loadedFor = key;
    } catch (err) {
      this.#s.error = `Stored labels could not be read: ${errorMessage(err)}`;
    }
  }

  setLabeller(name: string): boolean {
    this.#s.error = null;
    try {
      this.#s.labeller = checkLabeller(name);
      writeStored(LABELLER_KEY, this.#s.labeller);
      void this.load();
      return true;
    } catch (err) {
      this.#s.error = errorMessage(err);
      return false;
    }
  }

  changeLabeller(): void {
    this.#s.labeller = '';
  }

  setMode(mode: LabelMode): void {
    this.#s.mode = mode;
    writeStored(MODE_KEY, mode);
    void this.load();
  }

  setThreshold(t: number): void {
    if (!Number.isFinite(t) || t < 0 || t > 1) {
      this.#s.error = `The pass threshold must be a number from 0 to 1 (got ${t}).`;
      return;
    }
    this.#s.error = null;
    this.#s.threshold = t;
    writeStored(THRESHOLD_KEY, String(t));
  }

  async #go(position: number): Promise<void> {
    const s = this.source();
    if (!s || !this.#s.labeller) return;
    this.#s.position = Math.max(0, Math.min(position, this.queue.length));
    this.#s.placeWrites++;
    try {
      await (await this.repo()).setPosition(this.#s.labeller, s.run.id, this.#s.mode, this.#s.position);
    } catch (err) {
      this.#s.error = `Your place could not be stored: ${errorMessage(err)}`;
    } finally {
      this.#s.placeWrites--;
    }
  }

  /** Labels the item shown (met / pass, or not) and moves on. */
  async label(value: boolean): Promise<void> {
    const s = this.source();
    const q = this.current;
    if (!s || !q || !this.#s.labeller) return;
    const label: HumanLabel = {
      labeller: this.#s.labeller,
      dataset: s.run.dataset.file.sha256,
      question: q.row.id,
      sample: q.sample.sample,
      response: q.response,
      criterion: q.item?.id ?? null,
      value,
      at: new Date().toISOString(),
    };
    try {
      await (await this.repo()).put(label);
    } catch (err) {
      this.#s.error = `The label was not stored: ${errorMessage(err)}`;
      return;
    }
    const k = labelKey(label);
    this.#labels = [...this.#labels.filter((l) => labelKey(l) !== k), label];
    await this.#go(this.#s.position + 1);
  }

  skip(): Promise<void> {
    return this.#go(this.#s.position + 1);
  }
  move(delta: number): Promise<void> {
    return this.#go(this.#s.position + delta);
  }

  /** Every stored label of the open run's dataset, every labeller's. */
  exportJsonl(): string {
    return labelsToJsonl(this.#labels);
  }

  async importFile(file: File): Promise<void> {
    this.#s.error = null;
    this.#s.message = null;
    try {
      const incoming = parseLabelsJsonl(await file.text(), file.name);
      const m = await (await this.repo()).merge(incoming);
      const who = [...new Set(incoming.map((l) => l.labeller))].sort().join(', ');
      this.#s.message = `Imported ${incoming.length} labels of ${who} from ${file.name}: ${m.added} added, ${m.replaced} replaced by a later label, ${m.ignored} kept as stored (the stored label is as late or later).`;
      await this.load();
    } catch (err) {
      this.#s.error = `${errorMessage(err)}. Nothing was imported.`;
    }
  }
}
