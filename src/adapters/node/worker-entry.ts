/**
 * Where a Node worker thread's script is. Under tsx (tests, `npm run bench`) a worker cannot
 * start a TypeScript entry directly, so workers/node-bootstrap.mjs registers tsx in the thread
 * and imports the entry. In the CLI's bundle (scripts/build-cli.mjs defines __RLVR_BUNDLE__)
 * the worker is its own bundled file beside the CLI's (dist-cli/sql.worker.mjs), started as is:
 * no compiler is loaded in either thread.
 */
declare const __RLVR_BUNDLE__: boolean | undefined;

const BUNDLED = typeof __RLVR_BUNDLE__ !== 'undefined' && __RLVR_BUNDLE__ === true;

interface WorkerScript {
  url: URL;
  workerData: Record<string, unknown>;
}

/**
 * Which SQLite the SQL worker runs: sql.js (workers/sql.worker.ts), or `legacy`: sql.js 1.8.0,
 * SQLite 3.39.3 (workers/sql-legacy.worker.ts), which re-runs the version-sensitive items
 * (docs/version-effects.md).
 */
export type SqlEngineName = 'sql.js' | 'legacy';

const SCRIPT: Record<SqlEngineName, string> = {
  'sql.js': 'sql.worker',
  legacy: 'sql-legacy.worker',
};

/** The SQL worker's script. */
export function sqlWorkerScript(engine: SqlEngineName = 'sql.js'): WorkerScript {
  const name = SCRIPT[engine];
  if (BUNDLED) return { url: new URL(`./${name}.mjs`, import.meta.url), workerData: {} };
  const entry = new URL(`../../../workers/${name}.ts`, import.meta.url);
  return { url: new URL('../../../workers/node-bootstrap.mjs', import.meta.url), workerData: { entry: entry.href } };
}
