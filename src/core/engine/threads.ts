/**
 * How many threads the CPU engine (llama.cpp in WebAssembly) should use.
 *
 * - Threads need SharedArrayBuffer, so a page that is not cross-origin isolated (COOP/COEP
 *   headers) gets one thread whatever is asked.
 * - A tiny model runs faster on one thread: each token is too little work to pay for waking
 *   and synchronising a second thread (measured on the 2-core development machine with the
 *   260K-parameter stories260K model; see docs/engines.md).
 * - Otherwise half the logical cores (llama.cpp's own rule of thumb: one thread per physical
 *   core, and browsers report logical cores), at most 8, at least 1. The page, the SQL workers
 *   and the browser keep the rest.
 */
const TINY_MODEL_BYTES = 64 * 1024 * 1024;
const MAX_THREADS = 8;

export interface ThreadChoice {
  threads: number;
  reason: string;
}

export function chooseThreads(
  machine: { hardwareConcurrency: number; crossOriginIsolated: boolean },
  modelBytes: number,
): ThreadChoice {
  if (!machine.crossOriginIsolated) {
    return {
      threads: 1,
      reason: 'the page is not cross-origin isolated (COOP/COEP headers), so WebAssembly threads are unavailable',
    };
  }
  if (modelBytes > 0 && modelBytes < TINY_MODEL_BYTES) {
    return { threads: 1, reason: 'the model is tiny: one thread is faster than several' };
  }
  const cores = Math.max(1, Math.floor(machine.hardwareConcurrency || 1));
  const threads = Math.max(1, Math.min(MAX_THREADS, Math.floor(cores / 2)));
  return {
    threads,
    reason: `${threads} of ${cores} logical cores (one per physical core, the rest for the page and the SQL workers)`,
  };
}
