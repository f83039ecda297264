/**
 * The one lifecycle of a screen state (docs/ui-state.md): built by the workbench when its route
 * opens and asks for it, one per route key (a run's id), the old one disposed (its computation
 * cancelled) when the key changes or, with `release`, when the route closes. A screen whose work
 * must go on while the user looks elsewhere (a generation, a rubric run, a probe) is never
 * released: one key for the page's life.
 */
export class KeyedState<S> {
  readonly #make: (key: string) => S;
  readonly #dispose: (state: S) => void;
  #key: string | null = null;
  #state: S | null = null;

  constructor(make: (key: string) => S, dispose: (state: S) => void = () => undefined) {
    this.#make = make;
    this.#dispose = dispose;
  }

  /** The state for `key`: the one built for it, or a new one (the previous key's is disposed). */
  get(key: string): S {
    if (this.#state === null || this.#key !== key) {
      if (this.#state !== null) this.#dispose(this.#state);
      this.#state = this.#make(key);
      this.#key = key;
    }
    return this.#state;
  }

  /** The state built last, if any, whatever the route shows now. */
  get current(): S | null {
    return this.#state;
  }

  /** Disposes `state` if it is the current one (its route closed); a newer one is kept. */
  release(state: S): void {
    if (this.#state === state) this.clear();
  }

  /** Disposes the state: the next `get` builds it anew (after what it shows changed). */
  clear(): void {
    if (this.#state !== null) this.#dispose(this.#state);
    this.#state = null;
    this.#key = null;
  }
}

/** The key of a screen that lives for the page's life. */
export const PAGE_LIFE = 'page';
