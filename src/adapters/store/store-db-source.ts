/** DbSource for runs in the browser: databases read from the store by the sha256 a run recorded. */
import type { DbSource } from '../../app/ports.ts';
import { readDatabaseBlob, readDatabaseBytes } from './database-bytes.ts';
import { StoreError } from '../../app/store-errors.ts';
import type { WorkbenchIdb } from './schema.ts';

/** `idb` may still be opening: the source waits for it on first use. */
export function storeDbSource(
  opened: WorkbenchIdb | Promise<WorkbenchIdb>,
  databases: Record<string, string>,
  datasetName: string,
): DbSource {
  return {
    async has(dbId) {
      const sha = databases[dbId];
      return sha !== undefined && (await (await opened).count('databases', sha)) > 0;
    },
    async load(dbId) {
      const idb = await opened;
      const sha = databases[dbId];
      const record = sha ? await idb.get('databases', sha) : undefined;
      if (!record)
        throw new StoreError(
          'NOT_FOUND',
          `database ${dbId} is no longer in browser storage: import dataset "${datasetName}" again`,
        );
      // Stored by their sha256 at import (content-addressed, never rewritten; the chunks' count and
      // size are checked on reading): the same sha256 the run's `databases` names, which the
      // verdict cache looks verdicts up under (run-service.ts, verdictCacheOf).
      return { bytes: await readDatabaseBytes(idb, record), sha256: record.sha256 };
    },
    async openPaged(dbId) {
      const idb = await opened;
      const sha = databases[dbId];
      const record = sha ? await idb.get('databases', sha) : undefined;
      if (!record)
        throw new StoreError(
          'NOT_FOUND',
          `database ${dbId} is no longer in browser storage: import dataset "${datasetName}" again`,
        );
      // The stored chunks as one Blob (nothing is read here): the worker reads its pages.
      const blob = await readDatabaseBlob(idb, record);
      return { ref: { kind: 'blob', blob, size: blob.size }, sha256: record.sha256 };
    },
    describe(dbId) {
      return databases[dbId]
        ? `${dbId} of dataset "${datasetName}" in browser storage, but it was deleted: import the dataset again`
        : `${dbId}/${dbId}.sqlite among the files of dataset "${datasetName}": it was not imported; import the dataset again with it`;
    },
  };
}

/** Ids of the databases (of a dataset or run's `databases`: id -> sha256) whose bytes are stored. */
export async function storedDbIds(idb: WorkbenchIdb, databases: Record<string, string>): Promise<Set<string>> {
  const stored = new Set<string>();
  for (const [dbId, sha] of Object.entries(databases)) if ((await idb.count('databases', sha)) > 0) stored.add(dbId);
  return stored;
}
