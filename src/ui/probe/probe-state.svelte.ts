/** The probe screen's state: which dataset, the probe in progress (both passes), its report. */
import { errorMessage, isCancellation } from '../../core/errors.ts';
import type { ProbeReport, Semantics } from '../../core/probe/run-probe.ts';
import type { DatasetRecord } from '../../adapters/store/workbench-store.ts';
import type { ProbeService } from './probe-service.ts';

export class ProbeState {
  readonly #service: ProbeService;
  #running = $state(false);
  #pass = $state<Semantics | null>(null);
  #done = $state(0);
  #total = $state(0);
  #report = $state.raw<ProbeReport | null>(null);
  #reportFor = $state<string | null>(null);
  #error = $state<string | null>(null);
  #abort: AbortController | null = null;

  constructor(service: ProbeService) {
    this.#service = service;
  }

  get running(): boolean {
    return this.#running;
  }
  get pass(): Semantics | null {
    return this.#pass;
  }
  get done(): number {
    return this.#done;
  }
  get total(): number {
    return this.#total;
  }
  get report(): ProbeReport | null {
    return this.#report;
  }
  /** Name of the dataset the report is about. */
  get reportFor(): string | null {
    return this.#reportFor;
  }
  get error(): string | null {
    return this.#error;
  }

  async run(dataset: DatasetRecord, timeoutS: number): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#error = null;
    this.#report = null;
    this.#done = 0;
    this.#total = 0;
    const abort = new AbortController();
    this.#abort = abort;
    try {
      this.#report = await this.#service.run(dataset, {
        timeoutMs: timeoutS * 1000,
        signal: abort.signal,
        onEvent: (e) => {
          if (e.type !== 'item') return;
          this.#pass = e.semantics;
          this.#done = e.done;
          this.#total = e.total;
        },
      });
      this.#reportFor = dataset.name;
    } catch (err) {
      this.#error = isCancellation(err) ? 'The probe was cancelled.' : `The probe could not run: ${errorMessage(err)}`;
    } finally {
      this.#running = false;
      this.#pass = null;
      this.#abort = null;
    }
  }

  cancel(): void {
    this.#abort?.abort();
  }
}
