// Builds the CLI ahead of time: src/cli/main.ts (split: cli.mjs and its chunks) and the SQL
// workers (workers/sql.worker.ts, and workers/sql-legacy.worker.ts: sql.js 1.8.0 for the version check) are bundled by esbuild into
// dist-cli/, with sql.js, sql.js-1.8 and better-sqlite3 (a native module) left as imports of node_modules. Run by `npm install`
// (the `prepare` script) and by scripts/cli.mjs when a source is newer than the bundle. Plain JavaScript: it must run before anything is built.
// (Not dist/: `vite build` empties dist/ for the app.) The offline report's template
// (dist-cli/report.html, scripts/build-report.mjs) is built with it: the `report` command reads it.
import { build } from 'esbuild';
import { mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildReportTemplate } from './build-report.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = path.join(ROOT, 'dist-cli');
/** What the bundle is made of: a file newer than the bundle under these means it is stale. */
export const SOURCE_DIRS = ['src/cli', 'src/core', 'src/adapters', 'workers'].map((d) => path.join(ROOT, d));

/** A chunk's file name (esbuild's content hash: 8 characters of A-Z and 2-7). */
const CHUNK = /^[\w-]+-[A-Z2-7]{8}\.mjs(\.map)?$/;
/** Chunks of an earlier build that the current one no longer names are removed after this long. */
const STALE_CHUNK_MS = 24 * 3600 * 1000;

export async function buildCli() {
  await mkdir(OUT_DIR, { recursive: true });
  // Built into a fresh folder beside the output, then each file renamed into place: two
  // processes that build at once (tests spawning the CLI) never see a half-written bundle.
  const temp = await mkdtemp(path.join(OUT_DIR, '.build-'));
  const common = {
    absWorkingDir: ROOT,
    outdir: temp,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['sql.js', 'sql.js-1.8', 'better-sqlite3'],
    // src/adapters/node/worker-entry.ts: the bundle starts dist-cli/sql.worker.mjs directly.
    define: { __RLVR_BUNDLE__: 'true' },
    sourcemap: 'linked',
    logLevel: 'warning',
    legalComments: 'none',
    metafile: true,
  };
  try {
    // The CLI is split: cli.mjs holds the command table and the usage texts; each command (a
    // dynamic import in src/cli/main.ts) and each module loaded on demand (Parquet, zips) is a
    // chunk with the code it shares with others, so `--help` and each command parse and run
    // only what they use. Chunk names end with a hash of their content (`eval-XXXXXXXX.mjs`,
    // `chunk-XXXXXXXX.mjs`); they sit beside cli.mjs, so that a URL relative to the module
    // (the workers' scripts, src/adapters/node/worker-entry.ts) is the same in any chunk.
    const cli = await build({
      ...common,
      entryPoints: { cli: 'src/cli/main.ts' },
      splitting: true,
      chunkNames: '[name]-[hash]',
    });
    // The workers stay one file each (a worker loads its whole engine anyway).
    const workers = await build({
      ...common,
      entryPoints: {
        'sql.worker': 'workers/sql.worker.ts',
        // sql.js 1.8.0 (SQLite 3.39.3): the version check's engine (docs/version-effects.md).
        'sql-legacy.worker': 'workers/sql-legacy.worker.ts',
      },
    });
    await writeFile(path.join(temp, 'stamp.json'), JSON.stringify({ built: new Date().toISOString() }) + '\n');
    const outputs = [cli, workers]
      .flatMap((r) => Object.keys(r.metafile.outputs))
      .map((f) => path.relative(temp, path.resolve(ROOT, f)));
    const chunks = outputs.filter((f) => CHUNK.test(f));
    // Chunks first (a chunk's name is its content: one already there is the same file), then
    // the entries, then the stamp: whoever sees the new stamp sees every file it names.
    for (const f of [...chunks, ...outputs.filter((f) => !chunks.includes(f)), 'stamp.json'])
      await rename(path.join(temp, f), path.join(OUT_DIR, f));
    await removeStaleChunks(new Set(chunks));
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/**
 * Chunks that this build does not name and that are older than a day: a CLI started from an
 * earlier build may still import one of its chunks (a module loaded on demand), so recent
 * ones are left alone.
 */
async function removeStaleChunks(current) {
  const now = Date.now();
  for (const name of await readdir(OUT_DIR)) {
    if (!CHUNK.test(name) || current.has(name)) continue;
    const file = path.join(OUT_DIR, name);
    const st = await stat(file).catch(() => null);
    if (st && now - st.mtimeMs > STALE_CHUNK_MS) await rm(file, { force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const t0 = performance.now();
  await buildCli();
  const t1 = performance.now();
  process.stderr.write(`built ${path.relative(ROOT, OUT_DIR)}/cli.mjs in ${Math.round(t1 - t0)} ms\n`);
  await buildReportTemplate();
  process.stderr.write(
    `built ${path.relative(ROOT, OUT_DIR)}/report.html (the offline report's template) in ${Math.round(performance.now() - t1)} ms\n`,
  );
}
