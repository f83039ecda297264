/**
 * The probe screen's state: which dataset, the probe in progress (both passes), its report.
 * Lives in the workbench context, so a probe keeps going (and its report stays) while the user
 * looks at another screen; each dataset's last report is kept in the browser's local storage
 * (without its per-question verdicts, which the screen does not show), so it survives a reload.
 */
import { errorMessage, isCancellation } from '../../core/errors.ts';
import type { ProbeReport, Semantics } from '../../core/probe/run-probe.ts';
import type { DatasetRecord } from '../../app/store-ports.ts';
import type { ProbeService } from '../../app/probe-service.ts';
import type { KeyValueStore } from '../shell/key-value.ts';

/** A report as kept: what the screen shows, for which dataset, and when it finished. */
interface SavedProbe {
  datasetId: string;
  datasetName: string;
  finishedAt: string;
  report: Omit<ProbeReport, 'verdicts'> & { verdicts?: ProbeReport['verdicts'] };
}

export type { KeyValueStore };

const KEY = 'rlvr-workbench:probe:';
/** The two passes, in the order runProbe runs them. */
const PASSES: readonly Semantics[] = ['official', 'readOnly'];

/** ProbeState's own fields (read through `state`). */
interface ProbeFields {
  running: boolean;
  /** Id of the dataset being probed. */
  runningFor: string | null;
  pass: Semantics | null;
  done: number;
  total: number;
  error: string | null;
}

export class ProbeState {
  readonly #service: ProbeService;
  readonly #saved: KeyValueStore | null;
  #s = $state<ProbeFields>({
    running: false,
    runningFor: null,
    pass: null,
    done: 0,
    total: 0,
    error: null,
  });
  #last = $state.raw<SavedProbe | null>(null);
  #abort: AbortController | null = null;

  constructor(service: ProbeService, saved: KeyValueStore | null = globalThis.localStorage ?? null) {
    this.#service = service;
    this.#saved = saved;
  }

  /** The fields the screen shows, read-only: the methods below change them. */
  get state(): Readonly<ProbeFields> {
    return this.#s;
  }
  /** 1 or 2: the pass under way. */
  get passNumber(): number {
    return this.#s.pass ? PASSES.indexOf(this.#s.pass) + 1 : 0;
  }
  /** Over both passes: the count never goes back when the second pass starts. */
  get doneInAll(): number {
    return this.passNumber <= 1 ? this.#s.done : this.#s.total + this.#s.done;
  }
  get totalInAll(): number {
    return this.#s.total * PASSES.length;
  }

  /** The last report of `datasetId`: this session's, else the one kept from an earlier visit. */
  reportOf(datasetId: string | null): SavedProbe | null {
    if (!datasetId) return null;
    if (this.#last?.datasetId === datasetId) return this.#last;
    try {
      const text = this.#saved?.getItem(KEY + datasetId);
      return text ? (JSON.parse(text) as SavedProbe) : null;
    } catch {
      return null;
    }
  }

  async run(dataset: DatasetRecord, timeoutS: number): Promise<void> {
    if (this.#s.running) return;
    this.#s.running = true;
    this.#s.runningFor = dataset.id;
    this.#s.error = null;
    this.#s.done = 0;
    this.#s.total = 0;
    const abort = new AbortController();
    this.#abort = abort;
    try {
      const report = await this.#service.run(dataset, {
        timeoutMs: timeoutS * 1000,
        signal: abort.signal,
        onEvent: (e) => {
          if (e.type !== 'item') return;
          this.#s.pass = e.semantics;
          this.#s.done = e.done;
          this.#s.total = e.total;
        },
      });
      this.#last = { datasetId: dataset.id, datasetName: dataset.name, finishedAt: new Date().toISOString(), report };
      this.#keep(this.#last);
    } catch (err) {
      this.#s.error = isCancellation(err)
        ? 'The probe was cancelled.'
        : `The probe could not run: ${errorMessage(err)}`;
    } finally {
      this.#s.running = false;
      this.#s.runningFor = null;
      this.#s.pass = null;
      this.#abort = null;
    }
  }

  cancel(): void {
    this.#abort?.abort();
  }

  #keep(p: SavedProbe): void {
    const { verdicts: _verdicts, ...shown } = p.report;
    try {
      this.#saved?.setItem(KEY + p.datasetId, JSON.stringify({ ...p, report: shown }));
    } catch {
      // Local storage full or disabled: the report stays for this session only.
    }
  }
}
