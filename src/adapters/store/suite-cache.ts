/**
 * The app's test-suite cache (metric ts, docs/test-suite.md) in IndexedDB: a suite is kept
 * under the sha256 of its database file and the suite's settings, so a second run on the same
 * database, in this tab or after a reload, loads it instead of building it again; a missing
 * one is rebuilt from the seed. Suites of deleted databases stay until the site's data is cleared
 * (a few hundred KiB each).
 */
import type { SuiteCache, SuiteSpec } from '../../core/ts/suite.ts';
import type { WorkbenchIdb } from './schema.ts';

const keyOf = (sha256: string, s: SuiteSpec) =>
  `${sha256}/${s.seed}/${s.size}/${s.candidates}/${s.maxRows}/${s.sampleRows}`;

/** `databases`: the run's db_id -> sha256 of the stored file. */
export function idbSuiteCache(idb: WorkbenchIdb, databases: Readonly<Record<string, string>>): SuiteCache {
  return {
    async get(dbId, spec) {
      const sha = databases[dbId];
      if (!sha) return null;
      return (await idb.get('suites', keyOf(sha, spec)))?.suite ?? null;
    },
    async put(dbId, spec, suite) {
      const sha = databases[dbId];
      if (!sha) return;
      await idb.put('suites', { key: keyOf(sha, spec), suite, createdAt: new Date().toISOString() });
    },
  };
}
