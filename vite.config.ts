/// <reference types="vitest/config" />
import { fileURLToPath } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { playwright } from '@vitest/browser-playwright';
import { defineConfig, searchForWorkspaceRoot } from 'vite';
import { configDefaults } from 'vitest/config';
import { ISOLATION_HEADERS } from './isolation.config.ts';
import { pwaPlugin } from './pwa.config.ts';

/** Real benchmark data beside the repository (never copied into it); browser tests fetch it via /@fs/. */
const sharedDataDir = fileURLToPath(new URL('../shared/data', import.meta.url));


export default defineConfig({
  // The service worker only in builds (vite-plugin-pwa does nothing under the dev server and Vitest).
  plugins: [svelte(), pwaPlugin()],
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
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Worker pools and Chromium are heavy on a 2-core machine: keep files sequential-ish.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: ['tests/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'tests/**/*.browser.test.ts'],
          globalSetup: ['tests/browser/global-setup.ts'],
        },
      },
      {
        extends: true,
        // Pre-bundled up front: a dependency discovered mid-run would reload the test page.
        optimizeDeps: { include: ['idb', 'comlink', 'hash-wasm', '@zip.js/zip.js', 'sql.js'] },
        test: {
          name: 'browser',
          include: ['tests/**/*.browser.test.ts'],
          exclude: [...configDefaults.exclude, 'tests/engines/**'],
          provide: { sharedDataDir },
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({
              launchOptions: {
                executablePath: '/usr/bin/chromium',
                args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
              },
            }),
            instances: [{ browser: 'chromium' }],
          },
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
        // idb, hash-wasm and zip.js: the generation-run test imports a dataset through the store and its import worker.
        optimizeDeps: { include: ['comlink', 'comlink/dist/esm/node-adapter.mjs', 'sql.js', '@wllama/wllama', '@mlc-ai/web-llm', 'idb', 'hash-wasm', '@zip.js/zip.js'] },
        test: {
          name: 'browser-engines',
          include: ['tests/engines/**/*.browser.test.ts', 'tests/rubric/*.browser-engines.ts'],
          provide: { sharedDataDir },
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({
              launchOptions: {
                executablePath: '/usr/bin/chromium',
                args: [
                  '--no-sandbox',
                  '--disable-gpu',
                  '--disable-quic',
                  '--no-first-run',
                  '--disable-background-networking',
                  '--disable-component-update',
                  '--disable-sync',
                  '--enable-unsafe-webgpu',
                ],
              },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
});
