// Builds the CLI ahead of time: src/cli/main.ts and the SQL workers (workers/sql.worker.ts, the
// native and the legacy one) are bundled by esbuild into dist-cli/ (cli.mjs, sql.worker.mjs, ...), with the packages left as
// imports of node_modules. Run by `npm install` (the `prepare` script) and by scripts/cli.mjs
// when a source is newer than the bundle. Plain JavaScript: it must run before anything is built.
// (Not dist/: `vite build` empties dist/ for the app.) The offline report's template
// (dist-cli/report.html, scripts/build-report.mjs) is built with it: the `report` command reads it.
import { build } from 'esbuild';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildReportTemplate } from './build-report.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = path.join(ROOT, 'dist-cli');
/** What the bundle is made of: a file newer than the bundle under these means it is stale. */
export const SOURCE_DIRS = ['src/cli', 'src/core', 'src/adapters', 'workers'].map((d) => path.join(ROOT, d));

export async function buildCli() {
  await mkdir(OUT_DIR, { recursive: true });
  // Built into a fresh folder beside the output, then each file renamed into place: two
  // processes that build at once (tests spawning the CLI) never see a half-written bundle.
  const temp = await mkdtemp(path.join(OUT_DIR, '.build-'));
  try {
    await build({
      absWorkingDir: ROOT,
      entryPoints: {
        cli: 'src/cli/main.ts',
        'sql.worker': 'workers/sql.worker.ts',
        'sql-native.worker': 'workers/sql-native.worker.ts',
        // sql.js 1.8.0 (SQLite 3.39.3): the version check's engine (docs/version-effects.md).
        'sql-legacy.worker': 'workers/sql-legacy.worker.ts',
      },
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
    });
    await writeFile(path.join(temp, 'stamp.json'), JSON.stringify({ built: new Date().toISOString() }) + '\n');
    for (const f of [
      'cli.mjs',
      'cli.mjs.map',
      'sql.worker.mjs',
      'sql.worker.mjs.map',
      'sql-native.worker.mjs',
      'sql-native.worker.mjs.map',
      'sql-legacy.worker.mjs',
      'sql-legacy.worker.mjs.map',
      'stamp.json',
    ]) {
      await rename(path.join(temp, f), path.join(OUT_DIR, f));
    }
  } finally {
    await rm(temp, { recursive: true, force: true });
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
