/** Browser composition: the SQL worker as a module Web Worker, sql.js's wasm as a bundled asset. */
import { transfer, wrap } from 'comlink';
import wasmUrl from 'sql.js/dist/sql-wasm-browser.wasm?url';
import type { SqlWorkerApi } from '../../../workers/sql.api.ts';
import type { ReadOnlyQuery } from '../../core/prompt/omnisql-schema.ts';
import type { SchemaSource } from '../../core/prompt/schema-source.ts';
import type { SuiteCache } from '../../core/ts/suite.ts';
import { createSqlWorkerSchemaSource } from '../engines/sql-worker-schema-source.ts';
import { SqlPool, type WorkerHandle } from '../sql-pool.ts';
import type { DbSource } from '../../app/ports.ts';
import { sha256Of } from '../import/hash-stream.ts';
import { WorkbenchError } from '../../core/errors.ts';

/**
 * The pool's handle on a module worker that serves the SQL worker API; `exited` resolves with
 * the worker's error message, or `startFailure` when it has none.
 */
export function sqlWorkerHandle(worker: Worker, startFailure: string): WorkerHandle {
  const exited = new Promise<string>((resolve) => {
    worker.addEventListener('error', (e) => resolve(e.message || startFailure));
  });
  return { api: wrap<SqlWorkerApi>(worker), terminate: () => worker.terminate(), exited };
}

function spawnBrowserSqlWorker(): WorkerHandle {
  const worker = new Worker(new URL('../../../workers/sql.worker.ts', import.meta.url), {
    type: 'module',
    name: 'sql',
  });
  return sqlWorkerHandle(worker, 'the SQL worker failed to start');
}

/** Databases held as bytes in memory (the demo; tests). Each load hands out a copy. */
export function memoryDbSource(dbs: Map<string, Uint8Array>): DbSource {
  return {
    async has(dbId) {
      return dbs.has(dbId);
    },
    async load(dbId) {
      const bytes = dbs.get(dbId);
      if (!bytes)
        throw new WorkbenchError('NOT_FOUND', `database ${dbId} is not loaded: load it before its items are evaluated`);
      const copy = bytes.slice();
      // Hashed at each load: the map's bytes may be replaced under the same name.
      return { bytes: copy, sha256: (await sha256Of(copy)).sha256 };
    },
    describe: (dbId) => `a database named ${dbId} among the loaded databases (${[...dbs.keys()].join(', ') || 'none'})`,
  };
}

export function createBrowserSqlPool(
  dbSource: DbSource,
  size = Math.max(1, navigator.hardwareConcurrency || 2),
  suiteCache?: SuiteCache,
): SqlPool {
  return new SqlPool({
    spawn: spawnBrowserSqlWorker,
    dbSource,
    // The worker reads each stored database by pages from its Blob (DbSource.openPaged).
    paged: true,
    size,
    wasmUrl,
    wasmModule: compileSqlJs,
    ...(suiteCache ? { suiteCache } : {}),
  });
}

/**
 * sql.js's WebAssembly compiled once by the page and handed to each SQL worker of a pool
 * (WorkerInit.wasmModule): the workers share its machine code and the engine's optimisation
 * of it. Compiled from the response as it streams, as sql.js itself does, so the browser's
 * cache of compiled WebAssembly still applies; a response served without the WebAssembly type is
 * compiled from its bytes. A failure leaves each worker to fetch and compile its own, as before.
 */
async function compileSqlJs(): Promise<WebAssembly.Module> {
  const response = await fetch(wasmUrl);
  if (!response.ok) throw new WorkbenchError('FAILED', `sql.js's WebAssembly: HTTP ${response.status}`);
  if (response.headers.get('content-type')?.startsWith('application/wasm'))
    return WebAssembly.compileStreaming(response);
  return WebAssembly.compile(await response.arrayBuffer());
}

/** A schema source with the SQL worker it reads through; `dispose` ends the worker. */
export interface BrowserSchemaSource {
  source: SchemaSource;
  /** Read-only queries on the same worker (a preset's OmniSQL example values). */
  query: ReadOnlyQuery;
  dispose: () => void;
}

/**
 * A SQL worker of its own that reads schemas and sample rows (the prompts' SchemaSource) from
 * `dbSource`; `dispose` ends it.
 */
export async function openBrowserSchemaSource(dbSource: DbSource, cacheBytes: number): Promise<BrowserSchemaSource> {
  const worker = spawnBrowserSqlWorker();
  try {
    await worker.api.init({ cacheBytes, wasmUrl });
  } catch (err) {
    worker.terminate();
    throw err;
  }
  const source = createSqlWorkerSchemaSource({
    api: worker.api,
    dbSource,
    transferBytes: (b) => transfer(b, [b.buffer]),
  });
  return { source, query: (dbId, sql) => source.query(dbId, sql), dispose: () => worker.terminate() };
}
