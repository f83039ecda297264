/** The storage line: how much the origin uses of its quota, and whether the browser keeps it. */
import { errorMessage } from '../../core/errors.ts';
import type { StorageInfo, WorkbenchStore } from '../../app/store-ports.ts';

/** The storage line's own fields (the usage read is `$state.raw`, apart). */
interface StorageFields {
  note: string | null;
}

/**
 * When the figure is read again after the stores are opened or changed (ms after it): the
 * browser's first estimates may come before it has counted what is stored (after a restart,
 * Chromium answered 16 MiB for 1.4 GiB of datasets), and an import's last writes are counted
 * a little after they end.
 */
export const SETTLE_DELAYS_MS: readonly number[] = [0, 1_000, 3_000, 10_000, 30_000];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class StorageState {
  readonly #store: WorkbenchStore;
  readonly #wait: (ms: number) => Promise<void>;
  #info = $state.raw<StorageInfo | null>(null);
  #s = $state<StorageFields>({
    note: null,
  });
  /** The settle() in progress (a later one replaces it). */
  #settling = 0;

  /** `wait`: how a delay of SETTLE_DELAYS_MS is waited (tests pass one that does not wait). */
  constructor(store: WorkbenchStore, wait: (ms: number) => Promise<void> = sleep) {
    this.#store = store;
    this.#wait = wait;
  }

  get info(): StorageInfo | null {
    return this.#info;
  }
  /** What the screen shows of these fields, read-only: the methods below change them. */
  get state(): Readonly<StorageFields> {
    return this.#s;
  }

  async refresh(): Promise<void> {
    try {
      this.#info = await this.#store.storage.estimate();
    } catch (err) {
      this.#s.note = `Storage usage is not available: ${errorMessage(err)}`;
    }
  }

  /**
   * Reads the figure now and again at SETTLE_DELAYS_MS, each reading replacing the one before:
   * called once the stores are open and after every change to what is stored, so the line
   * shows what the browser counts once it has counted everything. A later call replaces an
   * earlier one's remaining readings.
   */
  async settle(): Promise<void> {
    const mine = ++this.#settling;
    let waited = 0;
    for (const at of SETTLE_DELAYS_MS) {
      if (at > waited) await this.#wait(at - waited);
      waited = at;
      if (mine !== this.#settling) return;
      await this.refresh();
    }
  }

  /** Asks the browser to keep the data under storage pressure (it may decide by itself, e.g. by engagement). */
  async keep(): Promise<void> {
    try {
      const granted = await this.#store.storage.requestPersistence();
      this.#s.note = granted
        ? 'The browser will keep this data until you delete it.'
        : 'The browser declined for now (it decides by itself, e.g. after more visits or a bookmark): data may be evicted if the disk runs low.';
    } catch (err) {
      this.#s.note = errorMessage(err);
    }
    await this.refresh();
  }
}
