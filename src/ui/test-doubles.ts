/**
 * Test doubles chosen by the page's address, for the browser tests only: a full disk after N
 * bytes of an import (`?test-quota-after-bytes=N`) or N samples of a run
 * (`?test-quota-after-samples=N`). The store then throws real QuotaExceededError DOMExceptions
 * at that point (see BrowserStoreOptions.testing). A page with a double says so on screen, so it
 * cannot pass unnoticed.
 */
import type { BrowserStoreOptions } from './browser-store.ts';

type Testing = NonNullable<BrowserStoreOptions['testing']>;

export function testDoublesFromUrl(search: string): Testing | undefined {
  const params = new URLSearchParams(search);
  const count = (name: string): number | undefined => {
    const v = params.get(name);
    return v !== null && /^\d+$/.test(v) ? Number(v) : undefined;
  };
  const testing: Testing = {};
  const bytes = count('test-quota-after-bytes');
  const samples = count('test-quota-after-samples');
  if (bytes !== undefined) testing.simulateQuotaAfterBytes = bytes;
  if (samples !== undefined) testing.simulateQuotaAfterSamples = samples;
  return Object.keys(testing).length > 0 ? testing : undefined;
}

/** A visible line naming the active doubles. */
export function showTestDoubles(testing: Testing): void {
  const note = document.createElement('p');
  note.setAttribute('role', 'note');
  note.dataset.testid = 'test-double';
  note.style.cssText = 'margin:0;padding:0.3rem 1rem;background:#8a4b00;color:#fff;font:0.85rem system-ui,sans-serif';
  note.textContent =
    'Test double active: the browser storage quota is simulated as exhausted after ' +
    [
      testing.simulateQuotaAfterBytes !== undefined ? `${testing.simulateQuotaAfterBytes} bytes of an import` : null,
      testing.simulateQuotaAfterSamples !== undefined ? `${testing.simulateQuotaAfterSamples} samples of a run` : null,
    ]
      .filter(Boolean)
      .join(' and ') +
    '. Remove the test-quota parameters from the address for normal use.';
  document.body.prepend(note);
}
