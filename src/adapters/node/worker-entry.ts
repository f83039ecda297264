/**
 * Where a Node worker thread's script is. Under tsx (tests, `npm run bench`) a worker cannot
 * start a TypeScript entry directly, so workers/node-bootstrap.mjs registers tsx in the thread
 * and imports the entry. In the CLI's bundle (scripts/build-cli.mjs defines __RLVR_BUNDLE__)
 * the worker is its own bundled file beside the CLI's (dist-cli/sql.worker.mjs), started as is:
 * no compiler is loaded in either thread.
 */
declare const __RLVR_BUNDLE__: boolean | undefined;

export const BUNDLED = typeof __RLVR_BUNDLE__ !== 'undefined' && __RLVR_BUNDLE__ === true;

export interface WorkerScript {
  url: URL;
  workerData: Record<string, unknown>;
}

/** The SQL worker (workers/sql.worker.ts). */
export function sqlWorkerScript(): WorkerScript {
  if (BUNDLED) return { url: new URL('./sql.worker.mjs', import.meta.url), workerData: {} };
  const entry = new URL('../../../workers/sql.worker.ts', import.meta.url);
  return { url: new URL('../../../workers/node-bootstrap.mjs', import.meta.url), workerData: { entry: entry.href } };
}
