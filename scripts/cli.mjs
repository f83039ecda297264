#!/usr/bin/env node
// `npm run cli`: the bundled CLI (dist-cli/cli.mjs, scripts/build-cli.mjs), rebuilt first when
// it is missing or a source is newer than it, so a fresh clone, an edited source and a checkout
// of another branch all run the current code without a compiler at every start. The `bin`
// entry of package.json is dist-cli/cli.mjs itself (built by `npm install`'s prepare script).
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureReportTemplate, newestMtime } from './build-report.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist-cli');
const INPUTS = [
  'src/cli',
  'src/core',
  'src/app',
  'src/adapters',
  'workers',
  'package-lock.json',
  'scripts/build-cli.mjs',
];

function builtAt() {
  try {
    // Every file of the bundle is renamed into place before stamp.json.
    return Math.min(
      statSync(path.join(OUT, 'stamp.json')).mtimeMs,
      statSync(path.join(OUT, 'cli.mjs')).mtimeMs,
      statSync(path.join(OUT, 'sql.worker.mjs')).mtimeMs,
      statSync(path.join(OUT, 'sql-legacy.worker.mjs')).mtimeMs,
    );
  } catch {
    return -1;
  }
}

const built = builtAt();
if (built < 0 || INPUTS.some((p) => newestMtime(path.join(ROOT, p)) > built)) {
  const { buildCli } = await import('./build-cli.mjs');
  await buildCli();
}
// The offline report's template (a vite build of the app's screens, ~10 s): rebuilt only for the
// command that reads it, when a source is newer (scripts/build-report.mjs).
if (process.argv[2] === 'report') await ensureReportTemplate();
await import(pathToFileURL(path.join(OUT, 'cli.mjs')).href);
