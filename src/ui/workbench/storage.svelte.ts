/** The storage line: how much the origin uses of its quota, and whether the browser keeps it. */
import { errorMessage } from '../../core/errors.ts';
import type { StorageInfo, WorkbenchStore } from '../../adapters/store/workbench-store.ts';

/** The storage line's own fields (the usage read is `$state.raw`, apart). */
interface StorageFields {
  note: string | null;
}

export class StorageState {
  readonly #store: WorkbenchStore;
  #info = $state.raw<StorageInfo | null>(null);
  #s = $state<StorageFields>({
    note: null,
  });

  constructor(store: WorkbenchStore) {
    this.#store = store;
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
