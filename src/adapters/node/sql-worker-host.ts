/** Node composition: the SQL worker in worker_threads, and database files from a folder. */
import { wrap } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { access, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SqlWorkerApi } from '../../../workers/sql.api.ts';
import { SqlPool, type DbSource, type WorkerHandle } from '../sql-pool.ts';

const workerUrl = new URL('../../../workers/sql.worker.ts', import.meta.url);
const bootstrapUrl = new URL('../../../workers/node-bootstrap.mjs', import.meta.url);

export function spawnNodeSqlWorker(): WorkerHandle {
  const worker = new Worker(bootstrapUrl, { workerData: { entry: workerUrl.href } });
  const exited = new Promise<string>((resolve) => {
    worker.once('error', (err) => resolve(err.message));
    worker.once('exit', (code) => resolve(`worker exited with code ${code}`));
  });
  return {
    api: wrap<SqlWorkerApi>(nodeEndpoint(worker)),
    terminate: () => void worker.terminate(),
    exited,
  };
}

/** BIRD's layout: the database of db_id is `<root>/<db_id>/<db_id>.sqlite`. */
export function folderDbSource(root: string): DbSource {
  const file = (dbId: string) => path.join(root, dbId, `${dbId}.sqlite`);
  return {
    async has(dbId) {
      return access(file(dbId)).then(() => true, () => false);
    },
    async load(dbId) {
      return new Uint8Array(await readFile(file(dbId)));
    },
    describe: file,
  };
}

export function createNodeSqlPool(options: { dbRoot: string; workers?: number; cacheBytes?: number }): SqlPool {
  return new SqlPool({
    spawn: spawnNodeSqlWorker,
    dbSource: folderDbSource(options.dbRoot),
    size: options.workers ?? availableParallelism(),
    cacheBytes: options.cacheBytes,
  });
}
