/**
 * `--db-root dev.zip`: BIRD's release zip read directly. Its databases are inflated into a
 * temporary folder in the `<db>/<db>.sqlite` layout the SQL workers read, within the bounds of
 * the app's zip import (the host's `extractZipDatabases`: src/adapters/node/zip-databases.ts).
 * The folder is this file's: deleted by `cleanup`, on SIGINT / SIGTERM and on exit.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkbenchError } from '../../core/errors.ts';
import type { NodeHost } from '../node-host.ts';
import { onTermination } from '../signal-cleanup.ts';

/** A folder for the SQL workers: `dbRoot` itself, or the databases of a zip inflated to a temporary folder. */
export async function resolveDbRoot(
  host: NodeHost,
  dbRoot: string,
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const st = await stat(dbRoot).catch(() => null);
  if (st?.isDirectory()) return { dir: dbRoot, cleanup: async () => undefined };
  if (!st?.isFile() || !/\.zip$/i.test(dbRoot)) {
    throw new WorkbenchError(
      'MISSING_FILE',
      `not a directory or a .zip: ${dbRoot} (expected <db-root>/<db_id>/<db_id>.sqlite, or a zip holding them such as BIRD's dev.zip)`,
      '--db-root',
    );
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'wb-db-root-'));
  // Ctrl-C while the zip inflates or the evaluation runs: the folder goes with the process.
  const release = onTermination(() => rmSync(dir, { recursive: true, force: true }));
  const cleanup = async () => {
    release();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await host.extractZipDatabases(dbRoot, dir);
    return { dir, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
