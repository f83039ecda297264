/// <reference types="vite-plugin-pwa/vanillajs" />
/**
 * The service worker's life as the user sees it (see pwa.config.ts): it is registered here
 * (not by an inline script, which the CSP forbids), says once that the app works offline,
 * and offers a new version instead of forcing it. A new version is never activated while a
 * run is being evaluated in any tab (Web Locks `run:*`): its workers could not be respawned
 * from an old precache that the new version deletes. When another tab activates it, this tab
 * is told to reload instead of being reloaded under the user's feet.
 */
import { registerSW } from 'virtual:pwa-register';
import { errorMessage } from '../core/errors.ts';

type UpdatePhase = 'none' | 'available' | 'waiting-for-run' | 'updating' | 'updated-elsewhere';

/** AppUpdate's own fields (read through `state`). */
interface AppUpdateFields {
  offlineReady: boolean;
  phase: UpdatePhase;
  error: string | null;
}

export class AppUpdate {
  #s = $state<AppUpdateFields>({
    offlineReady: false,
    phase: 'none',
    error: null,
  });
  #update: ((reload?: boolean) => Promise<void>) | null = null;
  readonly #activeRuns: () => Promise<string[]>;

  /** `activeRuns`: ids of runs being evaluated in any tab (the store's Web Locks). */
  constructor(activeRuns: () => Promise<string[]>) {
    this.#activeRuns = activeRuns;
  }

  /** The fields the screen shows, read-only: the methods below change them. */
  get state(): Readonly<AppUpdateFields> {
    return this.#s;
  }

  register(): void {
    if (!('serviceWorker' in navigator)) return;
    this.#update = registerSW({
      immediate: true,
      onOfflineReady: () => (this.#s.offlineReady = true),
      onNeedRefresh: () => (this.#s.phase = 'available'),
      // The new version took control: this tab asked for it (reload now), or another one did.
      onNeedReload: () => {
        if (this.#s.phase === 'updating') location.reload();
        else this.#s.phase = 'updated-elsewhere';
      },
      onRegisterError: (err: unknown) => (this.#s.error = `Offline use is not available: ${errorMessage(err)}`),
    });
  }

  /** Activates the waiting version and reloads, unless a run is being evaluated in some tab. */
  async apply(): Promise<void> {
    if ((await this.#activeRuns().catch(() => [])).length > 0) {
      this.#s.phase = 'waiting-for-run';
      return;
    }
    this.#s.phase = 'updating';
    await this.#update?.(true);
  }

  dismissOfflineNote(): void {
    this.#s.offlineReady = false;
  }
}
