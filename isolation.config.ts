/**
 * Cross-origin isolation (docs/r-ves-timing.md): with these headers `performance.now()` keeps its
 * fine resolution (5 µs instead of 100 µs in Chromium) and SharedArrayBuffer exists (wllama's
 * threads). Everything the app loads is its own origin; engines' servers are reached with CORS,
 * which COEP allows. public/_headers says the same to hosts that read that file.
 */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};
