#!/usr/bin/env node
// `npm run cli`: the bundled CLI (dist-cli/cli.mjs, scripts/build-cli.mjs), rebuilt first when
// it is missing or a source is newer than it, so a fresh clone, an edited source and a checkout
// of another branch all run the current code without a compiler at every start. The `bin`
// entry of package.json is dist-cli/cli.mjs itself (built by `npm install`'s prepare script).
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist-cli');
const INPUTS = ['src/cli', 'src/core', 'src/adapters', 'workers', 'package-lock.json', 'scripts/build-cli.mjs'];

function newestMtime(p) {
  let st;
  try {
    st = statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs; // a deleted or renamed file changes its folder's time
  for (const e of readdirSync(p, { withFileTypes: true })) newest = Math.max(newest, newestMtime(path.join(p, e.name)));
  return newest;
}

function builtAt() {
  try {
    // Every file of the bundle is renamed into place before stamp.json.
    return Math.min(
      statSync(path.join(OUT, 'stamp.json')).mtimeMs,
      statSync(path.join(OUT, 'cli.mjs')).mtimeMs,
      statSync(path.join(OUT, 'sql.worker.mjs')).mtimeMs,
      statSync(path.join(OUT, 'sql-native.worker.mjs')).mtimeMs,
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
await import(pathToFileURL(path.join(OUT, 'cli.mjs')).href);
