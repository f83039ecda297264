/**
 * The Node host of the CLI (the ports of src/cli/node-host.ts) over the Node adapters. Built by
 * the CLI's composition root (src/cli/main.ts) and by tests that call a command's functions.
 * Modules that load large libraries (zip.js, hyparquet) are imported on the first call that
 * needs them, so a command that never reads such a file never loads them.
 */
import { createOpenAiEngine } from '../engines/openai-engine.ts';
import { createSqlWorkerSchemaSource } from '../engines/sql-worker-schema-source.ts';
import { FileJudgeCache } from '../judge/file-judge-cache.ts';
import { readParquetFileRecords } from '../parquet/node-file.ts';
import { writeParquetFile } from '../parquet/node-sink.ts';
import { productName, readReportTemplate, zlibGzip } from './report-files.ts';
import {
  createNodeSqlPool,
  dbFileSha256,
  folderDbSource,
  folderDescriptionFiles,
  spawnNodeSqlWorker,
  unsafeDbId,
} from './sql-worker-host.ts';
import { defaultCacheDir, openFileVerdictCache } from './verdict-cache-file.ts';

/** The schema of the databases under `dbRoot`, read by one SQL worker of its own (by pages, as the pools read them). */
async function openSchemaReader(dbRoot: string, options: { descriptions: boolean }) {
  const worker = spawnNodeSqlWorker();
  try {
    await worker.api.init({ cacheBytes: 256 * 1024 * 1024 });
  } catch (err) {
    worker.terminate();
    throw err;
  }
  const dbSource = folderDbSource(dbRoot);
  const source = createSqlWorkerSchemaSource({
    api: worker.api,
    // A folder's databases are always offered by pages (folderDbSource.openPaged): no bytes to transfer.
    dbSource,
    ...(options.descriptions ? { descriptionFiles: (dbId: string) => folderDescriptionFiles(dbRoot, dbId) } : {}),
  });
  return { source, query: source.query, dispose: () => worker.terminate() };
}

export function createNodeHost() {
  return {
    sql: {
      pool: (options: { dbRoot: string; workers: number; engine?: 'legacy' }) => createNodeSqlPool(options),
      folder: (dbRoot: string) => folderDbSource(dbRoot),
      openSchemaReader,
      dbFileSha256: (dbId: string, file: string) => dbFileSha256(dbId, file),
      unsafeDbId,
    },
    extractZipDatabases: async (zipFile: string, dir: string) =>
      (await import('./zip-databases.ts')).extractZipDatabases(zipFile, dir),
    verdictCache: {
      defaultDir: () => defaultCacheDir(),
      open: (dir: string, options: { warn: (msg: string) => void }) => openFileVerdictCache(dir, options),
    },
    parquet: { read: readParquetFileRecords, write: writeParquetFile },
    readSeriesDump: async (...args: Parameters<typeof import('../harness/series-dump.ts').readSeriesDump>) =>
      (await import('../harness/series-dump.ts')).readSeriesDump(...args),
    readHarnessFile: async (...args: Parameters<typeof import('../harness/read-harness.ts').readHarnessFile>) =>
      (await import('../harness/read-harness.ts')).readHarnessFile(...args),
    report: { productName, readTemplate: readReportTemplate, gzip: zlibGzip },
    openJudgeCache: (file: string) => FileJudgeCache.open(file),
    openAiEngine: createOpenAiEngine,
  };
}
