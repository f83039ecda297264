/**
 * Debian's Chromium and the flags every browser test launches it with (playwright-core in
 * harness.ts, the vitest browser projects in vite.config.ts): no sandbox (containers), no GPU
 * process, and no traffic of Chromium's own (QUIC, background networking, updates, sync).
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
