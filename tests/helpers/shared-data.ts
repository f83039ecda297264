import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is tests/helpers/shared-data.ts). */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const sharedRoot = resolve(repoRoot, '..', 'shared', 'data');

/**
 * Absolute path of a file under ../shared/data (real benchmark data, never copied into the repo).
 * Throws instead of letting a test skip silently when the data is not there.
 */
export function sharedData(...parts: string[]): string {
  const path = resolve(sharedRoot, ...parts);
  if (!existsSync(path)) {
    throw new Error(
      `../shared/data is missing: ${path} does not exist. Real-data tests read BIRD and Spider files from ${sharedRoot}.`,
    );
  }
  return path;
}

/** UTF-8 text of a file under ../shared/data. */
export function readSharedText(...parts: string[]): string {
  return readFileSync(sharedData(...parts), 'utf8');
}

/** The CLI's flags for BIRD mini-dev with the databases here: `--gold`, `--dataset`, `--db-root`. */
export function minidevFlags(): string[] {
  return [
    '--gold',
    sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
    '--dataset',
    sharedData('bird', 'minidev', 'mini_dev_sqlite.json'),
    '--db-root',
    sharedData('bird', 'databases'),
  ];
}
