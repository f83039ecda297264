/**
 * What is stored with a run besides its samples (issue 23): the corrected-gold overlay and the
 * version check on the older SQLite. One instance per run id, shared by the dashboard, the item
 * view, the RL view and Compare, read from the store once and updated when either is attached
 * or measured.
 */
import { errorMessage } from '../../core/errors.ts';
import type { GoldOverlayRecord } from '../../core/run/overlay-record.ts';
import type { VersionCheckRecord } from '../../core/run/version-effects.ts';
import type { RunService } from '../../adapters/store/workbench-store.ts';

type ExtrasService = Pick<RunService, 'goldOverlay' | 'attachGoldOverlay' | 'removeGoldOverlay' | 'measureVersionEffects' | 'versionCheck'>;

export class RunExtras {
  readonly runId: string;
  readonly #service: ExtrasService;
  overlay = $state.raw<GoldOverlayRecord | null>(null);
  versionCheck = $state.raw<VersionCheckRecord | null>(null);
  loaded = $state(false);
  busy = $state<'overlay' | 'version' | null>(null);
  error = $state<string | null>(null);
  readonly ready: Promise<void>;

  constructor(service: ExtrasService, runId: string) {
    this.#service = service;
    this.runId = runId;
    this.ready = this.reload();
  }

  async reload(): Promise<void> {
    try {
      const [o, v] = await Promise.all([this.#service.goldOverlay?.(this.runId), this.#service.versionCheck?.(this.runId)]);
      this.overlay = o ?? null;
      this.versionCheck = v ?? null;
    } catch (err) {
      this.error = errorMessage(err);
    } finally {
      this.loaded = true;
    }
  }

  get canAttach(): boolean {
    return this.#service.attachGoldOverlay !== undefined;
  }

  get canMeasure(): boolean {
    return this.#service.measureVersionEffects !== undefined;
  }

  /** Scores and stores the overlay; the error names the file. */
  async attach(file: { name: string; text: string }): Promise<void> {
    if (!this.#service.attachGoldOverlay) return;
    this.busy = 'overlay';
    this.error = null;
    try {
      this.overlay = await this.#service.attachGoldOverlay(this.runId, file);
    } catch (err) {
      this.error = `${file.name}: ${errorMessage(err)}`;
    } finally {
      this.busy = null;
    }
  }

  async remove(): Promise<void> {
    await this.#service.removeGoldOverlay?.(this.runId);
    this.overlay = null;
  }

  async measure(): Promise<void> {
    if (!this.#service.measureVersionEffects) return;
    this.busy = 'version';
    this.error = null;
    try {
      this.versionCheck = await this.#service.measureVersionEffects(this.runId);
    } catch (err) {
      this.error = `SQLite 3.39.3: ${errorMessage(err)}`;
    } finally {
      this.busy = null;
    }
  }
}

const cache = new Map<string, RunExtras>();

/** The run's extras (one instance per run id and service). */
export function runExtras(service: ExtrasService, runId: string): RunExtras {
  let x = cache.get(runId);
  if (!x) {
    x = new RunExtras(service, runId);
    cache.set(runId, x);
  }
  return x;
}

/** Forget a run's extras (after a delete). */
export function forgetRunExtras(runId: string): void {
  cache.delete(runId);
}
