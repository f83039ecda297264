/**
 * The part of the Web Storage API a screen's state keeps small choices in (localStorage or
 * sessionStorage in the app; a Map-backed object in tests).
 */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}
