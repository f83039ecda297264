/** The storage line: how much the origin uses of its quota, and whether the browser keeps it. */
import { errorMessage } from '../../core/errors.ts';
import type { StorageInfo, WorkbenchStore } from '../../adapters/store/workbench-store.ts';

export class StorageState {
  readonly #store: WorkbenchStore;
  #info = $state.raw<StorageInfo | null>(null);
  #note = $state<string | null>(null);

  constructor(store: WorkbenchStore) {
    this.#store = store;
  }

  get info(): StorageInfo | null {
    return this.#info;
  }
  get note(): string | null {
    return this.#note;
  }

  async refresh(): Promise<void> {
    try {
      this.#info = await this.#store.storage.estimate();
    } catch (err) {
      this.#note = `Storage usage is not available: ${errorMessage(err)}`;
    }
  }

  /** Asks the browser to keep the data under storage pressure (it may decide by itself, e.g. by engagement). */
  async keep(): Promise<void> {
    try {
      const granted = await this.#store.storage.requestPersistence();
      this.#note = granted
        ? 'The browser will keep this data until you delete it.'
        : 'The browser declined for now (it decides by itself, e.g. after more visits or a bookmark): data may be evicted if the disk runs low.';
    } catch (err) {
      this.#note = errorMessage(err);
    }
    await this.refresh();
  }
}
