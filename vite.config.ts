// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- vitest's documented way to type the `test` key
/// <reference types="vitest/config" />
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { playwright } from '@vitest/browser-playwright';
import { defineConfig, searchForWorkspaceRoot, type Plugin } from 'vite';
import { configDefaults } from 'vitest/config';
import { ISOLATION_HEADERS } from './isolation.config.ts';
import { pwaPlugin } from './pwa.config.ts';
import { ensureReportTemplate } from './scripts/build-report.mjs';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './tests/browser/chromium-flags.ts';
import LongFilesFirstSequencer from './tests/helpers/long-files-first.ts';

/** Real benchmark data beside the repository (never copied into it); browser tests fetch it via /@fs/. */
const sharedDataDir = fileURLToPath(new URL('../shared/data', import.meta.url));

/** The sql.js the app is built with (its package.json is not among the package's exports). */
const sqlJsVersion = (
  JSON.parse(readFileSync(new URL('./node_modules/sql.js/package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * The offline report's template (scripts/build-report.mjs; docs/report.md) beside the app as
 * report-template.html, for its "Export report" buttons: built first when missing or stale,
 * emitted into the build (and so precached: export works offline), served by the dev server.
 */
function reportTemplatePlugin(): Plugin {
  const NAME = 'report-template.html';
  return {
    name: 'rlvr-report-template',
    async generateBundle() {
      this.emitFile({ type: 'asset', fileName: NAME, source: await readFile(await ensureReportTemplate(), 'utf8') });
    },
    configureServer(server) {
      server.middlewares.use(`/${NAME}`, (_req, res, next) => {
        ensureReportTemplate()
          .then((file) => readFile(file, 'utf8'))
          .then((html) => {
            res.setHeader('Content-Type', 'text/html; charset=utf-8');
            res.end(html);
          }, next);
      });
    },
  };
}

/** Vitest's browser mode in headless Chromium (Debian's, with the house flags and `extraArgs`). */
const headlessChromium = (...extraArgs: string[]) => ({
  enabled: true,
  headless: true,
  provider: playwright({ launchOptions: { executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, ...extraArgs] } }),
  instances: [{ browser: 'chromium' as const }],
});

/**
 * The node tests that need the built app or Chromium (the `node` project, with the build's global
 * setup); every other node test is in `unit`, the inner loop (`npm test`), or `data` (below).
 */
const CHROMIUM_NODE_TESTS = [
  'tests/browser/**/*.test.ts',
  'tests/scripts/gpu-check.test.ts',
  'tests/bench/bench-smoke.test.ts',
];

/**
 * The node tests on the real benchmark data at scale (whole mini-dev files, the 13 prediction
 * files as runs, series or test suites, a 2,000-sequence property run): the `data` project, which the
 * README's test command runs and `npm test` (`unit`, the inner loop) does not.
 */
const REAL_DATA_TESTS = [
  'tests/adapters/reuse-real-data.test.ts',
  'tests/adapters/sql-pool-isolation.test.ts',
  'tests/adapters/verdict-cache-property.test.ts',
  'tests/adapters/verdict-cache.test.ts',
  'tests/cli/eval-version-effects.test.ts',
  'tests/cli/probe.test.ts',
  'tests/cli/series.test.ts',
  'tests/cli/trainer-dumps.test.ts',
  'tests/core/formats/replay-episode.test.ts',
  'tests/core/run/version-effects.test.ts',
  'tests/core/ts/minidev-ts-1.test.ts',
  'tests/core/ts/minidev-ts-2.test.ts',
  'tests/workers/paged-file.test.ts',
];

/**
 * The default bound of a `unit`, `data`, `browser` or `browser-engines` test: one the load
 * cannot reach (tests that take seconds on a quiet machine passed 60 s when the 2 cores ran
 * other work at load 30); a hung test still ends. Tests that need more name their own.
 */
const NODE_TEST_TIMEOUT_MS = 600_000;

export default defineConfig({
  // The service worker only in builds (vite-plugin-pwa does nothing under the dev server and Vitest).
  plugins: [svelte(), pwaPlugin(), reportTemplatePlugin()],
  define: {
    __RLVR_PRODUCT__: JSON.stringify(`rlvr-workbench ${pkg.version}`),
    // The verdict cache's key names the engine and its version (src/ui/browser-store.ts).
    __SQLJS_VERSION__: JSON.stringify(sqlJsVersion),
  },
  // Relative base: the built app works from any folder and from file-less static hosts.
  base: './',
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
  server: {
    host: '127.0.0.1',
    fs: { allow: [searchForWorkspaceRoot(process.cwd()), sharedDataDir] },
  },
  // `npm start` serves the build cross-origin isolated (public/_headers does it on hosts that read it).
  preview: { host: '127.0.0.1', headers: ISOLATION_HEADERS },
  test: {
    // Every project's default: a bound no load reaches (a test that took 20 s on a quiet machine
    // passed 60 s at load 5 with the suite's other work); a hung test still ends. A test's own
    // waits (locators, polls) keep their shorter bounds.
    testTimeout: NODE_TEST_TIMEOUT_MS,
    hookTimeout: 120_000,
    // `expect.poll` waits up to 60 s for what a page or a worker shows after an action (Vitest's own
    // default, 1 s, is the machine's load as much as the product: a key press at load 12 took longer).
    expect: { poll: { timeout: 60_000 } },
    // Two files at a time on the 2-core machine. Three were tried: a whole run at load 9 (median)
    // passed in 1,438 s against 1,505 s at load 7.7 with two, but the next one pushed the journey's
    // import and replay past its 120 s bound; worker pools and Chromium are heavy here.
    maxWorkers: 2,
    // The longest files start first (tests/helpers/file-durations.json when vitest has no results
    // cache, as on a fresh clone), so that the workers end together.
    sequence: { sequencer: LongFilesFirstSequencer },
    projects: [
      {
        extends: true,
        // Unit, worker, pool and CLI tests: no browser, no build (`npm test`).
        test: {
          name: 'unit',
          environment: 'node',
          include: ['tests/**/*.test.ts'],
          exclude: [
            ...configDefaults.exclude,
            'tests/**/*.browser.test.ts',
            ...CHROMIUM_NODE_TESTS,
            ...REAL_DATA_TESTS,
          ],
          // One folder per run for references several files compare with (tests/helpers/eval-reference.ts).
          globalSetup: ['tests/helpers/suite-folder.ts'],
          testTimeout: NODE_TEST_TIMEOUT_MS,
          // The files share one module graph per worker: 15 % less CPU over the project (its files
          // leave no global state behind; each makes its own temporary folders and pools).
          isolate: false,
        },
      },
      {
        extends: true,
        // Real data at scale, no browser (`npm run test:all` runs it; `npx vitest run --project data` alone).
        test: {
          name: 'data',
          environment: 'node',
          include: REAL_DATA_TESTS,
          globalSetup: ['tests/helpers/suite-folder.ts'],
          testTimeout: NODE_TEST_TIMEOUT_MS,
        },
      },
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: CHROMIUM_NODE_TESTS,
          exclude: [...configDefaults.exclude, 'tests/**/*.browser.test.ts'],
          // The app's production build for the browser tests, once per run; one folder per run
          // for references several files build on (tests/helpers/series-reference.ts).
          globalSetup: ['tests/browser/global-setup.ts', 'tests/helpers/suite-folder.ts'],
        },
      },
      {
        extends: true,
        // A measurement, not a test: `npm run bench -- --only rves` (bench/rves.ts) runs it; the
        // README's test command does not (scripts/test-all.sh names the projects it runs).
        test: {
          name: 'rves-measure',
          environment: 'node',
          include: ['tests/browser/rves-agreement.measure.ts'],
          globalSetup: ['tests/browser/global-setup.ts'],
          fileParallelism: false,
        },
      },
      {
        extends: true,
        // Pre-bundled up front: a dependency discovered mid-run would reload the test page.
        optimizeDeps: {
          include: [
            'idb',
            'comlink',
            'comlink/dist/esm/node-adapter.mjs',
            'hash-wasm',
            '@zip.js/zip.js',
            'sql.js',
            'hyparquet',
            'hyparquet-writer',
          ],
        },
        test: {
          name: 'browser',
          include: ['tests/**/*.browser.test.ts'],
          exclude: [...configDefaults.exclude, 'tests/engines/**'],
          provide: { sharedDataDir },
          testTimeout: NODE_TEST_TIMEOUT_MS,
          browser: headlessChromium(),
        },
      },
      {
        extends: true,
        // The engines' tests need what the app's pages give them: cross-origin isolation
        // (wllama's threads need SharedArrayBuffer) and a WebGPU adapter (SwiftShader, via
        // --enable-unsafe-webgpu; no shader-f16).
        server: { headers: ISOLATION_HEADERS },
        // Its own pre-bundle cache, complete up front: a dependency discovered mid-run, or the
        // other browser project re-optimising a shared cache, would reload the test page.
        cacheDir: 'node_modules/.vite/browser-engines',
        // idb, hash-wasm and zip.js: the generation-run test imports a dataset through the store and
        // its import worker; hyparquet and hyparquet-writer: the import worker reads Parquet
        // questions (missing, vite found them mid-run and reloaded the page: the file ran again).
        optimizeDeps: {
          include: [
            'comlink',
            'comlink/dist/esm/node-adapter.mjs',
            'sql.js',
            '@wllama/wllama',
            '@mlc-ai/web-llm',
            'idb',
            'hash-wasm',
            '@zip.js/zip.js',
            'hyparquet',
            'hyparquet-writer',
          ],
        },
        test: {
          name: 'browser-engines',
          include: ['tests/engines/**/*.browser.test.ts', 'tests/rubric/*.browser-engines.ts'],
          provide: { sharedDataDir },
          // Real inference: a greedy generation on the 260K model passed 60 s at load 40.
          testTimeout: NODE_TEST_TIMEOUT_MS,
          browser: headlessChromium('--enable-unsafe-webgpu'),
        },
      },
    ],
  },
});
