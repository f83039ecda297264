/**
 * The service worker and web app manifest (vite-plugin-pwa, Workbox generateSW): after one
 * visit the app shell, the worker bundles, sql.js's WebAssembly (and wllama's, once the app
 * bundles it), the demo and the example rubrics are in the precache, so the app loads,
 * opens stored datasets and runs, and evaluates with the network off.
 *
 * - Registration is ours (src/ui/app-update.svelte.ts, through `virtual:pwa-register`):
 *   `injectRegister: false`, since the CSP in index.html forbids an inline script.
 * - `registerType: 'prompt'`: a new version waits until the user accepts it in the banner (or
 *   every tab is closed); it is never forced into a tab that is evaluating a run. `clientsClaim`
 *   lets the first install control the page it was installed from (and the workers it starts).
 * - JavaScript above 2 MiB is left out of the precache: that is web-llm's library (about 6 MB),
 *   loaded only when the user picks the WebGPU engine, which needs model weights from the
 *   network or web-llm's own cache anyway. It is cached at its first use instead (CacheFirst:
 *   hashed file names never change content).
 */
import { VitePWA } from 'vite-plugin-pwa';

const MiB = 1024 * 1024;
/** wllama's single wasm is 10.2 MB; sql.js's is 0.7 MB. */
const MAX_PRECACHED_FILE = 16 * MiB;
const MAX_PRECACHED_JS = 2 * MiB;

export function pwaPlugin() {
  return VitePWA({
    injectRegister: false,
    registerType: 'prompt',
    manifestFilename: 'manifest.webmanifest',
    // The icons are in globPatterns already.
    includeManifestIcons: false,
    manifest: {
      name: 'Text-to-SQL evaluation workbench',
      short_name: 'SQL workbench',
      description:
        "Evaluate text-to-SQL predictions in the browser, scored like BIRD's official evaluator; works offline.",
      start_url: './',
      scope: './',
      display: 'standalone',
      background_color: '#f6f8fa',
      theme_color: '#20313f',
      icons: [
        { src: 'icons/icon.svg', sizes: 'any', type: 'image/svg+xml', purpose: 'any' },
        { src: 'icons/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
        { src: 'icons/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any' },
        { src: 'icons/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
      ],
    },
    workbox: {
      globPatterns: ['**/*.{html,js,css,wasm,svg,png,json,jsonl,sql,sqlite}'],
      maximumFileSizeToCacheInBytes: MAX_PRECACHED_FILE,
      manifestTransforms: [
        async (entries) => {
          const warnings: string[] = [];
          const manifest = entries.filter((e) => {
            const keep = !(e.url.endsWith('.js') && e.size > MAX_PRECACHED_JS);
            if (!keep)
              warnings.push(`${e.url} (${(e.size / MiB).toFixed(1)} MiB) is cached on first use, not precached`);
            return keep;
          });
          return { manifest, warnings };
        },
      ],
      runtimeCaching: [
        {
          urlPattern: ({ url, sameOrigin }) => sameOrigin && /\/assets\/[^/]+\.(?:js|wasm)$/.test(url.pathname),
          handler: 'CacheFirst',
          options: { cacheName: 'workbench-lazy-assets', expiration: { maxEntries: 16 } },
        },
      ],
      navigateFallback: 'index.html',
      // Only the app's own addresses get the app; a file opened in a tab (a demo file, sw.js) is served as itself.
      navigateFallbackDenylist: [/\/[^/]+\.[a-z0-9]+$/i],
      clientsClaim: true,
      skipWaiting: false,
      cleanupOutdatedCaches: true,
    },
  });
}
